/* rng.h - the unit tests' random inputs: Marsaglia's xorshift64 from a
 * fixed seed, so that every run draws the same ones (a test may set `rng`
 * to another seed first).  (Unit tests are files named test_*.c; this
 * header is not one.) */
#ifndef TEST_UNIT_RNG_H
#define TEST_UNIT_RNG_H

#include <stdint.h>

static uint64_t rng = 88172645463325252ULL;

static inline uint64_t rnd(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

#endif
