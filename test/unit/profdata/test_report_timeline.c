/* test_report_timeline.c - timelines joined to a report's contexts
 * (profdata/report/report_timeline.c), on a profile and timelines built in
 * memory: two stack ids of one context are summed, an id whose stack has no
 * symbolizable frame goes under RPT_TIMELINE_NO_FRAMES (and the text names it),
 * lists come largest first, live at exit sums over processes while each
 * keeps its peak, times count from the first census (without censuses from
 * the earliest allocation), the raw profile's first id without frames
 * holding one 72704-byte block at exit is libstdc++'s exception pool (not
 * never freed), the graph's contexts
 * rank by their most live bytes at a census, the peak or exit, and a timeline naming an id the raw profile lacks is refused with
 * the id in the message and the report left as it was. */
#include <stdlib.h>
#include <string.h>

#include "test/unit/check.h"
#include "profdata/raw/raw.h"
#include "profdata/report/report.h"

static uint32_t stack_of(mp_profile *p, uint64_t guid) {
  mp_frame f[2] = {{guid, 1, 2, 0}, {0x99, 3, 4, 0}};
  uint32_t ids[2] = {mp_intern_frame(p, &f[0]), mp_intern_frame(p, &f[1])};
  return mp_intern_stack(p, ids, 2);
}

static mp_timeline_live *lives(size_t n, const mp_timeline_live *v) {
  mp_timeline_live *l = malloc(n * sizeof *l);
  memcpy(l, v, n * sizeof *l);
  return l;
}

/* Peak: ids 10 and 11 (one context), 12, 13 (no frames); exit: 13, 14;
 * censuses: {10, 12}, then {14}. */
static mp_timeline make_timeline(uint64_t pid, uint64_t exit14) {
  mp_timeline t;
  memset(&t, 0, sizeof t);
  t.pid = pid;
  t.interval_ms = 10;
  t.end_ms = 100;
  t.start_ms = 10; /* the file's StartMs: the reports count from it */
  t.peak_t_ms = 20;
  t.peak_bytes = 187;
  t.peak_blocks = 6;
  t.at_peak = lives(4, (mp_timeline_live[]){{10, 100, 1}, {11, 50, 1}, {12, 30, 3},
                                      {13, 7, 1}});
  t.n_at_peak = 4;
  t.exit_bytes = 7 + exit14;
  t.exit_blocks = 2;
  t.at_exit = lives(2, (mp_timeline_live[]){{13, 7, 1}, {14, exit14, 1}});
  t.n_at_exit = 2;
  t.census = calloc(2, sizeof *t.census);
  t.census[0] = (mp_timeline_census){
      .t_ms = 10, .allocs = 6, .live_bytes = 130, .live_blocks = 4,
      .ctx = lives(2, (mp_timeline_live[]){{10, 100, 1}, {12, 30, 3}}), .n_ctx = 2};
  t.census[1] = (mp_timeline_census){.t_ms = 30, .allocs = 2, .live_bytes = 5, .live_blocks = 1,
                                     .ctx = lives(1, (mp_timeline_live[]){{14, 5, 1}}),
                                     .n_ctx = 1};
  t.total_allocs = 8;
  t.n_census = 2;
  return t;
}

static uint32_t ctx_of(const rpt *r, uint32_t stack) {
  for (size_t i = 0; i < r->n_ctx; i++)
    if (r->ctx[i].stack == stack) return (uint32_t)i;
  return UINT32_MAX;
}

static int same(const rpt_timeline_val *v, uint32_t ctx, uint64_t bytes, uint64_t blocks) {
  return v->ctx == ctx && v->bytes == bytes && v->blocks == blocks;
}

int main(void) {
  mp_profile *p = mp_profile_new();
  mp_profile_begin_input(p);
  uint32_t s[3];
  for (int i = 0; i < 3; i++) {
    s[i] = stack_of(p, 0x10 + (uint64_t)i);
    mpf_mib m;
    memset(&m, 0, sizeof m);
    m.AllocCount = 1;
    m.TotalSize = 64;
    m.AllocTimestamp = 25 + (uint32_t)i;
    mp_add_alloc_site(p, 0x10 + (uint64_t)i, s[i], &m, NULL);
  }
  mp_profile_finish(p);
  rpt_opts o = RPT_OPTS_DEFAULT;
  rpt *r = rpt_build(p, &o);
  uint32_t c0 = ctx_of(r, s[0]), c1 = ctx_of(r, s[1]), c2 = ctx_of(r, s[2]);
  CHECK(c0 != UINT32_MAX && c1 != UINT32_MAX && c2 != UINT32_MAX, "contexts");

  const uint64_t ids[] = {10, 11, 12, 13, 14};
  const uint32_t stacks[] = {s[0], s[0], s[1], MP_RAW_NO_FRAMES, s[2]};
  mp_err e;

  /* an id the raw profile does not have (14, in census 1): refused,
   * nothing attached */
  rpt_timeline_input bad = {"b.timeline", "b.raw", make_timeline(2, 5), ids, stacks, 4};
  CHECK(rpt_timeline_add(r, &bad, &e) == -1 && r->tl == NULL, "id 14 unknown: refused");
  CHECK(strstr(e.msg, "stack id 0x000000000000000e (census 1) is not in the "
                      "raw profile b.raw") != NULL, "message: %s", e.msg);

  rpt_timeline_input in = {"a.timeline", "a.raw", make_timeline(1, 5), ids, stacks, 5};
  CHECK(rpt_timeline_add(r, &in, &e) == 0, "join: %s", e.msg);
  if (!r->tl) return check_result();
  const rpt_timeline_proc *q = &r->tl->proc[0];
  CHECK(q->n_at_peak == 3 && same(&q->at_peak[0], c0, 150, 2) &&
            same(&q->at_peak[1], c1, 30, 3) &&
            same(&q->at_peak[2], RPT_TIMELINE_NO_FRAMES, 7, 1),
        "at peak: %zu rows", q->n_at_peak);
  CHECK(r->tl->n_at_exit == 2 && same(&r->tl->at_exit[0], RPT_TIMELINE_NO_FRAMES, 7, 1) &&
            same(&r->tl->at_exit[1], c2, 5, 1),
        "at exit");
  CHECK(q->census[0].n == 2 && same(&q->census[0].v[0], c0, 100, 1) &&
            q->census[1].n == 1 && same(&q->census[1].v[0], c2, 5, 1),
        "censuses");

  /* a second process: its own peak, exit summed (c2: 5 + 20) */
  rpt_timeline_input in2 = {"c.timeline", "c.raw", make_timeline(3, 20), ids, stacks, 5};
  CHECK(rpt_timeline_add(r, &in2, &e) == 0, "second join: %s", e.msg);
  CHECK(r->tl->n_proc == 2 && r->tl->exit_bytes == 12 + 27 &&
            r->tl->exit_blocks == 4,
        "exit totals %llu", (unsigned long long)r->tl->exit_bytes);
  CHECK(r->tl->n_at_exit == 2 && same(&r->tl->at_exit[0], c2, 25, 2) &&
            same(&r->tl->at_exit[1], RPT_TIMELINE_NO_FRAMES, 14, 2),
        "exit summed");
  CHECK(r->tl->proc[1].n_at_peak == 3 && r->tl->proc[1].tl.pid == 3, "second peak");

  size_t n;
  uint32_t *g = rpt_timeline_graph_contexts(r, 2, &n);
  CHECK(n == 2 && g[0] == c0 && g[1] == c1, "graph contexts");
  free(g);

  mp_buf b = {0};
  rpt_write_timeline_text(r, &b, "# ");
  mp_buf_u8(&b, 0);
  /* the peak at 20 ms of a process that started at 10 ms */
  CHECK(r->tl->proc[1].start_ms == 10, "start %lld",
        (long long)r->tl->proc[1].start_ms);
  CHECK(strstr((char *)b.data, "# Live at the peak: 187 bytes in 6 blocks at 10 ms "
                               "(pid 3, c.timeline)\n") != NULL,
        "text:\n%s", (char *)b.data);
  CHECK(strstr((char *)b.data, "#       (stacks without a symbolizable frame)\n") != NULL,
        "no-frames row");
  mp_buf_free(&b);
  rpt_free(r);

  /* peak_snapshot alone (no census), a process that started at 25 ms;
   * the raw profile's first id, without
   * frames, holding one 72704-byte block at exit: the exception pool */
  r = rpt_build(p, &o);
  const uint64_t ids3[] = {5, 10};
  const uint32_t stacks3[] = {MP_RAW_NO_FRAMES, s[0]};
  mp_timeline t3;
  memset(&t3, 0, sizeof t3);
  t3.pid = 9;
  t3.end_ms = 90;
  t3.start_ms = 25;
  t3.peak_t_ms = 40;
  t3.peak_bytes = 72704 + 100;
  t3.peak_blocks = 2;
  t3.at_peak = lives(2, (mp_timeline_live[]){{5, 72704, 1}, {10, 100, 1}});
  t3.n_at_peak = 2;
  t3.exit_bytes = 72704;
  t3.exit_blocks = 1;
  t3.at_exit = lives(1, (mp_timeline_live[]){{5, 72704, 1}});
  t3.n_at_exit = 1;
  rpt_timeline_input in3 = {"p.timeline", "p.raw", t3, ids3, stacks3, 2};
  CHECK(rpt_timeline_add(r, &in3, &e) == 0, "pool join: %s", e.msg);
  if (!r->tl) return check_result();
  CHECK(r->tl->proc[0].start_ms == 25, "start %lld", (long long)r->tl->proc[0].start_ms);
  CHECK(r->tl->n_at_exit == 1 && same(&r->tl->at_exit[0], RPT_TIMELINE_EH_POOL, 72704, 1) &&
            r->tl->pool_exit_bytes == 72704 && r->tl->pool_unnamed_blocks == 1,
        "the pool at exit");
  rpt_write_timeline_text(r, &b, "");
  mp_buf_u8(&b, 0);
  CHECK(strstr((char *)b.data, "Live at the peak: 72804 bytes in 2 blocks at 15 ms") &&
            strstr((char *)b.data, "Live at exit (never freed): 0 bytes in 0 blocks\n") &&
            strstr((char *)b.data, "Still reachable at exit: 72704 bytes in 1 block: the "
                                   "libstdc++ exception pool,"),
        "text:\n%s", (char *)b.data);
  mp_buf_free(&b);
  rpt_free(r);
  mp_profile_free(p);
  return check_result();
}
