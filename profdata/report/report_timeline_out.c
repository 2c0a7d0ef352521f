/* report_timeline_out.c - the timeline part of the text and HTML reports
 * (report_timeline.c joins it): the peak of each process in the summary,
 * the contexts live at each process's peak (DHAT's t-gmax) and those
 * still live at exit, with the stacks the report shows elsewhere; and for
 * the HTML page the same as JSON plus the series its "memory over time"
 * graph stacks.
 *
 * Bytes in the tables are exact counts: they are what a user compares
 * with the program's own numbers.
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

static double pct(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* ---- text ---------------------------------------------------------------- */

static void peak_line(mp_buf *o, const char *prefix, const char *label,
                      const rpt_timeline_proc *p) {
  char b[32];
  const mp_timeline *t = &p->tl;
  mp_buf_printf(o, "%s%-22s %s (%" PRIu64 ") in %" PRIu64 " blocks at %" PRIu64
                   " ms of %" PRIu64 " ms\n",
                prefix, label, rpt_human_bytes(t->peak_bytes, b, sizeof b),
                t->peak_bytes, t->peak_blocks, t->peak_t_ms, t->end_ms);
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
  mp_buf_printf(o, "%s%-22s %s (%" PRIu64 ") in %" PRIu64 " blocks%s\n", prefix,
                "live at exit", rpt_human_bytes(tl->exit_bytes, b, sizeof b),
                tl->exit_bytes, tl->exit_blocks,
                tl->n_proc > 1 ? " (summed over the processes)" : "");
  if (tl->n_raw > tl->n_proc)
    mp_buf_printf(o, "%s%-22s %zu of the %zu raw inputs have one: the others' "
                     "memory over time is unknown\n",
                  prefix, "timelines", tl->n_proc, tl->n_raw);
}

/* One table of live contexts, top N (--top) of them. */
static void live_table(rpt *r, mp_buf *o, const char *prefix,
                       const rpt_timeline_val *v, size_t n_v, uint64_t whole,
                       const char *of) {
  size_t n = r->opts.top && r->opts.top < n_v ? r->opts.top : n_v;
  uint64_t listed = 0;
  for (size_t i = 0; i < n_v; i++) listed += v[i].bytes;
  mp_buf_printf(o, "%s  %4s %14s %7s %10s\n", prefix, "#", "live bytes", of,
                "blocks");
  for (size_t i = 0; i < n; i++) {
    mp_buf_printf(o, "%s  %4zu %14" PRIu64 " %6.1f%% %10" PRIu64 "\n", prefix,
                  i + 1, v[i].bytes, pct(v[i].bytes, whole), v[i].blocks);
    if (v[i].ctx == RPT_TIMELINE_NO_FRAMES)
      mp_buf_printf(o, "%s      (stacks without a symbolizable frame)\n", prefix);
    else
      rpt_print_stack(r, o, r->ctx[v[i].ctx].stack, prefix);
  }
  if (n < n_v)
    mp_buf_printf(o, "%s  ... %zu more contexts\n", prefix, n_v - n);
  if (listed != whole)
    mp_buf_printf(o, "%s  (the contexts recorded hold %" PRIu64 " of the %" PRIu64
                     " bytes)\n",
                  prefix, listed, whole);
}

void rpt_write_timeline_text(rpt *r, mp_buf *o, const char *prefix) {
  const rpt_timeline *tl = r->tl;
  for (size_t k = 0; k < tl->n_proc; k++) {
    const rpt_timeline_proc *p = &tl->proc[k];
    mp_buf_printf(o, "%s\n%sLive at the peak: %" PRIu64 " bytes in %" PRIu64
                     " blocks at %" PRIu64 " ms (pid %" PRIu64 ", %s)\n",
                  prefix, prefix, p->tl.peak_bytes, p->tl.peak_blocks,
                  p->tl.peak_t_ms, p->tl.pid, p->path);
    live_table(r, o, prefix, p->at_peak, p->n_at_peak, p->tl.peak_bytes,
               "% peak");
  }
  mp_buf_printf(o, "%s\n%sLive at exit (never freed): %" PRIu64 " bytes in %" PRIu64
                   " blocks%s\n",
                prefix, prefix, tl->exit_bytes, tl->exit_blocks,
                tl->n_proc > 1 ? ", summed over the processes" : "");
  if (!tl->n_at_exit)
    mp_buf_printf(o, "%s  nothing: every block was freed\n", prefix);
  else
    live_table(r, o, prefix, tl->at_exit, tl->n_at_exit, tl->exit_bytes, "% exit");
}

/* ---- JSON for the HTML page ----------------------------------------------- */

/* Contexts the page names, numbered in the order first met. */
typedef struct named {
  uint32_t *ix; /* per context: its number + 1, 0 if not named yet */
  uint32_t *list;
  size_t n;
} named;

static void put_ref(mp_buf *o, named *nm, uint32_t ctx) {
  if (ctx == RPT_TIMELINE_NO_FRAMES) {
    mp_buf_printf(o, "-1");
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

/* Per point: its time ("t"), the whole heap ("total") and each graph
 * context's bytes ("series"). */
static void series_json(mp_buf *o, const rpt_timeline_proc *p, const uint32_t *g,
                        size_t n_g) {
  point *pt = mp_xmalloc((p->tl.n_census + 2) * sizeof *pt);
  size_t n = points_of(p, pt);
  mp_buf_printf(o, "\"t\":[");
  for (size_t k = 0; k < n; k++) {
    if (k) mp_buf_u8(o, ',');
    rpt_put_u64(o, pt[k].t);
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
                t->pid, t->end_ms, t->interval_ms, t->peak_t_ms, t->peak_bytes,
                t->peak_blocks);
  series_json(o, p, g, n_g);
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
  mp_buf_printf(o, "],\"raw\":%zu,\"exit\":[%" PRIu64 ",%" PRIu64 "],\"atexit\":",
                tl->n_raw, tl->exit_bytes, tl->exit_blocks);
  vals_json(r, o, &nm, tl->at_exit, tl->n_at_exit);
  mp_buf_u8(o, ',');
  names_json(r, o, &nm);
  mp_buf_printf(o, "},");
  free(g);
  free(nm.ix);
  free(nm.list);
}
