/* hcsites.h - the call-site file libmemprof-hotcold writes at exit with
 * MEMPROF_HOTCOLD_OPTIONS=site_file=PATH (docs/hotcold.md, "The call-site
 * file"), read into memory and checked: a file that is truncated, of
 * another kind or version, or whose counts do not add up is refused.
 */
#ifndef PROFDATA_HCSITES_H
#define PROFDATA_HCSITES_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define MP_HCS_VERSION 1

typedef struct mp_hcs_module {
  char *path;
  uint8_t build_id[64];
  size_t build_id_len;
} mp_hcs_module;

/* One hinted call site: `address` is the link-time address its operator
 * new call returns to, in module `module`. */
typedef struct mp_hcs_site {
  uint32_t module;
  uint64_t address;
  unsigned hint;
  uint64_t cold_allocs, cold_bytes, other_allocs, other_bytes;
  /* with lifetimes: blocks freed, blocks live at exit (measured then),
   * and the lifetimes of both, in nanoseconds */
  uint64_t freed, live, lt_total_ns, lt_min_ns, lt_max_ns;
} mp_hcs_site;

typedef struct mp_hcs {
  uint64_t pid;
  int lifetimes;
  mp_hcs_module *modules;
  size_t n_modules;
  mp_hcs_site *sites;
  size_t n_sites;
  uint64_t dropped_allocs, dropped_bytes;
} mp_hcs;

/* Read and check the file at path (or the len bytes at text, `name` in
 * messages).  0, or -1 with what is wrong in err, naming the line. */
int mp_hcs_read(const char *path, mp_hcs *out, mp_err *err);
int mp_hcs_parse(const char *name, const char *text, size_t len, mp_hcs *out,
                 mp_err *err);
void mp_hcs_free(mp_hcs *h);

#endif
