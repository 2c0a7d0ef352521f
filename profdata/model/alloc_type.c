/* alloc_type.c - clang's allocation-type rule (alloc_type.h). */
#include "alloc_type.h"

unsigned mp_alloc_type(const mp_alloc_thresholds *t, uint64_t tlad,
                       uint64_t alloc_count, uint64_t total_lifetime) {
  /* Densities are stored times 100; lifetimes are in ms, the threshold in
   * s (multiplied in unsigned arithmetic, as clang does). */
  float density = (float)tlad / (float)alloc_count / 100.0f;
  if (density < t->lifetime_access_density_cold &&
      (float)total_lifetime / (float)alloc_count >=
          (float)(t->ave_lifetime_cold * 1000u))
    return MP_ALLOC_COLD;
  if (t->use_hot_hints && density > (float)t->min_ave_lifetime_density_hot)
    return MP_ALLOC_HOT;
  return MP_ALLOC_NOTCOLD;
}
