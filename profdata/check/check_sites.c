/* check_sites.c - `check --hotcold-sites=FILE`: what a run of the
 * optimized binary served at each hinted call, from libmemprof-hotcold's
 * call-site file (profdata/hcsites/), joined to the calls check found.
 *
 * A record belongs to the binary when its module has the binary's GNU
 * build id (or, when either has none, the same file name).  It joins the
 * hinted call whose instruction ends at the record's address (the
 * address the call returns to).  A form reached by a tail jump records
 * its caller's return address: a record after a direct call of function
 * F joins F's hinted tail jump with the record's hint (when F has exactly
 * one).  Records of one call (several callers, several hint values) are
 * summed; a record at no hinted call is counted apart.
 *
 * A call that served blocks cold "died young" when its blocks' average
 * lifetime in the run is under the profile's cold lifetime threshold
 * (--memprof-ave-lifetime-cold-threshold): the run did not bear the hint
 * out.  That needs a file written with site_lifetimes=1.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_priv.h"

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

static int is_binary(const chk *c, const mp_hcs_module *m) {
  const msym_module *b = msym_module_at(c->sym, 0);
  if (b->build_id_len && m->build_id_len)
    return b->build_id_len == m->build_id_len &&
           !memcmp(b->build_id, m->build_id, m->build_id_len);
  return !strcmp(base_name(b->path), base_name(m->path));
}

/* How many of the allocation calls lie before addr. */
static size_t sites_before(const chk *c, uint64_t addr) {
  size_t lo = 0, hi = c->n_sites;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (c->sites[mid].call->addr < addr) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* The direct call returning to ra, or NULL. */
static const chk_call *edge_returning_to(const chk *c, uint64_t ra) {
  size_t lo = 0, hi = c->calls.n_edge;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (c->calls.edge[mid].addr < ra) lo = mid + 1;
    else hi = mid;
  }
  const chk_call *e = lo ? &c->calls.edge[lo - 1] : NULL;
  return e && !e->jump && e->addr + e->len == ra ? e : NULL;
}

/* The hinted call the record at ra with hint `hint` was made by: the
 * call returning to ra, or else the one hinted tail jump with that hint
 * in the function that the call returning to ra calls; NULL if none. */
static chk_site *site_of(chk *c, uint64_t ra, unsigned hint) {
  size_t i = sites_before(c, ra);
  chk_site *s = i ? &c->sites[i - 1] : NULL;
  if (s && s->call->kind == CHK_HINTED && !s->call->jump &&
      s->call->addr + s->call->len == ra)
    return s;
  const chk_call *e = edge_returning_to(c, ra);
  if (!e) return NULL;
  chk_site *found = NULL;
  for (i = sites_before(c, e->target); i < c->n_sites; i++) {
    s = &c->sites[i];
    if (s->call->func != e->target) break;
    if (s->call->kind != CHK_HINTED || !s->call->jump ||
        s->call->value != (int)hint)
      continue;
    if (found) return NULL; /* two such jumps: which one is unknown */
    found = s;
  }
  return found;
}

static void add_record(mp_hcs_site *to, const mp_hcs_site *r) {
  uint64_t had = to->freed + to->live, more = r->freed + r->live;
  to->cold_allocs += r->cold_allocs;
  to->cold_bytes += r->cold_bytes;
  to->other_allocs += r->other_allocs;
  to->other_bytes += r->other_bytes;
  to->freed += r->freed;
  to->live += r->live;
  to->lt_total_ns += r->lt_total_ns;
  if (more && (!had || r->lt_min_ns < to->lt_min_ns)) to->lt_min_ns = r->lt_min_ns;
  if (more && r->lt_max_ns > to->lt_max_ns) to->lt_max_ns = r->lt_max_ns;
}

static uint64_t measured(const mp_hcs_site *s) { return s->freed + s->live; }

static int died_young(const chk *c, const mp_hcs_site *s) {
  uint64_t n = measured(s);
  return c->run->sites->lifetimes && s->cold_allocs && n &&
         (double)s->lt_total_ns / (double)n <
             (double)c->r->opts.clang.ave_lifetime_cold * 1e9;
}

void chk_join_run(chk *c) {
  const mp_hcs *h = c->run->sites;
  chk_run_sum *sum = &c->run_sum;
  for (size_t i = 0; i < h->n_sites; i++) {
    const mp_hcs_site *r = &h->sites[i];
    chk_site *s;
    if (!is_binary(c, &h->modules[r->module])) {
      sum->other_modules++;
    } else if ((s = site_of(c, r->address, r->hint)) != NULL) {
      add_record(&s->run, r);
    } else {
      sum->unjoined++;
      sum->unjoined_allocs += r->cold_allocs + r->other_allocs;
      sum->unjoined_bytes += r->cold_bytes + r->other_bytes;
    }
  }
  for (size_t i = 0; i < c->n_sites; i++) {
    chk_site *s = &c->sites[i];
    if (s->call->kind != CHK_HINTED || !(s->run.cold_allocs + s->run.other_allocs))
      continue;
    sum->joined++;
    sum->cold_allocs += s->run.cold_allocs;
    sum->cold_bytes += s->run.cold_bytes;
    sum->other_allocs += s->run.other_allocs;
    sum->other_bytes += s->run.other_bytes;
    s->died_young = (uint8_t)died_young(c, &s->run);
    sum->died_young += s->died_young;
  }
}

/* ---- text ---------------------------------------------------------------- */

/* 10000 -> "10,000". */
static const char *grouped(uint64_t v, char *buf, size_t n) {
  char d[24];
  int len = snprintf(d, sizeof d, "%" PRIu64, v), k = 0;
  for (int i = 0; i < len && (size_t)k + 2 < n; i++) {
    if (i && (len - i) % 3 == 0) buf[k++] = ',';
    buf[k++] = d[i];
  }
  buf[k] = 0;
  return buf;
}

/* A duration in the largest unit it reaches: "80 ns", "9.87 ms", "1.5 s". */
static const char *seconds(uint64_t ns, char *buf, size_t n) {
  static const char *const unit[] = {"ns", "us", "ms", "s"};
  double x = (double)ns;
  int u = 0;
  while (x >= 1000 && u < 3) x /= 1000, u++;
  char d[48];
  snprintf(buf, n, "%s %s", rpt_fmt_sig3(x, d, sizeof d), unit[u]);
  return buf;
}

void chk_text_run(const chk *c, const chk_site *s, mp_buf *o) {
  const mp_hcs_site *r = &s->run;
  uint64_t allocs = r->cold_allocs + r->other_allocs;
  char a[32], b[32], b2[32], t[48], t2[48], t3[48];
  mp_buf_printf(o, "    run: %s hint at %s:%u: %s allocation%s",
                chk_hint_class(s->call->value),
                s->n && s->frames[0].file ? base_name(s->frames[0].file) : "?",
                s->n ? s->frames[0].line : 0, grouped(allocs, a, sizeof a),
                allocs == 1 ? "" : "s");
  if (r->cold_allocs || !r->other_allocs)
    mp_buf_printf(o, ", %s served cold", rpt_human_bytes(r->cold_bytes, b, sizeof b));
  if (r->other_allocs)
    mp_buf_printf(o, ", %s not cold", rpt_human_bytes(r->other_bytes, b2, sizeof b2));
  if (c->run->sites->lifetimes && measured(r))
    mp_buf_printf(o, ", average lifetime %s (min %s, max %s)",
                  seconds(r->lt_total_ns / measured(r), t, sizeof t),
                  seconds(r->lt_min_ns, t2, sizeof t2),
                  seconds(r->lt_max_ns, t3, sizeof t3));
  mp_buf_printf(o, "\n");
  if (s->died_young)
    mp_buf_printf(o, "    died young: served cold, yet its blocks lived %s on "
                  "average, under the cold lifetime threshold of %u s "
                  "(--memprof-ave-lifetime-cold-threshold)\n",
                  seconds(r->lt_total_ns / measured(r), t, sizeof t),
                  c->r->opts.clang.ave_lifetime_cold);
}

void chk_text_run_summary(const chk *c, mp_buf *o) {
  const chk_run_sum *s = &c->run_sum;
  char a[32], b[32], a2[32], b2[32];
  mp_buf_printf(o, "  optimized run    %s: %" PRIu64 " hinted call%s served %s "
                "allocation%s cold (%s), %s not cold (%s); %" PRIu64
                " died young\n",
                c->run->path, s->joined, s->joined == 1 ? "" : "s",
                grouped(s->cold_allocs, a, sizeof a),
                s->cold_allocs == 1 ? "" : "s",
                rpt_human_bytes(s->cold_bytes, b, sizeof b),
                grouped(s->other_allocs, a2, sizeof a2),
                rpt_human_bytes(s->other_bytes, b2, sizeof b2), s->died_young);
  if (s->unjoined)
    mp_buf_printf(o, "    %" PRIu64 " site%s at no hinted call of the binary "
                  "(a tail jump's caller?): %" PRIu64 " allocations, %" PRIu64
                  " bytes\n", s->unjoined, s->unjoined == 1 ? "" : "s",
                  s->unjoined_allocs, s->unjoined_bytes);
  if (s->other_modules)
    mp_buf_printf(o, "    %" PRIu64 " site%s in other modules\n", s->other_modules,
                  s->other_modules == 1 ? "" : "s");
}

/* ---- JSON ------------------------------------------------------------------ */

void chk_json_run(const chk *c, const chk_site *s, mp_buf *o) {
  const mp_hcs_site *r = &s->run;
  mp_buf_printf(o, ",\"run\":{\"cold_allocs\":%" PRIu64 ",\"cold_bytes\":%" PRIu64
                ",\"other_allocs\":%" PRIu64 ",\"other_bytes\":%" PRIu64,
                r->cold_allocs, r->cold_bytes, r->other_allocs, r->other_bytes);
  if (c->run->sites->lifetimes)
    mp_buf_printf(o, ",\"freed\":%" PRIu64 ",\"live\":%" PRIu64
                  ",\"lifetime_avg_ns\":%" PRIu64 ",\"lifetime_min_ns\":%" PRIu64
                  ",\"lifetime_max_ns\":%" PRIu64 ",\"died_young\":%s",
                  r->freed, r->live, measured(r) ? r->lt_total_ns / measured(r) : 0,
                  r->lt_min_ns, r->lt_max_ns, s->died_young ? "true" : "false");
  mp_buf_put(o, "}", 1);
}

void chk_json_run_summary(const chk *c, mp_buf *o) {
  const chk_run_sum *s = &c->run_sum;
  mp_buf_printf(o, ",\"run\":{\"file\":\"");
  rpt_json_str(o, c->run->path);
  mp_buf_printf(o, "\",\"lifetimes\":%s,\"joined_calls\":%" PRIu64
                ",\"cold_allocs\":%" PRIu64 ",\"cold_bytes\":%" PRIu64
                ",\"other_allocs\":%" PRIu64 ",\"other_bytes\":%" PRIu64
                ",\"died_young_calls\":%" PRIu64 ",\"unjoined_sites\":%" PRIu64
                ",\"unjoined_allocs\":%" PRIu64 ",\"unjoined_bytes\":%" PRIu64
                ",\"other_module_sites\":%" PRIu64 "}",
                c->run->sites->lifetimes ? "true" : "false", s->joined,
                s->cold_allocs, s->cold_bytes, s->other_allocs, s->other_bytes,
                s->died_young, s->unjoined, s->unjoined_allocs, s->unjoined_bytes,
                s->other_modules);
}
