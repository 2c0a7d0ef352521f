/* report_text.c - the text report (the default, to stdout): the summary,
 * what clang-22 would attach to the allocation calls, the top contexts by
 * the chosen key with their stacks (leaf first, demangled, file:line:col)
 * or per-function / per-file totals, and with --base what changed.
 *
 * The "clang-22" line is meant to be checked against the IR of a
 * -fmemory-profile-use build: calls=... counts the "memprof" attributes on
 * allocation calls, mib=... the !memprof MIB nodes; clang only annotates
 * calls of operator new, and only those compiled with the profile.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static void verdict_line(mp_buf *o, const char *what, uint64_t bytes,
                         uint64_t ctx, uint64_t total) {
  char b[32], p[32];
  mp_buf_printf(o, "    %-22s %12s %7s  %" PRIu64 " context%s\n", what,
                rpt_human_bytes(bytes, b, sizeof b), rpt_fmt_pct(bytes, total, p, sizeof p), ctx,
                ctx == 1 ? "" : "s");
}

static void summary(rpt *r, mp_buf *o) {
  const rpt_summary *s = &r->sum;
  const rpt_clang_opts *c = &r->opts.clang;
  char b[32], l[32];
  mp_buf_printf(o, "Summary\n");
  if (r->p->n_programs) {
    mp_buf_printf(o, "  program%s               ", r->p->n_programs > 1 ? "s" : " ");
    rpt_programs(r->p, o, 0);
    mp_buf_u8(o, '\n');
  }
  mp_buf_printf(o, "  contexts               %" PRIu64 "\n", s->contexts);
  mp_buf_printf(o, "  allocation calls       %" PRIu64 "\n", s->sites);
  /* the exception pool of a linked program has no context (report_pool.c):
   * its timeline names it, and it is counted here */
  uint64_t unnamed = r->tl ? r->tl->pool_unnamed_blocks : 0;
  if (unnamed)
    mp_buf_printf(o, "  allocations            %" PRIu64 " (%" PRIu64 " in the "
                     "contexts, %" PRIu64 " the " RPT_EH_POOL_NAME "'s)\n",
                  s->allocs + unnamed, s->allocs, unnamed);
  else
    mp_buf_printf(o, "  allocations            %" PRIu64 "\n", s->allocs);
  mp_buf_printf(o, "  bytes                  %s (%" PRIu64 ")\n",
                rpt_human_bytes(s->bytes, b, sizeof b), s->bytes);
  if (r->has_lifetime)
    mp_buf_printf(o, "  average lifetime       %s\n",
                  rpt_fmt_ms(s->allocs ? (double)s->lifetime / s->allocs : 0, l,
                             sizeof l));
  if (r->p->uninstrumented)
    ; /* nothing to say about accesses: the note at the top says why */
  else if (r->has_accesses)
    mp_buf_printf(o, "  never accessed         %" PRIu64 " allocation%s, %s in %" PRIu64
                  " context%s\n",
                  s->never_accessed_allocs, s->never_accessed_allocs == 1 ? "" : "s",
                  rpt_human_bytes(s->never_accessed_bytes, b, sizeof b),
                  s->never_accessed_ctx, s->never_accessed_ctx == 1 ? "" : "s");
  else
    mp_buf_printf(o, "  never accessed         unknown: the profile has no "
                     "access counts (TotalAccessCount; merge with "
                     "--memprof-full-schema keeps them)\n");
  if (r->has_lifetime)
    mp_buf_printf(o, "  short-lived (< 1 ms)   %" PRIu64 " allocation%s, %s\n",
                  s->short_lived_allocs, s->short_lived_allocs == 1 ? "" : "s",
                  rpt_human_bytes(s->short_lived_bytes, b, sizeof b));
  if (s->symtab_ctx)
    mp_buf_printf(o, "  no debug info          %" PRIu64 " of %" PRIu64
                  " contexts have frames named from ELF symbol tables (%" PRIu64
                  " frame%s, shown without file or line, as \"?\"; "
                  "\"module+0x...\" where no function symbol covers the "
                  "address)\n",
                  s->symtab_ctx, s->contexts, s->symtab_frames,
                  s->symtab_frames == 1 ? "" : "s");
  uint64_t pool_bytes = s->pool_bytes + (r->tl ? r->tl->pool_unnamed_bytes : 0);
  uint64_t pool_blocks = s->pool_allocs + unnamed;
  if (pool_bytes)
    mp_buf_printf(o, "  exception pool         %s (%" PRIu64 ") in %" PRIu64
                     " block%s: the " RPT_EH_POOL_NAME ", " RPT_EH_POOL_WHY "\n",
                  rpt_human_bytes(pool_bytes, b, sizeof b), pool_bytes,
                  pool_blocks, pool_blocks == 1 ? "" : "s");
  if (r->tl) rpt_write_timeline_summary(r, o, "  ");
  if (r->p->uninstrumented) return; /* no verdicts: the note says so */
  mp_buf_printf(o, "\nclang-22's verdicts (cold: lifetime access density < %g "
                   "accesses/byte/s and average lifetime >= %u s; hot: density > "
                   "%u, %s)\n",
                (double)c->lifetime_access_density_cold, c->ave_lifetime_cold,
                c->min_ave_lifetime_density_hot,
                c->use_hot_hints ? "hot hints on" : "hot hints off");
  if (!r->has_density) {
    mp_buf_printf(o, "  unknown: the profile has no TotalLifetimeAccessDensity\n");
    return;
  }
  if (r->no_access_seen)
    mp_buf_printf(o, "  %" PRIu64 " of %zu contexts recorded no access: the "
                     "program was probably not compiled with -fmemory-profile "
                     "(or its access counts were dropped), and clang would take "
                     "every long-lived context for cold; verdicts are not shown "
                     "per context\n",
                  r->accessless_ctx, r->n_ctx);
  verdict_line(o, "cold", s->bytes_cold, s->ctx_cold, s->bytes);
  verdict_line(o, "notcold", s->bytes_notcold, s->ctx_notcold, s->bytes);
  verdict_line(o, "hot", s->bytes_hot, s->ctx_hot, s->bytes);
  verdict_line(o, "at ambiguous calls", s->bytes_ambiguous, s->ctx_ambiguous,
               s->bytes);
  mp_buf_printf(o, "  clang-22: calls cold=%" PRIu64 " notcold=%" PRIu64
                   " hot=%" PRIu64 " ambiguous=%" PRIu64 "; mib cold=%" PRIu64
                   " notcold=%" PRIu64 "\n",
                s->site_cold, s->site_notcold, s->site_hot, s->site_ambiguous,
                s->mib_cold, s->mib_notcold);
  mp_buf_printf(o, "  (\"memprof\" attributes on calls of operator new compiled "
                   "with the profile; an ambiguous call carries !memprof "
                   "contexts, which only LTO's cloning uses)\n");
  if (s->site_unmatched)
    mp_buf_printf(o, "  %" PRIu64 " allocation call%s (%s) clang cannot match: the "
                     "profiled build merged code there (line 0 or column 0), or the "
                     "block was allocated inside a library called there\n",
                  s->site_unmatched, s->site_unmatched == 1 ? "" : "s",
                  rpt_human_bytes(s->bytes_unmatched, b, sizeof b));
  if (s->site_inlined)
    mp_buf_printf(o, "  %" PRIu64 " of the calls are allocations the profiled build "
                     "inlined: clang matches after its pre-inliner only, which "
                     "inlines by a cost the profile does not record, and may find "
                     "one in a function not inlined yet, one call for the contexts "
                     "of all its callers; inlining none: calls cold=%" PRIu64
                     " notcold=%" PRIu64 " hot=%" PRIu64 " ambiguous=%" PRIu64 "\n",
                  s->site_inlined, s->leaf_cold, s->leaf_notcold, s->leaf_hot,
                  s->leaf_ambiguous);
}

static const char *verdict_of(const rpt *r, const rpt_ctx *c, char *buf,
                              size_t n) {
  if (!rpt_verdicts_known(r)) return "?";
  unsigned attr = r->sites[c->site].attr;
  snprintf(buf, n, "%s%s", rpt_verdict_name(c->verdict),
           attr == RPT_AMBIGUOUS    ? " (ambiguous call)"
           : attr == RPT_UNMATCHED ? " (call not matched)"
                                   : "");
  return buf;
}

static void top_contexts(rpt *r, mp_buf *o) {
  size_t n = r->opts.top && r->opts.top < r->n_ctx ? r->opts.top : r->n_ctx;
  uint32_t *ord = rpt_order(r, r->opts.sort);
  char b[32], p[32], a[32], l[32], d[48], v[48];
  /* a sampled profile's estimates get their 95% range (rpt_sampling_error) */
  int sampled = mp_max_interval(r->p) != 0;
  /* a program not compiled with -fmemory-profile has no access counts:
   * its table has no column made of them */
  int acc_cols = rpt_accesses_meaningful(r);
  /* the lifetime column is as wide as its widest value: an average of a
   * few ms-ticks over many blocks has many digits (0.0000229 ms) */
  int life_w = 11;
  for (size_t i = 0; i < n && r->has_lifetime; i++) {
    int w = (int)strlen(rpt_fmt_ms(rpt_avg_lifetime_ms(&r->ctx[ord[i]]), l, sizeof l));
    if (w > life_w) life_w = w;
  }
  mp_buf_printf(o, "\nTop %zu of %zu contexts by %s\n", n, r->n_ctx,
                rpt_key_name(r->opts.sort));
  mp_buf_printf(o, "  %4s %12s%s %6s %10s %10s %*s", "#", "bytes",
                sampled ? "  95% range" : "", "%", "allocs", "avg size", life_w,
                "avg life");
  if (acc_cols) mp_buf_printf(o, " %10s %10s  %s", "density", "accesses", "verdict");
  mp_buf_printf(o, "\n");
  for (size_t i = 0; i < n; i++) {
    const rpt_ctx *c = &r->ctx[ord[i]];
    char acc[24] = "-";
    if (r->has_accesses)
      snprintf(acc, sizeof acc, "%" PRIu64, c->mib->TotalAccessCount);
    char e[32] = ""; /* the column is there only when sampled */
    if (sampled) {
      char t[16];
      rpt_error_text(rpt_sampling_error(r, c), t, sizeof t);
      snprintf(e, sizeof e, " %10s", t);
    }
    mp_buf_printf(o, "  %4zu %12s%s %6s %10" PRIu32 " %10s %*s", i + 1,
                  rpt_human_bytes(c->mib->TotalSize, b, sizeof b), e,
                  rpt_fmt_pct(c->mib->TotalSize, r->sum.bytes, p, sizeof p),
                  c->mib->AllocCount, rpt_fmt_avg_size(c, a, sizeof a), life_w,
                  r->has_lifetime ? rpt_fmt_ms(rpt_avg_lifetime_ms(c), l, sizeof l) : "-");
    if (acc_cols)
      mp_buf_printf(o, " %10s %10s  %s", rpt_fmt_sig3(rpt_density(c), d, sizeof d),
                    acc, verdict_of(r, c, v, sizeof v));
    mp_buf_printf(o, "\n");
    if (c->eh_pool)
      mp_buf_printf(o, "      [" RPT_EH_POOL_NAME ": " RPT_EH_POOL_WHY "]\n");
    rpt_print_stack(r, o, c->stack, "");
  }
  free(ord);
}

static void top_groups(rpt *r, mp_buf *o) {
  size_t n_groups;
  rpt_group *g = rpt_groups(r, r->opts.by, &n_groups);
  size_t n = r->opts.top && r->opts.top < n_groups ? r->opts.top : n_groups;
  char b[32], p[32], cb[32];
  const char *what = r->opts.by == RPT_BY_FUNCTION ? "functions" : "files";
  mp_buf_printf(o, "\nTop %zu of %zu %s by %s (totals of the contexts through "
                   "each)\n",
                n, n_groups, what, rpt_key_name(r->opts.sort));
  /* cold bytes: not for a program without access counts */
  int cold = rpt_accesses_meaningful(r);
  mp_buf_printf(o, "  %4s %12s %6s %10s %9s%s  %s\n", "#", "bytes", "%",
                "allocs", "contexts", cold ? "   cold bytes" : "",
                r->opts.by == RPT_BY_FUNCTION ? "function" : "file");
  for (size_t i = 0; i < n; i++) {
    char cc[40] = "";
    if (cold)
      snprintf(cc, sizeof cc, " %12s",
               rpt_verdicts_known(r) ? rpt_human_bytes(g[i].bytes_cold, cb, sizeof cb) : "?");
    mp_buf_printf(o, "  %4zu %12s %6s %10" PRIu64 " %9" PRIu64 "%s  %s\n",
                  i + 1, rpt_human_bytes(g[i].bytes, b, sizeof b),
                  rpt_fmt_pct(g[i].bytes, r->sum.bytes, p, sizeof p), g[i].allocs,
                  g[i].contexts, cc, g[i].name);
  }
  free(g);
}

/* ---- --base ------------------------------------------------------------ */

static int64_t delta_of(const rpt *r, const rpt_ctx *c) {
  uint64_t old = c->base_match ? r->base->ctx[c->base_match - 1].mib->TotalSize : 0;
  return (int64_t)c->mib->TotalSize - (int64_t)old;
}

static int cmp_delta(const void *a, const void *b, void *arg) {
  const rpt *r = arg;
  int64_t x = delta_of(r, &r->ctx[*(const uint32_t *)a]);
  int64_t y = delta_of(r, &r->ctx[*(const uint32_t *)b]);
  uint64_t ax = x < 0 ? -(uint64_t)x : (uint64_t)x, ay = y < 0 ? -(uint64_t)y : (uint64_t)y;
  if (ax != ay) return ax > ay ? -1 : 1;
  return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static void diff(rpt *r, mp_buf *o) {
  const rpt *base = r->base;
  uint64_t grew = 0, shrank = 0, added = 0, gone = 0, gone_bytes = 0;
  for (size_t i = 0; i < r->n_ctx; i++) {
    int64_t d = delta_of(r, &r->ctx[i]);
    if (!r->ctx[i].base_match) added++;
    else if (d > 0) grew++;
    else if (d < 0) shrank++;
  }
  for (size_t j = 0; j < base->n_ctx; j++)
    if (!base->ctx[j].base_match) gone++, gone_bytes += base->ctx[j].mib->TotalSize;
  char b0[32], b1[32], d[32];
  int64_t total = (int64_t)r->sum.bytes - (int64_t)base->sum.bytes;
  mp_buf_printf(o, "\nCompared with the base (%s)\n", r->opts.base);
  mp_buf_printf(o, "  bytes                  %s -> %s (%s%s)\n",
                rpt_human_bytes(base->sum.bytes, b0, sizeof b0),
                rpt_human_bytes(r->sum.bytes, b1, sizeof b1), total < 0 ? "-" : "+",
                rpt_human_bytes(total < 0 ? -(uint64_t)total : (uint64_t)total, d, sizeof d));
  mp_buf_printf(o, "  allocations            %" PRIu64 " -> %" PRIu64 "\n",
                base->sum.allocs, r->sum.allocs);
  mp_buf_printf(o, "  contexts               %" PRIu64 " -> %" PRIu64
                   ": %" PRIu64 " new, %" PRIu64 " gone (%s), %" PRIu64
                   " grew, %" PRIu64 " shrank\n",
                base->sum.contexts, r->sum.contexts, added, gone,
                rpt_human_bytes(gone_bytes, b0, sizeof b0), grew, shrank);
  mp_buf_printf(o, "  cold bytes             %s -> %s\n",
                rpt_human_bytes(base->sum.bytes_cold, b0, sizeof b0),
                rpt_human_bytes(r->sum.bytes_cold, b1, sizeof b1));
  uint32_t *ord = mp_xmalloc((r->n_ctx + 1) * sizeof *ord);
  size_t n = 0;
  for (size_t i = 0; i < r->n_ctx; i++)
    if (delta_of(r, &r->ctx[i]) != 0) ord[n++] = (uint32_t)i;
  qsort_r(ord, n, sizeof *ord, cmp_delta, r);
  if (r->opts.top && n > r->opts.top) n = r->opts.top;
  mp_buf_printf(o, "\nLargest changes in bytes (contexts in both or new)\n");
  for (size_t i = 0; i < n; i++) {
    const rpt_ctx *c = &r->ctx[ord[i]];
    int64_t dl = delta_of(r, c);
    mp_buf_printf(o, "  %4zu %s%-12s %s\n", i + 1, dl < 0 ? "-" : "+",
                  rpt_human_bytes(dl < 0 ? -(uint64_t)dl : (uint64_t)dl, d, sizeof d),
                  c->base_match ? (dl < 0 ? "shrank" : "grew") : "new");
    rpt_print_stack(r, o, c->stack, "");
  }
  free(ord);
}

void rpt_write_text(rpt *r, mp_buf *o) {
  if (!r->n_ctx) {
    mp_buf_printf(o, "The profile is empty: it has no allocation contexts.\n");
    if (r->tl) rpt_write_timeline_text(r, o, "");
    if (r->roots) rpt_write_roots_text(r, o, "");
    if (r->base) diff(r, o);
    return;
  }
  if (!r->has_names)
    mp_buf_printf(o, "Note: the profile has no function names; functions are "
                     "shown by GUID and lines as offsets from the function's "
                     "first line.\n\n");
  char note[RPT_NOTE_SIZE];
  if (rpt_sampled_note(r->p, note, sizeof note))
    mp_buf_printf(o, "Note: %s (allocations, bytes, accesses and lifetimes "
                     "weighted by the inverse of each block's chance to be "
                     "sampled; minima and maxima are those of the sampled "
                     "blocks; a context's \"95%% range\" is how far sampling "
                     "alone may have put its bytes and allocations).\n\n", note);
  if (rpt_uninstrumented_note(r->p))
    mp_buf_printf(o, "Note: %s.\n\n", rpt_uninstrumented_note(r->p));
  summary(r, o);
  if (r->opts.by == RPT_BY_CONTEXT)
    top_contexts(r, o);
  else
    top_groups(r, o);
  rpt_write_temporaries_text(r, o);
  if (r->tl) rpt_write_timeline_text(r, o, "");
  if (r->roots) rpt_write_roots_text(r, o, "");
  if (r->base) diff(r, o);
}
