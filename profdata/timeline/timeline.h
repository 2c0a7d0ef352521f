/* timeline.h - a process's memory over time: the `<profile>.timeline` file
 * the runtime writes beside its raw profile (MEMPROF_OPTIONS=timeline=1),
 * read into memory (docs/timeline-format.md).
 *
 * Contexts are named by the raw profile's stack ids, so a report joins a
 * timeline to the contexts of the raw profile it sits beside.  Every list
 * below is owned by the mp_timeline and freed by mp_timeline_free.
 */
#ifndef PROFDATA_TIMELINE_H
#define PROFDATA_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* Live bytes and blocks of one context at one moment. */
typedef struct mp_timeline_live {
  uint64_t stack_id; /* the raw profile's stack id */
  uint64_t bytes;
  uint64_t blocks;
} mp_timeline_live;

/* One census: the whole heap and the contexts that mattered at time t. */
typedef struct mp_timeline_census {
  uint64_t t_ms;        /* the raw profile's clock (docs/timeline-format.md) */
  uint64_t allocs;      /* allocations since the census before (the first:
                           since the runtime started counting) */
  uint64_t live_bytes;  /* the whole heap */
  uint64_t live_blocks;
  mp_timeline_live *ctx;      /* the contexts recorded at this census */
  size_t n_ctx;
  uint64_t other_bytes; /* live bytes of the contexts not listed */
} mp_timeline_census;

/* Where StartMs comes from (docs/timeline-format.md, section 3). */
enum { MP_TIMELINE_START_KERNEL = 1, MP_TIMELINE_START_RUNTIME = 2 };

typedef struct mp_timeline {
  uint64_t pid;
  uint64_t interval_ms; /* between censuses; 0 when none were taken */
  uint64_t end_ms;      /* when the file was written */
  /* Added after the first version of this header (fields only): */
  uint64_t raw_bytes;   /* size of the raw profile it was written with; 0 unknown */
  size_t raw_bytes_at;  /* file offset of that field, for messages */
  uint64_t top_n;       /* the most contexts a census lists */
  uint64_t total_allocs; /* allocations counted: the censuses' allocs sum
                            to it when there are censuses */
  int64_t start_ms;     /* the process's start on the same clock (may be
                           below 0: in the second before the clock's) */
  uint64_t start_from;  /* MP_TIMELINE_START_* */

  /* Live-at-peak (DHAT's t-gmax): the moment the live heap was largest. */
  uint64_t peak_t_ms;
  uint64_t peak_bytes;
  uint64_t peak_blocks;
  mp_timeline_live *at_peak; /* per context, at that moment */
  size_t n_at_peak;

  /* Live-at-exit: blocks never freed when the file was written. */
  uint64_t exit_bytes;
  uint64_t exit_blocks;
  mp_timeline_live *at_exit;
  size_t n_at_exit;

  mp_timeline_census *census; /* in time order */
  size_t n_census;
} mp_timeline;

/* Parses a whole timeline file held in memory; `name` appears in messages
 * (which name the file and the offset of the first bad byte).  Returns 0,
 * or -1 with *err set and *out left empty. */
int mp_timeline_parse(const char *name, const uint8_t *data, size_t len,
                      mp_timeline *out, mp_err *err);

/* Reads and parses the file at path. */
int mp_timeline_read(const char *path, mp_timeline *out, mp_err *err);

/* 1 if the bytes start like a timeline file (its magic). */
int mp_is_timeline(const void *data, size_t len);

/* The timeline file that belongs beside a raw profile: "<raw path>.timeline".
 * Returns a malloc'd path (the caller frees it). */
char *mp_timeline_path_for(const char *raw_path);

/* Refuses (-1, *err naming `name` and the offset of RawBytes) a timeline
 * written for a raw profile of another size than raw_size; 0 if it matches
 * or its RawBytes is 0 (unknown). */
int mp_timeline_match(const mp_timeline *t, const char *name, uint64_t raw_size,
                      mp_err *err);

void mp_timeline_free(mp_timeline *t);

#endif
