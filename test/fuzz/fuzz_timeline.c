/* fuzz_timeline.c - libFuzzer target for the timeline reader
 * (mp_timeline_parse, docs/timeline-format.md).
 *
 * An accepted file must hold what the format promises (the checks below
 * restate them on the parsed form, so a reader that lets a broken file
 * through aborts); a refused one must say why, naming the file and an
 * offset inside it. */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profdata/timeline/timeline.h"

static void die(const char *what) {
  fprintf(stderr, "fuzz invariant broken: %s\n", what);
  abort();
}

/* Ids strictly increasing, every entry with a block; returns the sums. */
static void check_list(const mp_timeline_live *v, size_t n, uint64_t *bytes, uint64_t *blocks) {
  *bytes = *blocks = 0;
  for (size_t i = 0; i < n; i++) {
    if (i && v[i].stack_id <= v[i - 1].stack_id)
      die("context ids not increasing");
    if (!v[i].blocks)
      die("context with 0 blocks");
    *bytes += v[i].bytes;
    *blocks += v[i].blocks;
  }
}

static void check_accepted(const mp_timeline *t) {
  uint64_t b, k;
  check_list(t->at_peak, t->n_at_peak, &b, &k);
  if (b != t->peak_bytes || k != t->peak_blocks)
    die("peak list does not sum to the peak");
  check_list(t->at_exit, t->n_at_exit, &b, &k);
  if (b != t->exit_bytes || k != t->exit_blocks)
    die("exit list does not sum to the exit totals");
  if (t->exit_bytes > t->peak_bytes || t->peak_t_ms > t->end_ms)
    die("exit above the peak, or the peak after the end");
  if (t->n_census && !t->interval_ms)
    die("censuses without an interval");
  if (t->peak_blocks > t->total_allocs || t->exit_blocks > t->total_allocs)
    die("more live blocks than allocations");
  uint64_t allocs = 0;
  for (size_t i = 0; i < t->n_census; i++) {
    const mp_timeline_census *c = &t->census[i];
    if (allocs + c->allocs < allocs)
      die("census allocations overflow");
    allocs += c->allocs;
    if (c->live_blocks > allocs)
      die("census has more live blocks than allocations so far");
    if ((i && c->t_ms < t->census[i - 1].t_ms) || c->t_ms > t->end_ms)
      die("census times out of order or after the end");
    if (c->n_ctx > t->top_n)
      die("census lists more than TopN contexts");
    check_list(c->ctx, c->n_ctx, &b, &k);
    if (b + c->other_bytes != c->live_bytes || k > c->live_blocks)
      die("census does not sum to its totals");
  }
  if (t->n_census && allocs != t->total_allocs)
    die("census allocations do not sum to TotalAllocs");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mp_timeline t;
  mp_err e = {{0}};
  if (mp_timeline_parse("fuzz-input", data, size, &t, &e) == 0) {
    check_accepted(&t);
    mp_timeline_free(&t);
    return 0;
  }
  static const char head[] = "fuzz-input: timeline at offset 0x";
  if (strncmp(e.msg, head, sizeof head - 1))
    die("refusal does not name the file and an offset");
  if (strtoull(e.msg + sizeof head - 1, NULL, 16) > size)
    die("refusal names an offset past the end");
  if (t.at_peak || t.at_exit || t.census || t.n_census)
    die("refusal left a partial timeline");
  return 0;
}
