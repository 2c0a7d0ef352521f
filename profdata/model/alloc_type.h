/* alloc_type.h - clang's decision for one allocation context: the
 * allocation type getAllocType (LLVM's MemProfCommon.cpp) gives a MIB
 * under the -memprof-* thresholds.  The one copy of that rule: the
 * indexed writer's summary (clang's defaults) and the report's verdicts
 * (the thresholds given on its command line) both call it.
 */
#ifndef PROFDATA_ALLOC_TYPE_H
#define PROFDATA_ALLOC_TYPE_H

#include <stdint.h>

/* LLVM's AllocationType bits. */
enum {
  MP_ALLOC_NONE = 0,
  MP_ALLOC_NOTCOLD = 1,
  MP_ALLOC_COLD = 2,
  MP_ALLOC_HOT = 4,
};

/* clang's thresholds, with their option names. */
typedef struct mp_alloc_thresholds {
  /* -memprof-lifetime-access-density-cold-threshold: accesses/byte/s */
  float lifetime_access_density_cold;
  unsigned ave_lifetime_cold;            /* -memprof-ave-lifetime-cold-threshold: s */
  unsigned min_ave_lifetime_density_hot; /* -memprof-min-ave-lifetime-access-density-hot-threshold */
  int use_hot_hints;                     /* -memprof-use-hot-hints */
} mp_alloc_thresholds;

#define MP_ALLOC_THRESHOLDS_DEFAULT {0.05f, 200, 1000, 0}

/* The type of a context with these MIB totals (densities are stored
 * times 100, lifetimes in ms), in clang's float arithmetic. */
unsigned mp_alloc_type(const mp_alloc_thresholds *t,
                       uint64_t total_lifetime_access_density,
                       uint64_t alloc_count, uint64_t total_lifetime);

#endif
