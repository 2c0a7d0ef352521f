/* report_dhat.c - DHAT's JSON (dhatFileVersion 2), so that valgrind's
 * dh_view.html shows a MemProf profile: one program point ("pp") per
 * context with total bytes and blocks, total lifetime, and the context's
 * accesses as bytes read; frames leaf first, "[root]" first in the table.
 *
 * DHAT's time unit is instructions; here it is milliseconds ("ms", with
 * "Mms" for its per-million rates), tuth (its short-lived threshold) is
 * 1 ms, and te, the program's duration, is the latest timestamp of the
 * profile.  The per-point maxima (mb, mbk) are the largest block (MaxSize,
 * or the average size when the profile lacks it), once.
 *
 * The raw profile keeps nothing about the moment of the heap's peak; its
 * timeline does (report_timeline.c).  With one process's timeline, tg is
 * its peak's time and gb/gbk each context's live bytes and blocks then;
 * eb/ebk are the blocks live at exit (summed over the processes when
 * several were merged), and te the latest end of a timeline.  Peaks of
 * several processes are not one moment, so with more than one timeline
 * tg, gb and gbk stay 0, as they do without a timeline (eb, ebk too, but
 * for a roots file's, below).
 * A sampled or not instrumented profile says so after the command.
 *
 * DHAT has no leaks: its "at t-end" is every block still live at the
 * end.  Without a timeline, the exit census of a roots file (report_roots.c,
 * MEMPROF_OPTIONS=roots=1) gives the same figures: eb/ebk are the blocks
 * it saw (reached or not).  --dhat-at-end=leaked makes eb/ebk the blocks
 * no root reaches at exit instead (timeline or not), and the command
 * says so, which dh_view.html shows; blocks of stacks without a
 * symbolizable frame have no program point and are left out.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "report.h"

static uint64_t end_time(const rpt *r) {
  uint64_t te = 1;
  for (size_t i = 0; i < r->n_ctx; i++) {
    const mpf_mib *m = r->ctx[i].mib;
    uint64_t t = m->DeallocTimestamp > m->AllocTimestamp ? m->DeallocTimestamp
                                                         : m->AllocTimestamp;
    if (t > te) te = t;
    if (m->MaxLifetime > te) te = m->MaxLifetime;
    if (rpt_avg_lifetime_ms(&r->ctx[i]) > (double)te)
      te = (uint64_t)rpt_avg_lifetime_ms(&r->ctx[i]) + 1;
  }
  return te;
}

/* The largest block: MaxSize when the profile has it, else the average. */
static uint64_t max_block(const rpt *r, const rpt_ctx *c) {
  if (!r->p->mib_fields || (r->p->mib_fields >> 7 & 1)) return c->mib->MaxSize;
  return (uint64_t)(rpt_avg_size(c) + 0.5);
}

static void frame_table(rpt *r, mp_buf *out, const uint32_t *index) {
  char loc[600];
  mp_buf_printf(out, "\"ftbl\":[\"[root]\"");
  for (size_t f = 0; f < r->p->n_frames; f++) {
    if (index[f] == UINT32_MAX) continue;
    mp_buf_printf(out, ",\"");
    rpt_json_str(out, rpt_frame_name(r, (uint32_t)f));
    mp_buf_printf(out, " (");
    rpt_json_str(out, rpt_frame_loc(r, (uint32_t)f, loc, sizeof loc));
    mp_buf_printf(out, ")\"");
  }
  mp_buf_printf(out, "]");
}

/* Per context: live bytes and blocks at the global peak (g) and at exit
 * (e), from the timelines; all 0 without. */
typedef struct live_at {
  uint64_t gb, gbk, eb, ebk;
} live_at;

/* eb/ebk from the roots files: per context the blocks each process's
 * exit census saw (every block, or with --dhat-at-end=leaked those no
 * root reaches), summed over the processes. */
static void roots_at_exit(const rpt *r, live_at *v) {
  for (size_t k = 0; k < rpt_roots_n_proc(r); k++) {
    const mp_roots *rs = rpt_roots_file(r, k, NULL);
    const mp_roots_census *c = rs->n_census ? &rs->census[rs->n_census - 1] : NULL;
    if (!c || c->kind != MP_ROOTS_AT_EXIT) continue;
    for (int part = 0; part < 2; part++) {
      if (part == 1 && r->opts.dhat_leaked) break;
      size_t n;
      rpt_roots_val *x = part ? rpt_roots_reachable(r, k, c, &n)
                              : rpt_roots_by_ctx(r, k, c->unreached, c->n_unreached, &n);
      for (size_t i = 0; i < n; i++)
        if (x[i].ctx < r->n_ctx) {
          v[x[i].ctx].eb += x[i].bytes;
          v[x[i].ctx].ebk += x[i].blocks;
        }
      free(x);
    }
  }
}

static live_at *live_values(const rpt *r, uint64_t *tg, uint64_t *pid) {
  live_at *v = mp_xcalloc(r->n_ctx + 1, sizeof *v);
  const rpt_timeline *tl = r->tl;
  if (r->opts.dhat_leaked || !tl) roots_at_exit(r, v);
  if (!tl && rpt_roots_n_proc(r) == 1) *pid = rpt_roots_file(r, 0, NULL)->pid;
  if (!tl) return v;
  for (size_t i = 0; i < tl->n_at_exit && !r->opts.dhat_leaked; i++)
    if (tl->at_exit[i].ctx != RPT_TIMELINE_NO_FRAMES) {
      v[tl->at_exit[i].ctx].eb = tl->at_exit[i].bytes;
      v[tl->at_exit[i].ctx].ebk = tl->at_exit[i].blocks;
    }
  if (tl->n_proc != 1) return v;
  const rpt_timeline_proc *p = &tl->proc[0];
  *tg = p->tl.peak_t_ms;
  *pid = p->tl.pid;
  for (size_t i = 0; i < p->n_at_peak; i++)
    if (p->at_peak[i].ctx != RPT_TIMELINE_NO_FRAMES) {
      v[p->at_peak[i].ctx].gb = p->at_peak[i].bytes;
      v[p->at_peak[i].ctx].gbk = p->at_peak[i].blocks;
    }
  return v;
}

/* The profile's latest timestamp, or a timeline's end if later. */
static uint64_t program_end(const rpt *r, uint64_t tg) {
  uint64_t te = end_time(r);
  for (size_t k = 0; r->tl && k < r->tl->n_proc; k++)
    if (r->tl->proc[k].tl.end_ms > te) te = r->tl->proc[k].tl.end_ms;
  return te > tg ? te : tg;
}

void rpt_write_dhat(rpt *r, mp_buf *out) {
  const mp_profile *p = r->p;
  uint32_t n;
  uint32_t *index = rpt_frame_index(r, 1, &n); /* 0 is [root] */
  uint64_t tg = 0, pid = 0;
  live_at *live = live_values(r, &tg, &pid);
  mp_buf_printf(out,
                "{\"dhatFileVersion\":2,\"mode\":\"heap\",\"verb\":\"Allocated\","
                "\"bklt\":true,\"bkacc\":%s,\"tu\":\"ms\",\"Mtu\":\"Mms\","
                "\"tuth\":1,\"cmd\":\"memprof-profdata report",
                r->has_accesses ? "true" : "false");
  if (p->n_programs) { /* the viewer's "Invocation" line */
    mp_buf_printf(out, " of ");
    rpt_programs(p, out, 1);
  }
  rpt_json_notes(r->p, out, " (", ")");
  if (r->opts.dhat_leaked)
    mp_buf_printf(out, " --dhat-at-end=leaked (at t-end: the blocks no root reaches at exit)");
  mp_buf_printf(out, "\",\"pid\":%" PRIu64 ",\"te\":%" PRIu64 ",\"tg\":%" PRIu64
                     ",\"pps\":[",
                pid, program_end(r, tg), tg);
  for (size_t i = 0; i < r->n_ctx; i++) {
    const rpt_ctx *c = &r->ctx[i];
    const mpf_mib *m = c->mib;
    const live_at *l = &live[i];
    mp_buf_printf(out, "%s{\"tb\":%" PRIu64 ",\"tbk\":%" PRIu32 ",\"tl\":%" PRIu64
                       ",\"mb\":%" PRIu64 ",\"mbk\":1,\"gb\":%" PRIu64
                       ",\"gbk\":%" PRIu64 ",\"eb\":%" PRIu64 ",\"ebk\":%" PRIu64,
                  i ? "," : "", m->TotalSize, m->AllocCount, m->TotalLifetime,
                  max_block(r, c), l->gb, l->gbk, l->eb, l->ebk);
    if (r->has_accesses)
      mp_buf_printf(out, ",\"rb\":%" PRIu64 ",\"wb\":0", m->TotalAccessCount);
    mp_buf_printf(out, ",\"fs\":[");
    const uint32_t *f = mp_stack_frames(p, c->stack);
    for (uint32_t j = 0; j < p->stacks[c->stack].len; j++) {
      if (j) mp_buf_u8(out, ',');
      rpt_put_u64(out, index[f[j]]);
    }
    mp_buf_printf(out, "]}");
  }
  mp_buf_printf(out, "],");
  frame_table(r, out, index);
  mp_buf_printf(out, "}\n");
  free(live);
  free(index);
}
