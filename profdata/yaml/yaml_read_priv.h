/* yaml_read_priv.h - the event cursor that the YAML reader's files share
 * (yaml_read.c: records and the document; yaml_read_dap.c: data-access
 * profiles; yaml_cursor.c: events, keys and scalars).  Private to
 * profdata/yaml/.  Every function returns 0, or -1 after filling the
 * reader's mp_err with a "line:column: " message; each consumes what it
 * read, leaving the next event current.
 */
#ifndef MEMPROF_YAML_READ_PRIV_H
#define MEMPROF_YAML_READ_PRIV_H

#include <stddef.h>
#include <stdint.h>
#include <yaml.h>

#include "yaml_io.h"

typedef struct pending_alloc {
  uint32_t stack;
  mpf_mib mib;
} pending_alloc;

typedef struct pending_call {
  uint32_t stack;
  size_t callee_off;
  uint32_t n_callees;
} pending_call;

typedef struct pending_loc {
  uint32_t file; /* model string id */
  uint32_t line;
} pending_loc;

typedef struct yreader {
  yaml_parser_t parser;
  yaml_event_t ev; /* the next unconsumed event */
  int has_ev;
  mp_profile *p;
  mp_err *err;
  /* scratch of the record being read, committed when its mapping closes
   * (GUID may come after the sites) */
  pending_alloc *allocs;
  size_t n_allocs, cap_allocs;
  pending_call *calls;
  size_t n_calls, cap_calls;
  uint64_t *callees;
  size_t n_callees, cap_callees;
  uint32_t *frames; /* the stack being read */
  size_t n_frames, cap_frames;
  pending_loc *locs; /* the data-access record being read */
  size_t n_locs, cap_locs;
  uint32_t *cold; /* known-cold symbols, added after the records */
  size_t n_cold, cap_cold;
} yreader;

int yr_fail_at(yreader *r, yaml_mark_t m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int yr_parser_error(yreader *r);
/* Consume the current event and parse the next one. */
int yr_next(yreader *r);
yaml_mark_t yr_here(const yreader *r);
const char *yr_scalar_text(const yreader *r);
size_t yr_scalar_len(const yreader *r);
int yr_is_empty_node(const yreader *r);
const char *yr_kind_name(const yreader *r);
int yr_begin_seq(yreader *r, const char *what, int *empty);
int yr_begin_map(yreader *r, const char *what, int allow_empty, int *empty);
int yr_map_key(yreader *r, const char *what, const char *const *names,
               size_t n_names, uint64_t *seen, size_t *idx);
int yr_check_required(yreader *r, yaml_mark_t m, const char *what,
                      const char *const *names, uint64_t required,
                      uint64_t seen);
int yr_expect_scalar(yreader *r, const char *what);
int yr_read_guid(yreader *r, const char *what, uint64_t *out);
int yr_read_uint(yreader *r, const char *what, uint64_t max, uint64_t *out);
int yr_read_bool(yreader *r, const char *what, int *out);
/* A sequence (null = empty) of items, each read by read_one. */
int yr_read_site_list(yreader *r, const char *what,
                      int (*read_one)(yreader *));

/* yaml_read_dap.c: the document's DataAccessProfiles mapping. */
int yr_read_data_access(yreader *r);

#endif
