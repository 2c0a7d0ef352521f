/* mib_merge.h - how one allocation becomes a MIB and how two MIBs of the
 * same context combine.  Shared by the runtime (merging at free and at dump)
 * and memprof-profdata (merging dumps and files), so both apply LLVM's rules
 * identically.  Freestanding: no libc calls.
 *
 * Histogram arrays are not touched here: their storage belongs to the caller,
 * which adds the shorter array into the longer one (mpf_hist_add) and sets
 * AccessHistogramSize / AccessHistogram itself.
 */
#ifndef MEMPROF_MIB_MERGE_H
#define MEMPROF_MIB_MERGE_H

#include "memprof_format.h"

/* a / b, exact.  The runtime builds a MIB at every free: a 64-bit divide
 * costs several times a 32-bit one, and the operands nearly always fit. */
static inline uint64_t mpf_div_u64(uint64_t a, uint64_t b) {
  if (((a | b) >> 32) == 0)
    return (uint32_t)a / (uint32_t)b;
  return a / b;
}

/* A block's access density (accesses per 100 bytes) and lifetime access
 * density (per ms, lifetimes under 2 ms count as 1), as LLVM computes them. */
static inline uint64_t mpf_access_density(uint64_t count, uint32_t size) {
  return mpf_div_u64(count * 100, size ? size : 1);
}

static inline uint64_t mpf_lifetime_density(uint64_t dens, uint32_t life) {
  return life > 1 ? mpf_div_u64(dens * 1000, life) : dens * 1000;
}

/* LLVM's MemInfoBlock constructor: one object of `size` bytes, accessed
 * `count` times, alive from `alloc_ts` to `dealloc_ts` (ms). */
static inline void mpf_mib_init(mpf_mib *m, uint64_t count, uint32_t size,
                               uint32_t alloc_ts, uint32_t dealloc_ts,
                               uint32_t alloc_cpu, uint32_t dealloc_cpu) {
  uint32_t life = dealloc_ts - alloc_ts; /* u32 wraparound, as LLVM */
  uint64_t dens = mpf_access_density(count, size);
  uint64_t ldens = mpf_lifetime_density(dens, life);
  *m = (mpf_mib){0}; /* what one block does not set is 0 */
  m->AllocCount = 1;
  m->TotalAccessCount = m->MinAccessCount = m->MaxAccessCount = count;
  m->TotalSize = size;
  m->MinSize = m->MaxSize = size;
  m->AllocTimestamp = alloc_ts;
  m->DeallocTimestamp = dealloc_ts;
  m->TotalLifetime = life;
  m->MinLifetime = m->MaxLifetime = life;
  m->AllocCpuId = alloc_cpu;
  m->DeallocCpuId = dealloc_cpu;
  m->NumMigratedCpu = alloc_cpu != dealloc_cpu;
  m->TotalAccessDensity = dens;
  m->MinAccessDensity = m->MaxAccessDensity = (uint32_t)dens;
  m->TotalLifetimeAccessDensity = ldens;
  m->MinLifetimeAccessDensity = m->MaxLifetimeAccessDensity = (uint32_t)ldens;
}

/* The statistics of `n` into `e`: SUM, MIN and MAX fields, and the LAST
 * fields taken from `n` (both merges below). */
static inline void mpf_mib_merge_stats(mpf_mib *e, const mpf_mib *n) {
#define SUM(f) e->f += n->f
#define MIN(f) e->f = n->f < e->f ? n->f : e->f
#define MAX(f) e->f = n->f > e->f ? n->f : e->f
#define LAST(f) e->f = n->f
#define KEEP(f) (void)0
#define SPECIAL(f) (void)0
#define MIB_FIELD(Tag, Name, CType, Merge) Merge(Name);
#include "include/MIBDef.inc"
#undef MIB_FIELD
#undef SUM
#undef MIN
#undef MAX
#undef LAST
#undef KEEP
#undef SPECIAL
}

/* Merge newer MIB `n` into existing `e` (LLVM's MemInfoBlock::Merge).
 * The SPECIAL fields: overlaps and same-cpu counters are incremented from
 * the comparison of e and n, then summed with n's own counts so that merging
 * already-merged MIBs (profdata) loses nothing; histogram fields are left to
 * the caller. */
static inline void mpf_mib_merge(mpf_mib *e, const mpf_mib *n) {
  uint32_t overlap = n->AllocTimestamp < e->DeallocTimestamp;
  uint32_t same_alloc = e->AllocCpuId == n->AllocCpuId;
  uint32_t same_dealloc = e->DeallocCpuId == n->DeallocCpuId;
  mpf_mib_merge_stats(e, n);
  e->NumLifetimeOverlaps += overlap + n->NumLifetimeOverlaps;
  e->NumSameAllocCpu += same_alloc + n->NumSameAllocCpu;
  e->NumSameDeallocCpu += same_dealloc + n->NumSameDeallocCpu;
}

/* The fields LLVM's merge takes from one MIB of several (LAST and KEEP):
 * across inputs, the MIB whose fields are largest in tag order gives them,
 * whichever order the inputs came in.  MP_REP_IF_<Merge>(x) is x for
 * those fields and nothing for the others. */
#define MPF_REP_IF_SUM(x)
#define MPF_REP_IF_MIN(x)
#define MPF_REP_IF_MAX(x)
#define MPF_REP_IF_LAST(x) x
#define MPF_REP_IF_KEEP(x) x
#define MPF_REP_IF_SPECIAL(x)

/* Packed like mpf_mib (no hole before DataTypeId): the tool keeps one in
 * every alloc site, which then fits in three cache lines. */
typedef struct __attribute__((packed)) mpf_mib_rep {
#define MIB_FIELD(Tag, Name, CType, Merge) MPF_REP_IF_##Merge(CType Name;)
#include "include/MIBDef.inc"
#undef MIB_FIELD
} mpf_mib_rep;

static inline void mpf_mib_rep_get(mpf_mib_rep *r, const mpf_mib *m) {
#define MIB_FIELD(Tag, Name, CType, Merge) MPF_REP_IF_##Merge(r->Name = m->Name;)
#include "include/MIBDef.inc"
#undef MIB_FIELD
}

static inline void mpf_mib_rep_put(mpf_mib *m, const mpf_mib_rep *r) {
#define MIB_FIELD(Tag, Name, CType, Merge) MPF_REP_IF_##Merge(m->Name = r->Name;)
#include "include/MIBDef.inc"
#undef MIB_FIELD
}

/* 1 if MIB m's representative fields come after r's in tag order, field
 * by field (without copying them out first: a merge asks at every site). */
static inline int mpf_mib_after_rep(const mpf_mib *m, const mpf_mib_rep *r) {
#define MIB_FIELD(Tag, Name, CType, Merge)                                     \
  MPF_REP_IF_##Merge(if (m->Name != r->Name) return m->Name > r->Name;)
#include "include/MIBDef.inc"
#undef MIB_FIELD
  return 0;
}

/* MP_KEEP_IF_<Merge>(x) is x for the KEEP fields only. */
#define MPF_KEEP_IF_SUM(x)
#define MPF_KEEP_IF_MIN(x)
#define MPF_KEEP_IF_MAX(x)
#define MPF_KEEP_IF_LAST(x)
#define MPF_KEEP_IF_KEEP(x) x
#define MPF_KEEP_IF_SPECIAL(x)

/* Merge MIB `n`, the profile of a context in another input (another
 * process, another file), into `e`, in a way that does not depend on the
 * order inputs come in: statistics as mpf_mib_merge, the comparison-based
 * counters only summed (timestamps and CPUs of different processes say
 * nothing about each other), LAST and KEEP fields taken from `n` for the
 * caller to choose among (mpf_mib_after_rep). */
static inline void mpf_mib_merge_across(mpf_mib *e, const mpf_mib *n) {
  mpf_mib_merge_stats(e, n); /* the LAST fields from n */
#define MIB_FIELD(Tag, Name, CType, Merge) MPF_KEEP_IF_##Merge(e->Name = n->Name;)
#include "include/MIBDef.inc"
#undef MIB_FIELD
  e->NumLifetimeOverlaps += n->NumLifetimeOverlaps;
  e->NumSameAllocCpu += n->NumSameAllocCpu;
  e->NumSameDeallocCpu += n->NumSameDeallocCpu;
}

/* mpf_mib_init of one block followed by mpf_mib_merge into `e`, field by
 * field: the runtime does this at every free, and building the new MIB
 * first made its free path longer (gcc vectorised the build into
 * shuffles).  Histogram fields are left to the caller, as in
 * mpf_mib_merge. */
static inline void mpf_mib_add_block(mpf_mib *e, uint64_t count, uint32_t size,
                                    uint32_t alloc_ts, uint32_t dealloc_ts,
                                    uint32_t alloc_cpu, uint32_t dealloc_cpu) {
  uint32_t life = dealloc_ts - alloc_ts;
  uint64_t dens = mpf_access_density(count, size);
  uint64_t ldens = mpf_lifetime_density(dens, life);
  uint32_t d32 = (uint32_t)dens, ld32 = (uint32_t)ldens;
/* Statistic f of the block: its total grows by t, its extremes see v (the
 * densities' totals are u64, their extremes u32). */
#define MPF_ADD_STAT(f, t, v)                                                   \
  do {                                                                         \
    e->Total##f += (t);                                                        \
    if ((v) < e->Min##f) e->Min##f = (v);                                      \
    if ((v) > e->Max##f) e->Max##f = (v);                                      \
  } while (0)
  e->NumLifetimeOverlaps += alloc_ts < e->DeallocTimestamp;
  e->NumSameAllocCpu += e->AllocCpuId == alloc_cpu;
  e->NumSameDeallocCpu += e->DeallocCpuId == dealloc_cpu;
  e->AllocCount += 1;
  MPF_ADD_STAT(AccessCount, count, count);
  MPF_ADD_STAT(Size, size, size);
  e->AllocTimestamp = alloc_ts;
  e->DeallocTimestamp = dealloc_ts;
  MPF_ADD_STAT(Lifetime, life, life);
  e->AllocCpuId = alloc_cpu;
  e->DeallocCpuId = dealloc_cpu;
  MPF_ADD_STAT(AccessDensity, dens, d32);
  MPF_ADD_STAT(LifetimeAccessDensity, ldens, ld32);
#undef MPF_ADD_STAT
}

/* Add histogram `src` (len `ns`) into `dst` (len `nd`), nd >= ns. */
static inline void mpf_hist_add(uint64_t *dst, uint32_t nd, const uint64_t *src,
                               uint32_t ns) {
  for (uint32_t i = 0; i < ns && i < nd; i++) dst[i] += src[i];
}

#endif
