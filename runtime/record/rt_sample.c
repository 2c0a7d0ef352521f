/* rt_sample.c - the sampling countdown's draws and the estimates' weights
 * (see rt_sample.h).  No libm: the runtime calls nothing a signal handler
 * could not, and needs two functions only, ln for the draws and
 * 1 - exp(-x) for the weights, each to about 1e-10 relative. */
#include "rt_sample.h"
#include "runtime/base/rt_clock.h"
#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_sys.h"


__thread int64_t rt_sample_left;
uint64_t rt_sample_interval;

/* The generator (xorshift64*), its seed's epoch + 1 (0: never seeded). */
typedef struct sampler {
  uint64_t x;
  uint32_t epoch;
} sampler;
static __thread sampler smp __attribute__((tls_model("initial-exec")));
static uint32_t epoch; /* bumped in every fork child */
static uint64_t threads_seeded; /* with a fixed seed: the thread's stream */

static uint64_t splitmix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* sample_seed=0: the clock and thread id; else the seed, the fork epoch
 * and the order in which threads first drew (repeatable for a program
 * whose threads start in a fixed order). */
static void seed(uint32_t ep) {
  uint64_t s = (uint64_t)(uint32_t)rt_flags.sample_seed, mix;
  if (s)
    mix = s ^ splitmix((uint64_t)ep << 32 |
                       __atomic_fetch_add(&threads_seeded, 1, __ATOMIC_RELAXED));
  else
    mix = rt_rdtsc() ^ (uint64_t)rt_gettid() << 32 ^ ep;
  uint64_t x = splitmix(mix);
  smp.x = x ? x : 1;
  smp.epoch = ep + 1;
}

static uint64_t next(void) {
  uint64_t x = smp.x;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  smp.x = x;
  return x * 0x2545F4914F6CDD1Dull;
}

/* ln(u) for u in (0, 1]: u = m * 2^e with m in [sqrt(1/2), sqrt(2)), and
 * ln m = 2 atanh(t), t = (m - 1) / (m + 1), |t| < 0.172: six terms. */
static double ln(double u) {
  union { double d; uint64_t b; } v = {u};
  int e = (int)((v.b >> 52) & 0x7FF) - 1023;
  v.b = (v.b & 0xFFFFFFFFFFFFFull) | 0x3FF0000000000000ull;
  double m = v.d;
  if (m > 1.4142135623730951) {
    m *= 0.5;
    e++;
  }
  double t = (m - 1) / (m + 1), t2 = t * t;
  double s = t * (1 + t2 * (1.0 / 3 + t2 * (1.0 / 5 + t2 * (1.0 / 7 + t2 * (1.0 / 9 + t2 / 11)))));
  return 2 * s + e * 0.6931471805599453;
}

/* A count of mean R: ceil of an exponential draw, so that P(count > k) =
 * exp(-k/R) for every whole k (the countdown is in whole bytes). */
static int64_t draw(uint64_t r) {
  double u = (double)((next() >> 11) + 1) * 0x1p-53; /* (0, 1] */
  double c = -ln(u) * (double)r;
  if (c > 0x1p62)
    c = 0x1p62;
  return (int64_t)c + 1;
}

int rt_sample_hit(uint64_t size) {
  uint64_t r = __atomic_load_n(&rt_sample_interval, __ATOMIC_RELAXED);
  uint32_t ep = __atomic_load_n(&epoch, __ATOMIC_RELAXED);
  if (!r)
    return 1;
  if (RT_UNLIKELY(smp.epoch != ep + 1)) {
    /* First draw of this thread (or of this fork child): the count it
     * starts with is memoryless, so this allocation takes its chance
     * against a fresh one. */
    seed(ep);
    int64_t left = draw(r) - (int64_t)(size | (size == 0));
    if (left > 0) {
      rt_sample_left = left;
      return 0;
    }
  }
  rt_sample_left = draw(r);
  return 1;
}

/* The timeline (timeline=1, peak_snapshot=1) counts every block's bytes
 * per context: it needs every allocation's stack, so it turns sampling off. */
void rt_sample_init(int every_block) {
  int r = rt_flags.sample_interval;
  if (r > 0 && every_block) {
    rt_report("WARNING: sample_interval is ignored with timeline=1 or "
              "peak_snapshot=1 (the timeline needs every allocation's context)");
    r = 0;
  }
  __atomic_store_n(&rt_sample_interval, r > 0 ? (uint64_t)r : 0, __ATOMIC_RELAXED);
}

void rt_sample_fork_child(void) {
  uint32_t ep = __atomic_add_fetch(&epoch, 1, __ATOMIC_RELAXED);
  if (rt_sample_interval) {
    seed(ep);
    rt_sample_left = draw(rt_sample_interval);
  }
}

/* 1 - exp(-x) for x >= 0: its series below 0.35 (no cancellation), else
 * exp(-x) = 2^-k exp(-r) with |r| <= ln2/2. */
static double one_minus_exp_neg(double x) {
  if (x < 0.35) {
    double term = x, sum = 0;
    for (int i = 1; i <= 14; i++) {
      sum += term;
      term *= -x / (i + 1);
    }
    return sum;
  }
  if (x > 45)
    return 1;
  int k = (int)(x * 1.4426950408889634 + 0.5);
  double r = x - k * 0.6931471805599453;
  double term = 1, e = 0;
  for (int i = 1; i <= 14; i++) {
    e += term;
    term *= -r / i;
  }
  union { double d; uint64_t b; } scale = {.b = (uint64_t)(1023 - k) << 52};
  return 1 - e * scale.d;
}

double rt_sample_weight(uint64_t size) {
  uint64_t r = rt_sample_interval;
  if (!r)
    return 1;
  return 1 / one_minus_exp_neg((double)(size | (size == 0)) / (double)r);
}
