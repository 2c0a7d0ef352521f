/* report_timeline_rate.c - allocations per second over time, beside the
 * live bytes of the timeline (heaptrack's two graphs): each census of a
 * timeline counts the allocations since the one before
 * (docs/timeline-format.md, section 7), so an interval between two
 * censuses has an exact count and a rate of count / length.
 *
 * The text report gives a table of the intervals per process, the HTML
 * page the same as JSON for its "allocations per second" panel.  A long
 * run's intervals are joined into at most RATE_ROWS rows (text) or
 * RATE_POINTS points (HTML), consecutive ones summed, so the counts stay
 * exact.  Times are from the process's start (rpt_timeline_proc.start_ms);
 * the first interval starts there, and its count is of the allocations
 * since the runtime started counting (its first moments).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "report.h"

#define RATE_ROWS 20     /* rows of the text table at most */
#define RATE_POINTS 1500 /* points of the page's panel at most */

/* Consecutive censuses joined: [from, to) from the process's start. */
typedef struct interval {
  uint64_t from, to, allocs, live_bytes;
} interval;

/* The time of census c (or the start, c < 0) from the process's start. */
static uint64_t time_of(const rpt_timeline_proc *p, long c) {
  return c < 0 ? 0 : rpt_timeline_since(p, p->tl.census[c].t_ms);
}

/* The censuses joined into at most max intervals; returns how many. */
static size_t intervals_of(const rpt_timeline_proc *p, size_t max, interval *out) {
  size_t n = p->tl.n_census, m = n < max ? n : max;
  for (size_t k = 0; k < m; k++) {
    size_t lo = k * n / m, hi = (k + 1) * n / m; /* censuses [lo, hi) */
    interval *v = &out[k];
    v->from = time_of(p, (long)lo - 1);
    v->to = time_of(p, (long)hi - 1);
    v->allocs = 0;
    for (size_t c = lo; c < hi; c++) v->allocs += p->tl.census[c].allocs;
    v->live_bytes = p->tl.census[hi - 1].live_bytes;
  }
  return m;
}

/* Allocations per second over [from, to), rounded half up; -1: no length. */
static double per_second(const interval *v) {
  if (v->to <= v->from) return -1;
  return (double)v->allocs * 1000.0 / (double)(v->to - v->from);
}

void rpt_write_timeline_rate_text(const rpt_timeline_proc *p, mp_buf *o,
                                  const char *prefix) {
  const mp_timeline *t = &p->tl;
  if (!t->n_census) return;
  interval *v = mp_xmalloc(RATE_ROWS * sizeof *v);
  size_t n = intervals_of(p, RATE_ROWS, v);
  mp_buf_printf(o, "%s\n%sAllocations over time (pid %" PRIu64 "): %" PRIu64
                   " allocation%s in %zu census%s%s\n",
                prefix, prefix, t->pid, t->total_allocs, t->total_allocs == 1 ? "" : "s",
                t->n_census, t->n_census == 1 ? "" : "es",
                n < t->n_census ? ", joined into equal runs" : "");
  mp_buf_printf(o, "%s  %10s %10s %12s %12s %14s\n", prefix, "from", "to", "allocations",
                "per second", "live bytes");
  char from[32], to[32], rate[32];
  for (size_t k = 0; k < n; k++) {
    double r = per_second(&v[k]);
    if (r < 0)
      snprintf(rate, sizeof rate, "-");
    else
      snprintf(rate, sizeof rate, "%.0f", r);
    mp_buf_printf(o, "%s  %10s %10s %12" PRIu64 " %12s %14" PRIu64 "\n", prefix,
                  rpt_fmt_ms((double)v[k].from, from, sizeof from),
                  rpt_fmt_ms((double)v[k].to, to, sizeof to), v[k].allocs, rate,
                  v[k].live_bytes);
  }
  free(v);
}

static void u64_array(mp_buf *o, const char *name, const interval *v, size_t n,
                      size_t off) {
  mp_buf_printf(o, "\"%s\":[", name);
  for (size_t k = 0; k < n; k++) {
    if (k) mp_buf_u8(o, ',');
    rpt_put_u64(o, *(const uint64_t *)((const char *)&v[k] + off));
  }
  mp_buf_u8(o, ']');
}

void rpt_write_timeline_rate_json(const rpt_timeline_proc *p, mp_buf *o) {
  interval *v = mp_xmalloc((RATE_POINTS + 1) * sizeof *v);
  size_t n = intervals_of(p, RATE_POINTS, v);
  mp_buf_printf(o, "\"rate\":{\"total\":%" PRIu64 ",", p->tl.total_allocs);
  u64_array(o, "from", v, n, offsetof(interval, from));
  mp_buf_u8(o, ',');
  u64_array(o, "to", v, n, offsetof(interval, to));
  mp_buf_u8(o, ',');
  u64_array(o, "allocs", v, n, offsetof(interval, allocs));
  mp_buf_u8(o, '}');
  free(v);
}
