/* report_temporary.c - temporary allocations in the text report: blocks
 * their thread freed before allocating again (heaptrack's "temporary"),
 * counted per context by the runtime when every allocation is recorded
 * (docs/raw-format.md, section 7; mp_temporaries).  The section gives
 * their total and the contexts with the most, each with the share of its
 * own allocations that were temporary: a context whose blocks are nearly
 * all temporary could keep them on the stack or reuse one.  The HTML page
 * shows the same table (report_html.c, its "tmp" array). */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>

#include "report.h"

static uint64_t temporaries(const rpt *r, const rpt_ctx *c) {
  return mp_temporaries(r->p, c->stack);
}

static int cmp_temporaries(const void *a, const void *b, void *arg) {
  const rpt *r = arg;
  const rpt_ctx *x = &r->ctx[*(const uint32_t *)a];
  const rpt_ctx *y = &r->ctx[*(const uint32_t *)b];
  uint64_t tx = temporaries(r, x), ty = temporaries(r, y);
  if (tx != ty) return tx < ty ? 1 : -1;
  /* then as the top contexts, by bytes; then by the stacks' frames, not
   * their ids: the same order for a raw profile and its merged file */
  uint64_t bx = x->mib->TotalSize, by = y->mib->TotalSize;
  if (bx != by) return bx < by ? 1 : -1;
  return mp_stack_cmp(r->p, x->stack, y->stack);
}

uint32_t *rpt_temporaries_order(const rpt *r, size_t *n) {
  uint32_t *ord = mp_xmalloc((r->n_ctx + 1) * sizeof *ord);
  *n = 0;
  for (size_t i = 0; i < r->n_ctx; i++)
    if (temporaries(r, &r->ctx[i])) ord[(*n)++] = (uint32_t)i;
  qsort_r(ord, *n, sizeof *ord, cmp_temporaries, (void *)r);
  return ord;
}

void rpt_write_temporaries_text(rpt *r, mp_buf *o) {
  if (!r->p->temporaries) return;
  size_t n;
  uint32_t *ord = rpt_temporaries_order(r, &n);
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++) total += temporaries(r, &r->ctx[ord[i]]);
  size_t shown = r->opts.top && r->opts.top < n ? r->opts.top : n;
  mp_buf_printf(o, "\nTemporary allocations (freed before their thread "
                   "allocated again): %" PRIu64 " of %" PRIu64 " (%.1f%%), "
                   "in %zu context%s\n",
                total, r->sum.allocs,
                r->sum.allocs ? 100.0 * (double)total / (double)r->sum.allocs : 0.0,
                n, n == 1 ? "" : "s");
  if (shown)
    mp_buf_printf(o, "  %4s %10s %12s %10s %12s\n", "#", "temporary",
                  "% of allocs", "allocs", "bytes");
  char b[32];
  for (size_t i = 0; i < shown; i++) {
    const rpt_ctx *c = &r->ctx[ord[i]];
    uint64_t t = temporaries(r, c);
    mp_buf_printf(o, "  %4zu %10" PRIu64 " %11.1f%% %10" PRIu32 " %12s\n", i + 1, t,
                  c->mib->AllocCount ? 100.0 * (double)t / c->mib->AllocCount : 0.0,
                  c->mib->AllocCount, rpt_human_bytes(c->mib->TotalSize, b, sizeof b));
    rpt_print_stack(r, o, c->stack, "");
  }
  free(ord);
}
