/* test_rt_sample.c - the sampling countdown's draws and the estimates'
 * weights (runtime/record/rt_sample.c, compiled in unchanged) against libm:
 * a weight is 1 / (1 - exp(-s/R)) to 1e-9 relative for sizes far below,
 * at and far above R; a count is the ceiling of an exponential draw of
 * mean R: its mean is R + 1/2 and P(count > k) = exp(-k/R), each within 5
 * standard deviations over 2 million draws (draws made 1% short fail the
 * mean by 14 of them, and three of the tails). */
#include <math.h>
#include <stdint.h>

#include "test/unit/check.h"
#include "runtime/base/rt_flags.h"
#include "runtime/record/rt_sample.h"

static void test_weights(void) {
  static const uint64_t rs[] = {64, 4096, 524288, 4u << 20};
  for (unsigned i = 0; i < sizeof rs / sizeof rs[0]; i++) {
    uint64_t r = rs[i];
    rt_sample_interval = r;
    const uint64_t sizes[] = {1, 7, 32, 100, 1000, r / 3, r / 2, r, 2 * r, 10 * r,
                              40 * r, 50 * r, 1ull << 34};
    for (unsigned k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
      uint64_t s = sizes[k];
      double want = 1 / -expm1(-(double)s / (double)r);
      double got = rt_sample_weight(s);
      CHECK(fabs(got - want) <= 1e-9 * want, "R %llu size %llu: weight %.17g, want %.17g",
            (unsigned long long)r, (unsigned long long)s, got, want);
    }
    CHECK(rt_sample_weight(0) == rt_sample_weight(1), "size 0 weighs as 1 byte");
  }
  rt_sample_interval = 0;
  CHECK(rt_sample_weight(100) == 1, "R 0: every block weighs 1");
}

#define DRAWS 2000000

static void test_draws(void) {
  const double r = 1 << 20;
  const double ks[] = {0.001, 0.1, 1, 3, 10};
  uint64_t above[5] = {0};
  double sum = 0;
  rt_flags.sample_seed = 1;
  rt_sample_interval = (uint64_t)r;
  rt_sample_left = 0;
  rt_sample_hit(1); /* seeds this thread */
  for (int i = 0; i < DRAWS; i++) {
    CHECK(rt_sample_hit(1) == 1, "a hit after the seed is recorded");
    int64_t c = rt_sample_left;
    if (c < 1) {
      CHECK(0, "draw %d: count %lld", i, (long long)c);
      return;
    }
    sum += (double)c;
    for (int k = 0; k < 5; k++) above[k] += (double)c > ks[k] * r;
  }
  double mean = sum / DRAWS, sd = r / sqrt(DRAWS);
  CHECK(fabs(mean - (r + 0.5)) < 5 * sd, "mean count %.1f, want %.1f (sd %.1f)", mean,
        r + 0.5, sd);
  for (int k = 0; k < 5; k++) {
    double p = exp(-ks[k]), got = (double)above[k] / DRAWS;
    double psd = sqrt(p * (1 - p) / DRAWS);
    CHECK(fabs(got - p) < 5 * psd + 1e-6, "P(count > %g R) = %.6f, want %.6f", ks[k], got, p);
  }
}

int main(void) {
  test_weights();
  test_draws();
  return check_result();
}
