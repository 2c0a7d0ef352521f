/* raw_mibs.c - the second half of adding a raw profile (raw_build.c does
 * the first): its MIBs go to the alloc sites of their stacks' cache
 * entries, then its queued call sites are added, as LLVM's
 * RawMemProfReader orders them (docs/memprof-profdata.md).
 *
 * It touches the profile's records and the refs of cache entries only, so
 * it may run on its own thread while the next file's stacks are resolved
 * (stack_cache.h: entries never move and their other fields never
 * change).
 */
#include <string.h>

#include "include/internal/memprof_format.h"
#include "raw_internal.h"
#include "stack_cache.h"

static const uint64_t *read_hist(raw_mib_ctx *x, uint32_t version,
                                 const unsigned char *h, uint32_t n) {
  if (!n) return NULL;
  MP_VEC_RESERVE(x->hist, x->cap_hist, n);
  for (uint32_t i = 0; i < n; i++) {
    if (version == 5) {
      uint16_t e;
      memcpy(&e, h + 2 * (size_t)i, 2);
      x->hist[i] = mpf_hist_decode_v5(e);
    } else {
      x->hist[i] = raw_u64(h + 8 * (size_t)i);
    }
  }
  return x->hist;
}

/* The first MIB of a context adds its alloc sites (the functions the
 * entry lists) and remembers where they are; later ones merge in place. */
static void add_alloc(mp_profile *p, stack_ent *e, const mpf_mib *mib,
                      const uint64_t *hist, uint32_t in_library) {
  uint32_t *ref = sc_refs(e);
  if (!e->n_refs) {
    const uint64_t *guid = sc_guids(e);
    for (uint32_t i = 0; i < e->n_sites; i++)
      mp_add_alloc_site_at(p, guid[i], e->model_stack, mib, hist, &ref[2 * i],
                           &ref[2 * i + 1]);
    e->n_refs = e->n_sites;
  } else {
    for (uint32_t i = 0; i < e->n_refs; i++)
      mp_merge_alloc_at(p, ref[2 * i], ref[2 * i + 1], mib, hist);
  }
  if (__builtin_expect(in_library != 0, 0))
    for (uint32_t i = 0; i < e->n_refs; i++)
      mp_alloc_of(&p->records[ref[2 * i]], ref[2 * i + 1])->in_library = 1;
}

static void add_mib(raw_mib_ctx *x, uint32_t version,
                    const unsigned char *entry, stack_ent *e, uint32_t in_library) {
  mpf_mib mib;
  if (version == 3) { /* no histogram fields: they stay 0 */
    memset(&mib, 0, sizeof mib);
    memcpy(&mib, entry + 8, MPF_MIB_SIZE_V3);
  } else {
    memcpy(&mib, entry + 8, sizeof mib);
  }
  mib.AccessHistogram = 0;
  const uint64_t *hist = read_hist(x, version, entry + 8 + MPF_MIB_SIZE_V4,
                                   mib.AccessHistogramSize);
  add_alloc(x->p, e, &mib, hist, in_library);
}

/* MIBs go in batches: the entries of a batch are fetched, then through
 * their refs the first alloc site of each, then the MIBs are added in
 * file order (entries and sites are far bigger than the CPU caches and
 * each file meets them in random order). */
#define BATCH 32

static void add_dump(raw_mib_ctx *x, const raw_file *f, const raw_dump *d) {
  const unsigned char *e = d->mibs;
  const unsigned char *entry[BATCH];
  stack_ent *ent[BATCH];
  uint32_t lib[BATCH];
  for (uint64_t i = 0; i < d->n_mibs;) {
    size_t m = 0;
    for (; m < BATCH && i < d->n_mibs; i++, e += raw_mib_entry_size(d->version, e)) {
      const raw_stack *s = &f->stacks[d->mib_stack[i]];
      if (s->state != RAW_STACK_LIVE) continue;
      entry[m] = e;
      lib[m] = s->in_library;
      ent[m] = sc_ent(x->cache, s->ent);
      raw_prefetch_span(ent[m], sizeof(stack_ent) + 8); /* and its first refs */
      m++;
    }
    for (size_t j = 0; j < m; j++) {
      if (!ent[j]->n_refs) continue;
      const uint32_t *ref = sc_refs(ent[j]);
      raw_prefetch_span(mp_alloc_of(&x->p->records[ref[0]], ref[1]),
                    sizeof(mp_alloc_site));
    }
    for (size_t j = 0; j < m; j++) add_mib(x, d->version, entry[j], ent[j], lib[j]);
  }
}

/* The dump's temporary allocations (its note), to their contexts. */
static void add_temporaries(raw_mib_ctx *x, const raw_file *f,
                            const raw_dump *d) {
  for (uint64_t i = 0; i < d->n_temps; i++) {
    uint32_t k = mp_map_get(&f->stack_index, raw_u64(d->temps + 16 * i));
    const raw_stack *s = &f->stacks[k]; /* known: raw.c checked the ids */
    if (s->state == RAW_STACK_LIVE)
      mp_add_temporaries(x->p, sc_ent(x->cache, s->ent)->model_stack,
                         raw_u64(d->temps + 16 * i + 8));
  }
}

/* Call-site-only records come after all alloc records of the file, grouped
 * by function in first-seen order, like LLVM's: adding the queued sites in
 * queue order creates each record at its function's first call site and
 * appends its sites in first-seen order, which is exactly that. */
static void add_calls(raw_mib_ctx *x, const raw_file *f) {
  for (size_t i = 0; i < f->n_calls; i++)
    mp_add_call_site(x->p, f->calls[i].guid, f->calls[i].stack, NULL, 0);
}

void raw_add_mibs(raw_file *f, raw_mib_ctx *x) {
  mp_profile_begin_input(x->p);
  for (uint32_t i = 0; i < f->intervals.n; i++)
    mp_intervals_add(&x->p->intervals, f->intervals.v[i]);
  x->p->uninstrumented |= f->uninstrumented;
  if (f->program) mp_add_program(x->p, f->program, f->program_len, 1);
  x->p->mib_fields |= MP_MIB_ALL_FIELDS;
  size_t total = 0;
  for (size_t d = 0; d < f->n_dumps; d++) total += f->dumps[d].n_mibs;
  if (!total) return;
  /* the first file of a merge brings most of its contexts: size the site
   * index for them once rather than doubling it as they come */
  if (!x->p->n_records) mp_profile_reserve_sites(x->p, f->n_stacks);
  for (size_t d = 0; d < f->n_dumps; d++) {
    add_dump(x, f, &f->dumps[d]);
    add_temporaries(x, f, &f->dumps[d]);
  }
  add_calls(x, f);
}
