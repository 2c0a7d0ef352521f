/* test_mib_merge.c - mpf_mib_add_block (the runtime's per-free update) must
 * leave an entry exactly as mpf_mib_init of the block followed by
 * mpf_mib_merge would, over edge values and a seeded random sweep; and
 * mpf_mib_merge itself gives LLVM's values on a worked example. */
#include <stdint.h>
#include <string.h>

#include "test/unit/check.h"
#include "include/internal/mib_merge.h"

static uint64_t rng = 0x243F6A8885A308D3ULL;

static uint64_t next(void) { /* xorshift64* */
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * 0x2545F4914F6CDD1DULL;
}

/* One of a few edge values, or a random one of `bits` bits. */
static uint64_t pick(const uint64_t *edges, int n_edges, int bits) {
  uint64_t r = next();
  if (r % 3 == 0)
    return edges[(r >> 8) % (uint64_t)n_edges];
  return bits == 64 ? next() : next() & ((1ULL << bits) - 1);
}

static void random_entry(mpf_mib *e) {
  static const uint64_t edges32[] = {0, 1, 2, 7, 0xFFFFFFFFu, 0x80000000u};
  static const uint64_t edges64[] = {0, 1, 1000, UINT64_MAX, 1ULL << 32};
  mpf_mib_init(e, pick(edges64, 5, 40), (uint32_t)pick(edges32, 6, 20),
              (uint32_t)pick(edges32, 6, 32), (uint32_t)pick(edges32, 6, 32),
              (uint32_t)pick(edges32, 6, 3), (uint32_t)pick(edges32, 6, 3));
  /* an entry that has merged more blocks than one */
  e->AllocCount = (uint32_t)pick(edges32, 6, 32);
  e->NumLifetimeOverlaps = (uint32_t)pick(edges32, 6, 32);
  e->NumSameAllocCpu = (uint32_t)pick(edges32, 6, 32);
  e->NumSameDeallocCpu = (uint32_t)pick(edges32, 6, 32);
  e->NumMigratedCpu = (uint32_t)pick(edges32, 6, 32);
}

static void check_same(uint64_t count, uint32_t size, uint32_t ats, uint32_t dts,
                       uint32_t acpu, uint32_t dcpu, const mpf_mib *start) {
  mpf_mib want = *start, got = *start, n;
  mpf_mib_init(&n, count, size, ats, dts, acpu, dcpu);
  mpf_mib_merge(&want, &n);
  mpf_mib_add_block(&got, count, size, ats, dts, acpu, dcpu);
  CHECK(memcmp(&want, &got, sizeof want) == 0,
        "add_block(count %llu size %u ts %u..%u cpu %u->%u) differs from init+merge",
        (unsigned long long)count, size, ats, dts, acpu, dcpu);
}

/* LLVM's MemInfoBlock::Merge on two blocks, values worked out by hand. */
static void check_worked_example(void) {
  mpf_mib e;
  mpf_mib_init(&e, 40, 64, 10, 30, 1, 2);  /* density 62, lifetime 20 */
  mpf_mib_add_block(&e, 8, 32, 25, 26, 1, 3); /* density 25, lifetime 1 */
  CHECK(e.AllocCount == 2 && e.TotalAccessCount == 48, "counts %u %llu", e.AllocCount,
        (unsigned long long)e.TotalAccessCount);
  CHECK(e.MinAccessCount == 8 && e.MaxAccessCount == 40, "access min/max");
  CHECK(e.TotalSize == 96 && e.MinSize == 32 && e.MaxSize == 64, "sizes");
  CHECK(e.AllocTimestamp == 25 && e.DeallocTimestamp == 26, "timestamps are the last block's");
  CHECK(e.TotalLifetime == 21 && e.MinLifetime == 1 && e.MaxLifetime == 20, "lifetimes");
  CHECK(e.NumLifetimeOverlaps == 1, "25 < 30 overlaps: %u", e.NumLifetimeOverlaps);
  CHECK(e.NumSameAllocCpu == 1 && e.NumSameDeallocCpu == 0, "same-cpu counts %u %u",
        e.NumSameAllocCpu, e.NumSameDeallocCpu);
  CHECK(e.AllocCpuId == 1 && e.DeallocCpuId == 3, "cpus are the last block's");
  CHECK(e.NumMigratedCpu == 1, "NumMigratedCpu is kept from the first: %u", e.NumMigratedCpu);
  CHECK(e.TotalAccessDensity == 87 && e.MinAccessDensity == 25 && e.MaxAccessDensity == 62,
        "densities %llu %u %u", (unsigned long long)e.TotalAccessDensity,
        e.MinAccessDensity, e.MaxAccessDensity);
  /* 62*1000/20 = 3100; lifetime 1 counts as dens*1000 = 25000 */
  CHECK(e.TotalLifetimeAccessDensity == 28100 && e.MinLifetimeAccessDensity == 3100 &&
            e.MaxLifetimeAccessDensity == 25000,
        "lifetime densities %llu %u %u", (unsigned long long)e.TotalLifetimeAccessDensity,
        e.MinLifetimeAccessDensity, e.MaxLifetimeAccessDensity);
}

int main(void) {
  check_worked_example();
  mpf_mib start;
  random_entry(&start);
  /* zero size, zero and one ms lifetimes, wrapped timestamps, equal cpus */
  check_same(0, 0, 5, 5, 0, 0, &start);
  check_same(9, 0, 5, 6, 1, 1, &start);
  check_same(UINT64_MAX / 100, 1, 0xFFFFFFF0u, 3, 7, 2, &start);
  check_same(1ULL << 40, 0xFFFFFFFFu, 3, 0xFFFFFFF0u, 0xFFFFFFFFu, 0xFFFFFFFFu, &start);
  static const uint64_t e32[] = {0, 1, 2, 3, 0xFFFFFFFFu};
  static const uint64_t e64[] = {0, 1, 100, UINT64_MAX, 1ULL << 33};
  for (int i = 0; i < 200000; i++) {
    random_entry(&start);
    check_same(pick(e64, 5, i % 2 ? 20 : 64), (uint32_t)pick(e32, 5, 24),
               (uint32_t)pick(e32, 5, 32), (uint32_t)pick(e32, 5, 32),
               (uint32_t)pick(e32, 5, 2), (uint32_t)pick(e32, 5, 2), &start);
    if (failures > 10)
      break;
  }
  return check_result();
}
