/* timeline.c - the reader of `<raw profile>.timeline` files
 * (docs/timeline-format.md) into an mp_timeline (timeline.h).
 *
 * Every varint, count and sum is checked against the bytes really there
 * before anything is allocated for it, and a refusal names the file and the
 * offset of the first wrong byte.  A refused timeline leaves *out empty: the
 * raw profile beside it is read by other code and never depends on this.
 */
#include "timeline.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/io.h"
#include "common/varfile.h"

static const uint8_t tl_magic[8] = {'M', 'P', 'T', 'L', 'I', 'N', 'E', '\n'};

/* A context list (section 4) whose sums are returned in *bytes, *blocks;
 * `max` bounds its count. */
static int tl_list(mp_varfile *r, const char *sec, uint64_t max, mp_timeline_live **out,
                   size_t *n_out, uint64_t *bytes, uint64_t *blocks) {
  char what[96];
  size_t at = r->at;
  uint64_t n;
  snprintf(what, sizeof what, "%s: context count", sec);
  if (mp_varfile_uv(r, what, &n))
    return -1;
  if (n > (r->len - r->at) / 3)
    return mp_varfile_fail(r, at, "%s: %" PRIu64 " contexts cannot fit in the %zu bytes left",
                   sec, n, r->len - r->at);
  if (n > max)
    return mp_varfile_fail(r, at, "%s: %" PRIu64 " contexts, more than TopN %" PRIu64, sec,
                   n, max);
  mp_timeline_live *v = n ? mp_xcalloc((size_t)n, sizeof *v) : NULL;
  *out = v;
  *n_out = (size_t)n;
  *bytes = *blocks = 0;
  uint64_t id = 0;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t d;
    at = r->at;
    snprintf(what, sizeof what, "%s: context %" PRIu64, sec, i);
    if (mp_varfile_uv(r, what, &d))
      return -1;
    if (i > 0 && d == 0)
      return mp_varfile_fail(r, at, "%s: id delta 0 (ids must increase)", what);
    if (id + d < id)
      return mp_varfile_fail(r, at, "%s: stack id overflows 64 bits", what);
    id += d;
    v[i].stack_id = id;
    if (mp_varfile_uv(r, what, &v[i].bytes))
      return -1;
    at = r->at;
    if (mp_varfile_uv(r, what, &v[i].blocks))
      return -1;
    if (v[i].blocks == 0)
      return mp_varfile_fail(r, at, "%s (stack id %" PRIu64 "): 0 blocks", what, id);
    if (mp_varfile_add(r, at, "live bytes sum", bytes, v[i].bytes) ||
        mp_varfile_add(r, at, "live blocks sum", blocks, v[i].blocks))
      return -1;
  }
  return 0;
}

/* A complete snapshot's list must sum to its totals, and its blocks were
 * allocations first. */
static int tl_snapshot(mp_varfile *r, const mp_timeline *t, const char *sec,
                       uint64_t tot_bytes, uint64_t tot_blocks, mp_timeline_live **out,
                       size_t *n) {
  size_t at = r->at;
  if (tot_blocks > t->total_allocs)
    return mp_varfile_fail(r, at, "%s: %" PRIu64 " blocks, more than the %" PRIu64
                                  " allocations TotalAllocs counts",
                           sec, tot_blocks, t->total_allocs);
  uint64_t bytes, blocks;
  if (tl_list(r, sec, UINT64_MAX, out, n, &bytes, &blocks))
    return -1;
  if (bytes != tot_bytes || blocks != tot_blocks)
    return mp_varfile_fail(r, at,
                   "%s: contexts sum to %" PRIu64 " bytes in %" PRIu64
                   " blocks, the section says %" PRIu64 " in %" PRIu64,
                   sec, bytes, blocks, tot_bytes, tot_blocks);
  return 0;
}

/* StartMs (zigzag: 2v for v >= 0, -2v - 1 below) and StartFrom. */
static int tl_start(mp_varfile *r, mp_timeline *t) {
  size_t at = r->at;
  uint64_t z;
  if (mp_varfile_uv(r, "StartMs", &z))
    return -1;
  t->start_ms = (int64_t)(z >> 1) ^ -(int64_t)(z & 1);
  if (t->start_ms > 0 && (uint64_t)t->start_ms > t->end_ms)
    return mp_varfile_fail(r, at, "StartMs %" PRId64 " is after EndMs %" PRIu64, t->start_ms,
                           t->end_ms);
  at = r->at;
  if (mp_varfile_uv(r, "StartFrom", &t->start_from))
    return -1;
  if (t->start_from != MP_TIMELINE_START_KERNEL && t->start_from != MP_TIMELINE_START_RUNTIME)
    return mp_varfile_fail(r, at, "StartFrom %" PRIu64 " (known: 1, 2)", t->start_from);
  return 0;
}

static int tl_header(mp_varfile *r, mp_timeline *t) {
  if (r->len < sizeof tl_magic)
    return mp_varfile_fail(r, 0, "file of %zu bytes is shorter than the 8-byte magic", r->len);
  if (memcmp(r->p, tl_magic, sizeof tl_magic))
    return mp_varfile_fail(r, 0, "not a memprof timeline (bad magic)");
  r->at = sizeof tl_magic;
  uint64_t version, flags;
  size_t at = r->at;
  if (mp_varfile_uv(r, "Version", &version))
    return -1;
  if (version != 2)
    return mp_varfile_fail(r, at, "version %" PRIu64 " (supported: 2)", version);
  at = r->at;
  if (mp_varfile_uv(r, "Flags", &flags))
    return -1;
  if (flags)
    return mp_varfile_fail(r, at, "unknown flags 0x%" PRIx64, flags);
  if (mp_varfile_uv(r, "Pid", &t->pid))
    return -1;
  t->raw_bytes_at = r->at;
  if (mp_varfile_uv(r, "RawBytes", &t->raw_bytes) || mp_varfile_uv(r, "IntervalMs", &t->interval_ms) ||
      mp_varfile_uv(r, "EndMs", &t->end_ms) || mp_varfile_uv(r, "TopN", &t->top_n) ||
      mp_varfile_uv(r, "TotalAllocs", &t->total_allocs))
    return -1;
  return tl_start(r, t);
}

static int tl_peak_exit(mp_varfile *r, mp_timeline *t) {
  size_t at = r->at;
  if (mp_varfile_uv(r, "PeakMs", &t->peak_t_ms))
    return -1;
  if (t->peak_t_ms > t->end_ms)
    return mp_varfile_fail(r, at, "PeakMs %" PRIu64 " is after EndMs %" PRIu64, t->peak_t_ms,
                   t->end_ms);
  if (mp_varfile_uv(r, "PeakBytes", &t->peak_bytes) || mp_varfile_uv(r, "PeakBlocks", &t->peak_blocks) ||
      tl_snapshot(r, t, "peak", t->peak_bytes, t->peak_blocks, &t->at_peak, &t->n_at_peak))
    return -1;
  at = r->at;
  if (mp_varfile_uv(r, "ExitBytes", &t->exit_bytes))
    return -1;
  if (t->exit_bytes > t->peak_bytes)
    return mp_varfile_fail(r, at, "ExitBytes %" PRIu64 " exceeds PeakBytes %" PRIu64,
                   t->exit_bytes, t->peak_bytes);
  return mp_varfile_uv(r, "ExitBlocks", &t->exit_blocks) ||
                 tl_snapshot(r, t, "exit", t->exit_bytes, t->exit_blocks, &t->at_exit,
                             &t->n_at_exit)
             ? -1
             : 0;
}

/* *allocs: the allocations of the censuses so far, this one's added. */
static int tl_census(mp_varfile *r, const mp_timeline *t, mp_timeline_census *c, uint64_t *time,
                     uint64_t *allocs, uint64_t i) {
  char sec[48];
  snprintf(sec, sizeof sec, "census %" PRIu64, i);
  size_t at = r->at;
  uint64_t d;
  if (mp_varfile_uv(r, sec, &d))
    return -1;
  if (*time + d < *time || *time + d > t->end_ms)
    return mp_varfile_fail(r, at, "%s: time %" PRIu64 " + %" PRIu64 " is after EndMs %" PRIu64,
                   sec, *time, d, t->end_ms);
  *time += d;
  c->t_ms = *time;
  at = r->at;
  if (mp_varfile_uv(r, sec, &c->allocs))
    return -1;
  if (*allocs + c->allocs < *allocs || *allocs + c->allocs > t->total_allocs)
    return mp_varfile_fail(r, at, "%s: %" PRIu64 " + %" PRIu64 " allocations exceed "
                                  "TotalAllocs %" PRIu64,
                           sec, *allocs, c->allocs, t->total_allocs);
  *allocs += c->allocs;
  if (mp_varfile_uv(r, sec, &c->live_bytes))
    return -1;
  at = r->at;
  if (mp_varfile_uv(r, sec, &c->live_blocks))
    return -1;
  if (c->live_blocks > *allocs)
    return mp_varfile_fail(r, at, "%s: %" PRIu64 " live blocks, more than the %" PRIu64
                                  " allocations so far",
                           sec, c->live_blocks, *allocs);
  if (mp_varfile_uv(r, sec, &c->other_bytes))
    return -1;
  at = r->at;
  uint64_t bytes, blocks;
  if (tl_list(r, sec, t->top_n, &c->ctx, &c->n_ctx, &bytes, &blocks))
    return -1;
  if (mp_varfile_add(r, at, "census bytes sum", &bytes, c->other_bytes))
    return -1;
  if (bytes != c->live_bytes)
    return mp_varfile_fail(r, at,
                   "%s: contexts and OtherBytes sum to %" PRIu64
                   " bytes, LiveBytes says %" PRIu64,
                   sec, bytes, c->live_bytes);
  if (blocks > c->live_blocks)
    return mp_varfile_fail(r, at, "%s: contexts hold %" PRIu64 " blocks, LiveBlocks says %" PRIu64,
                   sec, blocks, c->live_blocks);
  return 0;
}

static int tl_censuses(mp_varfile *r, mp_timeline *t) {
  size_t at = r->at;
  uint64_t n;
  if (mp_varfile_uv(r, "CensusCount", &n))
    return -1;
  if (n && !t->interval_ms)
    return mp_varfile_fail(r, at, "%" PRIu64 " censuses but IntervalMs is 0", n);
  /* A census is at least 6 varints of one byte. */
  if (n > (r->len - r->at) / 6)
    return mp_varfile_fail(r, at, "%" PRIu64 " censuses cannot fit in the %zu bytes left", n,
                   r->len - r->at);
  t->census = n ? mp_xcalloc((size_t)n, sizeof *t->census) : NULL;
  uint64_t time = 0, allocs = 0;
  for (uint64_t i = 0; i < n; i++) {
    t->n_census = (size_t)i + 1; /* freed with t on failure */
    if (tl_census(r, t, &t->census[i], &time, &allocs, i))
      return -1;
  }
  if (n && allocs != t->total_allocs)
    return mp_varfile_fail(r, at, "the censuses count %" PRIu64
                                     " allocations, TotalAllocs %" PRIu64,
                           allocs, t->total_allocs);
  return 0;
}

int mp_timeline_parse(const char *name, const uint8_t *data, size_t len,
                      mp_timeline *out, mp_err *err) {
  memset(out, 0, sizeof *out);
  mp_varfile r = {name, "timeline", data, len, 0, err};
  if (tl_header(&r, out) || tl_peak_exit(&r, out) || tl_censuses(&r, out) ||
      (r.at != len &&
       mp_varfile_fail(&r, r.at, "%zu bytes after the last census", len - r.at))) {
    mp_timeline_free(out);
    return -1;
  }
  return 0;
}

int mp_timeline_read(const char *path, mp_timeline *out, mp_err *err) {
  mp_file f;
  memset(out, 0, sizeof *out);
  if (mp_file_open(&f, path, err)) {
    mp_err_prefix(err, path);
    return -1;
  }
  int rc = mp_timeline_parse(path, f.data, f.size, out, err);
  mp_file_close(&f);
  return rc;
}

int mp_is_timeline(const void *data, size_t len) {
  return len >= sizeof tl_magic && memcmp(data, tl_magic, sizeof tl_magic) == 0;
}

char *mp_timeline_path_for(const char *raw_path) { return mp_path_beside(raw_path, ".timeline"); }

int mp_timeline_match(const mp_timeline *t, const char *name, uint64_t raw_size,
                      mp_err *err) {
  if (!t->raw_bytes || t->raw_bytes == raw_size)
    return 0;
  return mp_fail(err,
                 "%s: timeline at offset 0x%zx: written for a raw profile of %" PRIu64
                 " bytes, the raw profile beside it has %" PRIu64,
                 name, t->raw_bytes_at, t->raw_bytes, raw_size);
}

void mp_timeline_free(mp_timeline *t) {
  if (!t)
    return;
  free(t->at_peak);
  free(t->at_exit);
  for (size_t i = 0; i < t->n_census; i++)
    free(t->census[i].ctx);
  free(t->census);
  memset(t, 0, sizeof *t);
}
