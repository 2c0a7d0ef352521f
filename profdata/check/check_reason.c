/* check_reason.c - why a context reached no cold hint.
 *
 * In this order: a cold hint landed (no reason; but a context not cold
 * under check's thresholds says the build's thresholds differ); a hint landed that is not
 * cold: for a context clang calls cold, the call was hinted ambiguous
 * (reached by cold and not-cold contexts, and not cloned apart) or not
 * cold, worded by whether the binary has LTO clones (functions named
 * X.memprof.N: LTO's context disambiguation ran, and it hints each call it
 * handles cold or not cold, a mix it cannot clone apart not cold); for
 * the others, the threshold that kept it from being cold (its lifetime
 * under -memprof-ave-lifetime-cold-threshold, with the value that would
 * make it cold, or its access density not under
 * -memprof-lifetime-access-density-cold-threshold).  No hint landed: the
 * report says clang cannot match the call (inside a library, line 0,
 * column 0); the call at the context's frames is malloc & co. (clang
 * hints only operator new) or an operator new without a hint; the
 * call there is of another function (printf allocating inside);
 * the function holding the allocation is not in the binary; or it is, and
 * has no allocation call where the profile says (the profile does not
 * match the source).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "check_priv.h"
#include "profdata/model/alloc_type.h"

static const char *const CODES[CHK_R_NUM] = {
    "", "clang_cannot_match", "malloc", "not_rewritten", "not_in_binary",
    "stale_profile", "ambiguous_no_lto", "ambiguous_after_lto", "call_not_cold",
    "lifetime_threshold", "density_threshold", "verdict_differs",
};

const char *chk_reason_code(unsigned reason) {
  return reason < CHK_R_NUM ? CODES[reason] : "";
}

static mp_alloc_thresholds thresholds_of(const rpt *r, unsigned lifetime_s) {
  const rpt_clang_opts *o = &r->opts.clang;
  return (mp_alloc_thresholds){o->lifetime_access_density_cold, lifetime_s,
                               o->min_ave_lifetime_density_hot,
                               o->use_hot_hints};
}

static float density_of(const mpf_mib *m) {
  return (float)m->TotalLifetimeAccessDensity / (float)m->AllocCount / 100.0f;
}

/* An unhinted allocation call at the context's frames, or NULL. */
static const chk_site *unhinted_at(const chk *c, uint32_t stack) {
  const mp_profile *p = c->r->p;
  size_t b, e;
  chk_keys_at(c->site_keys, c->n_site_keys,
              &p->frames[mp_stack_frames(p, stack)[0]], &b, &e);
  for (size_t k = b; k < e; k++) {
    const chk_site *s = &c->sites[c->site_keys[k].idx];
    if (s->call->kind != CHK_HINTED &&
        chk_locs_match(p, stack, 0, s->locs, s->n))
      return s;
  }
  return NULL;
}

/* An allocation call inlined from, or in, function `guid`, or NULL. */
static const chk_site *site_in(const chk *c, uint64_t guid) {
  for (size_t k = 0; k < c->n_sites; k++)
    for (size_t i = 0; i < c->sites[k].n; i++)
      if (c->sites[k].locs[i].guid == guid) return &c->sites[k];
  return NULL;
}

static int has_guid(const chk *c, uint64_t g) {
  size_t lo = 0, hi = c->n_guids;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (c->guids[mid] < g) lo = mid + 1;
    else hi = mid;
  }
  return lo < c->n_guids && c->guids[lo] == g;
}

static unsigned no_hint_reason(chk *c, size_t i) {
  const rpt_ctx *rc = &c->r->ctx[i];
  chk_ctx *x = &c->ctx[i];
  if (rc->in_library || c->r->sites[rc->site].attr == RPT_UNMATCHED)
    return CHK_R_LIBRARY;
  const chk_site *s = unhinted_at(c, rc->stack);
  if (s) {
    x->near = s;
    return s->call->kind == CHK_C_ALLOC ? CHK_R_MALLOC : CHK_R_NOT_REWRITTEN;
  }
  /* a call of some other function there: the allocation is inside it
   * (a library's, as printf's buffer) */
  x->via = chk_call_at(c, 0, rc->stack, 0);
  if (x->via) return CHK_R_LIBRARY;
  const mp_frame *leaf = &c->r->p->frames[mp_stack_frames(c->r->p, rc->stack)[0]];
  if (!has_guid(c, leaf->guid)) return CHK_R_NOT_IN_BINARY;
  x->near = site_in(c, leaf->guid);
  return CHK_R_STALE;
}

void chk_decide_reason(chk *c, size_t i) {
  const rpt_ctx *rc = &c->r->ctx[i];
  chk_ctx *x = &c->ctx[i];
  x->reason = CHK_R_NONE;
  if (x->cold_hint) {
    if (rc->verdict != RPT_COLD) x->reason = CHK_R_VERDICT_DIFFERS;
    return;
  }
  if (!x->n_sites) {
    x->reason = (uint8_t)no_hint_reason(c, i);
    return;
  }
  if (rc->verdict == RPT_COLD) {
    int amb = 0;
    for (size_t j = 0; j < x->n_sites; j++)
      amb |= c->sites[x->sites[j]].call->value == 222;
    x->reason = !amb ? CHK_R_CALL_NOTCOLD
                : c->lto_clones ? CHK_R_AMBIGUOUS_LTO : CHK_R_AMBIGUOUS;
    return;
  }
  x->reason = density_of(rc->mib) >= c->r->opts.clang.lifetime_access_density_cold
                  ? CHK_R_DENSITY
                  : CHK_R_LIFETIME;
}

/* The largest -memprof-ave-lifetime-cold-threshold that makes the context
 * cold (clang's rule, alloc_type.c), or -1: none does. */
static long cold_lifetime_threshold(const rpt *r, const mpf_mib *m) {
  uint64_t s = m->TotalLifetime / m->AllocCount / 1000;
  for (long t = (long)(s > 1000000 ? 1000000 : s) + 1; t >= 0; t--) {
    mp_alloc_thresholds th = thresholds_of(r, (unsigned)t);
    if (mp_alloc_type(&th, m->TotalLifetimeAccessDensity, m->AllocCount,
                      m->TotalLifetime) == MP_ALLOC_COLD)
      return t;
    if (t < (long)s - 2) break;
  }
  return -1;
}

static const char *hint_class(int v) {
  return v == CHK_NO_VALUE ? "unknown" : v < 128 ? "cold" : v < 222 ? "notcold"
         : v < 254 ? "ambiguous" : "hot";
}

/* "FUNC line offset L column C" of the context's frame k. */
static void frame_words(chk *c, uint32_t frame, char *buf, size_t n) {
  const mp_frame *f = &c->r->p->frames[frame];
  char loc[300];
  rpt_frame_loc(c->r, frame, loc, sizeof loc);
  snprintf(buf, n, "%s (%s; line offset %" PRIu32 ", column %" PRIu32 ")",
           rpt_frame_name(c->r, frame), loc, f->line_offset, f->column);
}

const char *chk_reason_text(chk *c, size_t i, char *buf, size_t n) {
  const rpt_ctx *rc = &c->r->ctx[i];
  const chk_ctx *x = &c->ctx[i];
  const mpf_mib *m = rc->mib;
  uint32_t leaf = mp_stack_frames(c->r->p, rc->stack)[0];
  const chk_call *first = x->n_sites ? c->sites[x->sites[0]].call : NULL;
  const chk_call *near = x->near ? x->near->call : NULL;
  char fw[600];
  switch (x->reason) {
  case CHK_R_LIBRARY:
    if (x->via) {
      const char *callee = chk_elf_target_name(&c->elf, x->via->target);
      snprintf(buf, n, "the call there (0x%" PRIx64 ") is of %s, which "
               "allocated inside: clang hints only operator new calls in code "
               "it compiles", x->via->addr, callee ? callee : "another function");
    } else {
      snprintf(buf, n, "clang cannot match this call: it allocates inside a "
               "library, or at a location no compiled call has (line 0, or "
               "column 0)");
    }
    break;
  case CHK_R_MALLOC:
    snprintf(buf, n, "allocated by %s (call at 0x%" PRIx64 "): clang hints "
             "only operator new", near->callee, near->addr);
    break;
  case CHK_R_NOT_REWRITTEN:
    snprintf(buf, n, "%s at 0x%" PRIx64 " has no hint: clang did not mark "
             "the call (the build had no -optimize-hot-cold-new, or did not "
             "inline as the profiled build did)", near->callee, near->addr);
    break;
  case CHK_R_NOT_IN_BINARY:
    frame_words(c, leaf, fw, sizeof fw);
    snprintf(buf, n, "the function is not in the binary: %s", fw);
    break;
  case CHK_R_STALE: {
    frame_words(c, leaf, fw, sizeof fw);
    const mp_frame *lf = &c->r->p->frames[leaf];
    int k = snprintf(buf, n, "the profile does not match the source of %s: "
                     "the binary has no allocation call there", fw);
    for (size_t j = 0; x->near && j < x->near->n; j++)
      if (x->near->locs[j].guid == lf->guid && k > 0 && (size_t)k < n) {
        snprintf(buf + k, n - (size_t)k, " (its call at 0x%" PRIx64
                 " is at line offset %" PRIu32 ", column %" PRIu32 ")",
                 near->addr, x->near->locs[j].line_offset,
                 x->near->locs[j].column);
        break;
      }
    break;
  }
  case CHK_R_AMBIGUOUS:
    snprintf(buf, n, "the call at 0x%" PRIx64 " is reached by cold and "
             "not-cold contexts and was hinted ambiguous (222), and the binary "
             "has no LTO clones (no function named *.memprof.N): it was built "
             "without LTO, or with LTO without context disambiguation "
             "(-enable-memprof-context-disambiguation), which clones a call "
             "per context", first->addr);
    break;
  case CHK_R_AMBIGUOUS_LTO:
    snprintf(buf, n, "the call at 0x%" PRIx64 " is reached by cold and "
             "not-cold contexts and was hinted ambiguous (222), though LTO "
             "cloned functions of this binary (%zu clone%s, *.memprof.N): "
             "LTO's context disambiguation hints every call it handles cold or "
             "not cold, so it left this one as compiled: its translation unit "
             "was compiled without -flto, or its contexts' callers did not "
             "match the calls LTO saw (inlined differently than in the "
             "profiled build)", first->addr, c->lto_clones,
             c->lto_clones == 1 ? "" : "s");
    break;
  case CHK_R_CALL_NOTCOLD:
    if (c->lto_clones)
      snprintf(buf, n, "the call at 0x%" PRIx64 " was hinted %s (%d): LTO "
               "cloned functions of this binary (%zu clone%s, *.memprof.N), "
               "but this context's path reaches this copy: context "
               "disambiguation could not clone it apart from the not-cold "
               "contexts at the call (they part at an indirect call, or inside "
               "a recursion) and hints such a mix not cold; or the build had "
               "other -memprof-* thresholds than check was given", first->addr,
               hint_class(first->value), first->value, c->lto_clones,
               c->lto_clones == 1 ? "" : "s");
    else
      snprintf(buf, n, "the call at 0x%" PRIx64 " was hinted %s (%d): its "
               "contexts together were not given cold, or the build had "
               "other -memprof-* thresholds than check was given (they go on "
               "the compile command, also with LTO)", first->addr,
               hint_class(first->value), first->value);
    break;
  case CHK_R_LIFETIME: {
    double s = (double)m->TotalLifetime / (double)m->AllocCount / 1000.0;
    long t = cold_lifetime_threshold(c->r, m);
    int k = snprintf(buf, n, "not cold: average lifetime %.3f s is under "
                     "-memprof-ave-lifetime-cold-threshold=%u", s,
                     c->r->opts.clang.ave_lifetime_cold);
    if (k > 0 && (size_t)k < n && t >= 0)
      snprintf(buf + k, n - (size_t)k, "; =%ld would make it cold", t);
    break;
  }
  case CHK_R_DENSITY:
    snprintf(buf, n, "not cold: access density %.4g per byte per second is "
             "not under -memprof-lifetime-access-density-cold-threshold=%g",
             (double)density_of(m),
             (double)c->r->opts.clang.lifetime_access_density_cold);
    break;
  case CHK_R_VERDICT_DIFFERS:
    snprintf(buf, n, "a cold hint landed (0x%" PRIx64 ") though under these "
             "thresholds the context is %s: the build had other -memprof-* "
             "thresholds than check was given", first->addr,
             rpt_verdict_name(rc->verdict));
    break;
  default: buf[0] = 0; break;
  }
  return buf;
}
