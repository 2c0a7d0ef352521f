/* report_timeline_out.c - the timeline part of the text and HTML reports
 * (report_timeline.c joins it): the peak of each process in the summary,
 * the contexts live at each process's peak (DHAT's t-gmax), its
 * allocations over time (report_timeline_rate.c) and the contexts still
 * live at exit, with the stacks the report shows elsewhere; and for
 * the HTML page the same as JSON plus the series its "memory over time"
 * graph stacks.
 *
 * Bytes in the tables are exact counts: they are what a user compares
 * with the program's own numbers.  Times are from the process's start
 * (rpt_timeline_proc.start_ms).  libstdc++'s exception pool is named, and
 * left out of what the reports call never freed (report_pool.c).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define GRAPH_CONTEXTS 10 /* contexts drawn in the graph; the rest: other */
#define GRAPH_FRAMES 2    /* frames in a graph label: the call and its caller */
/* Points a graph draws at most: a long run's censuses are thinned to
 * about this many, evenly, keeping the peak and both ends (the page and
 * its SVG stay small; a graph 900 pixels wide shows no more). */
#define GRAPH_POINTS 1500

/* ---- text ---------------------------------------------------------------- */

static const char *plural(uint64_t n) { return n == 1 ? "" : "s"; }

/* A time of process p, from its start. */
static const char *when(const rpt_timeline_proc *p, uint64_t t_ms, char *buf,
                        size_t n) {
  return rpt_fmt_ms((double)rpt_timeline_since(p, t_ms), buf, n);
}

static void peak_line(mp_buf *o, const char *prefix, const char *label,
                      const rpt_timeline_proc *p) {
  char b[32], at[32], end[32];
  const mp_timeline *t = &p->tl;
  mp_buf_printf(o, "%s%-22s %s (%" PRIu64 ") in %" PRIu64 " block%s at %s of %s\n",
                prefix, label, rpt_human_bytes(t->peak_bytes, b, sizeof b),
                t->peak_bytes, t->peak_blocks, plural(t->peak_blocks),
                when(p, t->peak_t_ms, at, sizeof at), when(p, t->end_ms, end, sizeof end));
}

void rpt_write_timeline_summary(rpt *r, mp_buf *o, const char *prefix) {
  const rpt_timeline *tl = r->tl;
  char b[32], label[48];
  if (tl->n_proc == 1) {
    peak_line(o, prefix, "peak live heap", &tl->proc[0]);
  } else {
    mp_buf_printf(o, "%speak per process       (%zu processes; peaks of "
                     "different processes are not added)\n",
                  prefix, tl->n_proc);
    for (size_t k = 0; k < tl->n_proc; k++) {
      snprintf(label, sizeof label, "  pid %" PRIu64, tl->proc[k].tl.pid);
      peak_line(o, prefix, label, &tl->proc[k]);
    }
  }
  mp_buf_printf(o, "%s%-22s %s (%" PRIu64 ") in %" PRIu64 " block%s%s", prefix,
                "live at exit", rpt_human_bytes(tl->exit_bytes, b, sizeof b),
                tl->exit_bytes, tl->exit_blocks, plural(tl->exit_blocks),
                tl->n_proc > 1 ? " (summed over the processes)" : "");
  if (tl->pool_exit_bytes)
    mp_buf_printf(o, ", of which the " RPT_EH_POOL_NAME " %" PRIu64 " in %" PRIu64
                     " block%s (still reachable: not a leak)",
                  tl->pool_exit_bytes, tl->pool_exit_blocks, plural(tl->pool_exit_blocks));
  mp_buf_printf(o, "\n");
  if (tl->n_raw > tl->n_proc)
    mp_buf_printf(o, "%s%-22s %zu of the %zu raw inputs have one: the others' "
                     "memory over time is unknown\n",
                  prefix, "timelines", tl->n_proc, tl->n_raw);
}

/* What the tables print under a row: the context's stack, or what the
 * value is when it has none. */
static void row_stack(rpt *r, mp_buf *o, const char *prefix, uint32_t ctx) {
  if (ctx == RPT_TIMELINE_NO_FRAMES) {
    mp_buf_printf(o, "%s      (stacks without a symbolizable frame)\n", prefix);
    return;
  }
  if (rpt_timeline_is_pool(r, ctx))
    mp_buf_printf(o, "%s      [" RPT_EH_POOL_NAME ": " RPT_EH_POOL_WHY "]\n", prefix);
  if (ctx < r->n_ctx) rpt_print_stack(r, o, r->ctx[ctx].stack, prefix);
}

/* One table of live contexts, top N (--top) of them. */
static void live_table(rpt *r, mp_buf *o, const char *prefix,
                       const rpt_timeline_val *v, size_t n_v, uint64_t whole,
                       const char *of) {
  size_t n = r->opts.top && r->opts.top < n_v ? r->opts.top : n_v;
  uint64_t listed = 0;
  char p[32];
  for (size_t i = 0; i < n_v; i++) listed += v[i].bytes;
  mp_buf_printf(o, "%s  %4s %14s %7s %10s\n", prefix, "#", "live bytes", of,
                "blocks");
  for (size_t i = 0; i < n; i++) {
    mp_buf_printf(o, "%s  %4zu %14" PRIu64 " %7s %10" PRIu64 "\n", prefix,
                  i + 1, v[i].bytes, rpt_fmt_pct(v[i].bytes, whole, p, sizeof p),
                  v[i].blocks);
    row_stack(r, o, prefix, v[i].ctx);
  }
  if (n < n_v)
    mp_buf_printf(o, "%s  ... %zu more contexts\n", prefix, n_v - n);
  if (listed != whole)
    mp_buf_printf(o, "%s  (the contexts recorded hold %" PRIu64 " of the %" PRIu64
                     " bytes)\n",
                  prefix, listed, whole);
}

/* Live at exit without the exception pool: what the program never freed. */
static rpt_timeline_val *never_freed(const rpt *r, size_t *n) {
  const rpt_timeline *tl = r->tl;
  rpt_timeline_val *v = mp_xmalloc((tl->n_at_exit + 1) * sizeof *v);
  *n = 0;
  for (size_t i = 0; i < tl->n_at_exit; i++)
    if (!rpt_timeline_is_pool(r, tl->at_exit[i].ctx)) v[(*n)++] = tl->at_exit[i];
  return v;
}

void rpt_write_timeline_text(rpt *r, mp_buf *o, const char *prefix) {
  const rpt_timeline *tl = r->tl;
  char at[32];
  for (size_t k = 0; k < tl->n_proc; k++) {
    const rpt_timeline_proc *p = &tl->proc[k];
    mp_buf_printf(o, "%s\n%sLive at the peak: %" PRIu64 " bytes in %" PRIu64
                     " block%s at %s (pid %" PRIu64 ", %s)\n",
                  prefix, prefix, p->tl.peak_bytes, p->tl.peak_blocks,
                  plural(p->tl.peak_blocks), when(p, p->tl.peak_t_ms, at, sizeof at),
                  p->tl.pid, p->path);
    live_table(r, o, prefix, p->at_peak, p->n_at_peak, p->tl.peak_bytes,
               "% peak");
    rpt_write_timeline_rate_text(p, o, prefix);
  }
  uint64_t bytes = tl->exit_bytes - tl->pool_exit_bytes;
  uint64_t blocks = tl->exit_blocks - tl->pool_exit_blocks;
  mp_buf_printf(o, "%s\n%sLive at exit (never freed): %" PRIu64 " bytes in %" PRIu64
                   " block%s%s\n",
                prefix, prefix, bytes, blocks, plural(blocks),
                tl->n_proc > 1 ? ", summed over the processes" : "");
  size_t n;
  rpt_timeline_val *v = never_freed(r, &n);
  if (!n)
    mp_buf_printf(o, "%s  nothing: every block %s freed\n", prefix,
                  tl->pool_exit_bytes ? "the program allocated was" : "was");
  else
    live_table(r, o, prefix, v, n, bytes, "% exit");
  free(v);
  if (tl->pool_exit_bytes)
    mp_buf_printf(o, "%s\n%sStill reachable at exit: %" PRIu64 " bytes in %" PRIu64
                     " block%s: the " RPT_EH_POOL_NAME ", " RPT_EH_POOL_WHY "\n",
                  prefix, prefix, tl->pool_exit_bytes, tl->pool_exit_blocks,
                  plural(tl->pool_exit_blocks));
}

/* ---- JSON for the HTML page ----------------------------------------------- */

/* Contexts the page names, numbered in the order first met. */
typedef struct named {
  uint32_t *ix; /* per context: its number + 1, 0 if not named yet */
  uint32_t *list;
  size_t n;
} named;

/* A context's number in the page's list; -1: stacks without a frame,
 * -2: the exception pool that has no context. */
static void put_ref(mp_buf *o, named *nm, uint32_t ctx) {
  if (ctx == RPT_TIMELINE_NO_FRAMES || ctx == RPT_TIMELINE_EH_POOL) {
    mp_buf_printf(o, ctx == RPT_TIMELINE_NO_FRAMES ? "-1" : "-2");
    return;
  }
  if (!nm->ix[ctx]) {
    nm->list[nm->n++] = ctx;
    nm->ix[ctx] = (uint32_t)nm->n;
  }
  rpt_put_u64(o, nm->ix[ctx] - 1);
}

static void vals_json(rpt *r, mp_buf *o, named *nm, const rpt_timeline_val *v,
                      size_t n_v) {
  size_t n = r->opts.top && r->opts.top < n_v ? r->opts.top : n_v;
  mp_buf_u8(o, '[');
  for (size_t i = 0; i < n; i++) {
    mp_buf_printf(o, "%s[", i ? "," : "");
    put_ref(o, nm, v[i].ctx);
    mp_buf_printf(o, ",%" PRIu64 ",%" PRIu64 "]", v[i].bytes, v[i].blocks);
  }
  mp_buf_u8(o, ']');
}

static uint64_t bytes_of(const rpt_timeline_val *v, size_t n, uint32_t ctx) {
  for (size_t i = 0; i < n; i++)
    if (v[i].ctx == ctx) return v[i].bytes;
  return 0;
}

/* One point of a process's graph: a census, the peak snapshot (censuses
 * may miss the peak, the graph should not) or the exit. */
typedef struct point {
  uint64_t t, total;
  const rpt_timeline_val *v;
  size_t n;
} point;

/* Keeps GRAPH_POINTS of the n points, evenly spread, the first, the
 * last and pt[keep] among them; returns how many are left. */
static size_t thin(point *pt, size_t n, size_t keep) {
  if (n <= GRAPH_POINTS) return n;
  size_t m = 0;
  for (size_t k = 0; k < GRAPH_POINTS; k++) {
    size_t i = k * (n - 1) / (GRAPH_POINTS - 1);
    size_t prev = k ? (k - 1) * (n - 1) / (GRAPH_POINTS - 1) : 0;
    if (k && prev < keep && keep < i) pt[m++] = pt[keep];
    pt[m++] = pt[i];
  }
  return m;
}

/* The censuses in time order with the peak put in its place and the exit
 * at the end (thinned for a long run); returns how many. */
static size_t points_of(const rpt_timeline_proc *p, point *pt) {
  const mp_timeline *t = &p->tl;
  size_t n = 0, c = 0;
  for (; c < t->n_census && p->census[c].c->t_ms <= t->peak_t_ms; c++)
    pt[n++] = (point){p->census[c].c->t_ms, p->census[c].c->live_bytes,
                      p->census[c].v, p->census[c].n};
  size_t peak_at = n;
  pt[n++] = (point){t->peak_t_ms, t->peak_bytes, p->at_peak, p->n_at_peak};
  for (; c < t->n_census; c++)
    pt[n++] = (point){p->census[c].c->t_ms, p->census[c].c->live_bytes,
                      p->census[c].v, p->census[c].n};
  if (t->end_ms >= pt[n - 1].t)
    pt[n++] = (point){t->end_ms, t->exit_bytes, p->at_exit, p->n_at_exit};
  return thin(pt, n, peak_at);
}

/* Per point: its time from the process's start ("t"), the whole heap
 * ("total") and each graph context's bytes ("series"). */
static void series_json(mp_buf *o, const rpt_timeline_proc *p, const uint32_t *g,
                        size_t n_g) {
  point *pt = mp_xmalloc((p->tl.n_census + 2) * sizeof *pt);
  size_t n = points_of(p, pt);
  mp_buf_printf(o, "\"t\":[");
  for (size_t k = 0; k < n; k++) {
    if (k) mp_buf_u8(o, ',');
    rpt_put_u64(o, rpt_timeline_since(p, pt[k].t));
  }
  mp_buf_printf(o, "],\"total\":[");
  for (size_t k = 0; k < n; k++) {
    if (k) mp_buf_u8(o, ',');
    rpt_put_u64(o, pt[k].total);
  }
  mp_buf_printf(o, "],\"series\":[");
  for (size_t i = 0; i < n_g; i++) {
    mp_buf_printf(o, "%s[", i ? "," : "");
    for (size_t k = 0; k < n; k++) {
      if (k) mp_buf_u8(o, ',');
      rpt_put_u64(o, bytes_of(pt[k].v, pt[k].n, g[i]));
    }
    mp_buf_u8(o, ']');
  }
  mp_buf_u8(o, ']');
  free(pt);
}

static void proc_json(rpt *r, mp_buf *o, named *nm, const rpt_timeline_proc *p,
                      const uint32_t *g, size_t n_g) {
  const mp_timeline *t = &p->tl;
  mp_buf_printf(o, "{\"path\":\"");
  rpt_json_str(o, p->path);
  mp_buf_printf(o, "\",\"pid\":%" PRIu64 ",\"end\":%" PRIu64 ",\"interval\":%" PRIu64
                   ",\"peak\":[%" PRIu64 ",%" PRIu64 ",%" PRIu64 "],",
                t->pid, rpt_timeline_since(p, t->end_ms), t->interval_ms,
                rpt_timeline_since(p, t->peak_t_ms), t->peak_bytes, t->peak_blocks);
  series_json(o, p, g, n_g);
  mp_buf_u8(o, ',');
  rpt_write_timeline_rate_json(p, o);
  mp_buf_printf(o, ",\"atpeak\":");
  vals_json(r, o, nm, p->at_peak, p->n_at_peak);
  mp_buf_u8(o, '}');
}

/* Each named context: its frames, leaf first, as "name (file:line:col)". */
static void names_json(rpt *r, mp_buf *o, const named *nm) {
  char loc[600];
  mp_buf_printf(o, "\"ctx\":[");
  for (size_t i = 0; i < nm->n; i++) {
    uint32_t s = r->ctx[nm->list[i]].stack;
    const uint32_t *f = mp_stack_frames(r->p, s);
    mp_buf_printf(o, "%s[", i ? "," : "");
    for (uint32_t k = 0; k < r->p->stacks[s].len; k++) {
      mp_buf_printf(o, "%s\"", k ? "," : "");
      rpt_json_str(o, rpt_frame_name(r, f[k]));
      mp_buf_printf(o, " (");
      rpt_json_str(o, rpt_frame_loc(r, f[k], loc, sizeof loc));
      mp_buf_printf(o, ")\"");
    }
    mp_buf_u8(o, ']');
  }
  mp_buf_printf(o, "],\"pool\":[");
  for (size_t i = 0, k = 0; i < nm->n; i++)
    if (r->ctx[nm->list[i]].eh_pool) {
      mp_buf_printf(o, "%s", k++ ? "," : "");
      rpt_put_u64(o, i);
    }
  mp_buf_printf(o, "],\"labelFrames\":%d", GRAPH_FRAMES);
}

void rpt_write_timeline_json(rpt *r, mp_buf *o) {
  const rpt_timeline *tl = r->tl;
  if (!tl) return;
  named nm = {mp_xcalloc(r->n_ctx + 1, sizeof *nm.ix),
              mp_xmalloc((r->n_ctx + 1) * sizeof *nm.list), 0};
  size_t n_g;
  uint32_t *g = rpt_timeline_graph_contexts(r, GRAPH_CONTEXTS, &n_g);
  mp_buf_printf(o, "\"tl\":{\"graph\":[");
  for (size_t i = 0; i < n_g; i++) {
    if (i) mp_buf_u8(o, ',');
    put_ref(o, &nm, g[i]);
  }
  mp_buf_printf(o, "],\"procs\":[");
  for (size_t k = 0; k < tl->n_proc; k++) {
    if (k) mp_buf_u8(o, ',');
    proc_json(r, o, &nm, &tl->proc[k], g, n_g);
  }
  mp_buf_printf(o, "],\"raw\":%zu,\"exit\":[%" PRIu64 ",%" PRIu64 "],"
                   "\"reachable\":[%" PRIu64 ",%" PRIu64 "],\"atexit\":",
                tl->n_raw, tl->exit_bytes, tl->exit_blocks, tl->pool_exit_bytes,
                tl->pool_exit_blocks);
  size_t n_left;
  rpt_timeline_val *left = never_freed(r, &n_left);
  vals_json(r, o, &nm, left, n_left); /* the exception pool is not in it */
  free(left);
  mp_buf_u8(o, ',');
  names_json(r, o, &nm);
  mp_buf_printf(o, "},");
  free(g);
  free(nm.ix);
  free(nm.list);
}
