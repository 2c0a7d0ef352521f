/* report_dhat.c - DHAT's JSON (dhatFileVersion 2), so that valgrind's
 * dh_view.html shows a MemProf profile: one program point ("pp") per
 * context with total bytes and blocks, total lifetime, and the context's
 * accesses as bytes read; frames leaf first, "[root]" first in the table.
 *
 * DHAT's time unit is instructions; here it is milliseconds ("ms", with
 * "Mms" for its per-million rates), tuth (its short-lived threshold) is
 * 1 ms, and te, the program's duration, is the latest timestamp of the
 * profile.  MemProf keeps nothing about the moment of the heap's peak, so
 * the at-t-gmax and at-end fields (gb, gbk, eb, ebk) are 0, and the
 * per-point maxima (mb, mbk) are the largest block (MaxSize, or the
 * average size when the profile lacks it), once.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "report.h"

static uint64_t end_time(const rpt *r) {
  uint64_t te = 1;
  for (size_t i = 0; i < r->n_ctx; i++) {
    const mp_mib *m = r->ctx[i].mib;
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

void rpt_write_dhat(rpt *r, mp_buf *out) {
  const mp_profile *p = r->p;
  uint32_t n;
  uint32_t *index = rpt_frame_index(r, 1, &n); /* 0 is [root] */
  mp_buf_printf(out,
                "{\"dhatFileVersion\":2,\"mode\":\"heap\",\"verb\":\"Allocated\","
                "\"bklt\":true,\"bkacc\":%s,\"tu\":\"ms\",\"Mtu\":\"Mms\","
                "\"tuth\":1,\"cmd\":\"memprof-profdata report\",\"pid\":0,"
                "\"te\":%" PRIu64 ",\"tg\":0,\"pps\":[",
                r->has_accesses ? "true" : "false", end_time(r));
  for (size_t i = 0; i < r->n_ctx; i++) {
    const rpt_ctx *c = &r->ctx[i];
    const mp_mib *m = c->mib;
    mp_buf_printf(out, "%s{\"tb\":%" PRIu64 ",\"tbk\":%" PRIu32 ",\"tl\":%" PRIu64
                       ",\"mb\":%" PRIu64 ",\"mbk\":1,\"gb\":0,\"gbk\":0,\"eb\":0,"
                       "\"ebk\":0",
                  i ? "," : "", m->TotalSize, m->AllocCount, m->TotalLifetime,
                  max_block(r, c));
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
  free(index);
}
