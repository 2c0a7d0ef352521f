/* rt_clock.c - the timestamps of allocations and frees (ms since the epoch
 * recorded by __memprof_init, from CLOCK_REALTIME as LLVM's runtime) and
 * the CPU ids.
 *
 * Two calls per malloc/free pair made the vDSO clock (~24 ns each) the
 * largest cost of the profiler for allocation-heavy programs.  When the
 * kernel itself keeps time with the TSC (clocksource "tsc": invariant and
 * synchronised across CPUs), each thread instead extrapolates from its own
 * anchor (a TSC value and the realtime it was read at) with a global
 * ticks->ns rate, and re-reads the real clock every RESYNC_NS of TSC time.
 * The rate comes from the span between the epoch and the latest anchor, so
 * after the first millisecond its error is a few ppm and the extrapolation
 * stays well under a microsecond off the clock: ms values stay exact except
 * within that much of a ms boundary.  Timestamps are also made globally
 * non-decreasing (max_ms), so such a boundary case, or a clock stepped
 * back, can never give a block a negative (wrapped) lifetime.  Without a
 * TSC clocksource every timestamp reads the real clock.
 *
 * CPU ids come from RDPID where the kernel keeps the CPU number in
 * TSC_AUX (as its vDSO getcpu reads it; checked against sched_getcpu once),
 * else from sched_getcpu. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>

#include <cpuid.h>

#include "rt_sys.h"

#define RESYNC_NS 4000000LL    /* each thread re-reads the clock every 4 ms */
#define CALIB_MIN_NS 1000000LL /* no rate from a span shorter than 1 ms */
#define MAX_READ_TICKS 50000   /* a clock read bracketed by more was interrupted */

static int64_t epoch_sec; /* 0 = not yet recorded */
static int tsc_usable;
static uint64_t calib_tsc; /* TSC and realtime (ns since the epoch) at the epoch */
static int64_t calib_ns;
static uint64_t tick_mult; /* ns per TSC tick << 32; 0 = not yet known */
static uint32_t max_ms;    /* the latest timestamp handed out */

typedef struct anchor {
  uint64_t tsc, span, mult; /* span: ticks the anchor is trusted for (0: none) */
  int64_t ns;
} anchor;
static __thread anchor th_anchor __attribute__((tls_model("initial-exec")));

static inline uint64_t rdtsc(void) {
  uint32_t lo, hi;
  __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
  return (uint64_t)hi << 32 | lo;
}

static int64_t realtime_ns(int64_t e) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ((int64_t)ts.tv_sec - e) * 1000000000LL + ts.tv_nsec;
}

static inline uint32_t ms_of(int64_t ns) {
  return ns > 0 ? (uint32_t)(ns / 1000000) : 0;
}

/* The clock read with the TSC value at its middle; 0 if it was interrupted. */
static uint64_t read_pair(int64_t e, int64_t *ns) {
  uint64_t t0 = rdtsc();
  *ns = realtime_ns(e);
  uint64_t t1 = rdtsc();
  return t1 - t0 <= MAX_READ_TICKS ? t0 + (t1 - t0) / 2 : 0;
}

static int kernel_uses_tsc(void) {
  int fd = rt_open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                   O_RDONLY, 0);
  if (fd < 0)
    return 0;
  char buf[16];
  long n = rt_syscall(SYS_read, fd, buf, sizeof buf);
  rt_close(fd);
  return n == 4 && buf[0] == 't' && buf[1] == 's' && buf[2] == 'c' && buf[3] == '\n';
}

void rt_set_epoch(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  int64_t zero = 0;
  if (!__atomic_compare_exchange_n(&epoch_sec, &zero, (int64_t)ts.tv_sec, 0,
                                   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
    return;
  if (!kernel_uses_tsc())
    return;
  for (int i = 0; i < 8; i++) {
    int64_t ns;
    uint64_t t = read_pair(ts.tv_sec, &ns);
    if (t) {
      calib_tsc = t;
      calib_ns = ns;
      __atomic_store_n(&tsc_usable, 1, __ATOMIC_RELEASE);
      return;
    }
  }
}

/* Refresh the rate from the epoch..(t, ns) span and re-anchor the thread. */
static void reanchor(uint64_t t, int64_t ns) {
  anchor *a = &th_anchor;
  a->span = 0;
  if (ns - calib_ns < CALIB_MIN_NS || t <= calib_tsc)
    return;
  double m = (double)(ns - calib_ns) * 4294967296.0 / (double)(t - calib_tsc);
  if (!(m >= 1.0 && m < 1e15)) /* sub-GHz.. absurd rates: trust the clock only */
    return;
  uint64_t mult = (uint64_t)m;
  __atomic_store_n(&tick_mult, mult, __ATOMIC_RELAXED);
  a->tsc = t;
  a->ns = ns;
  a->mult = mult;
  a->span = ((uint64_t)RESYNC_NS << 32) / mult;
}

static uint32_t now_slow(int64_t e) {
  int64_t ns;
  if (!__atomic_load_n(&tsc_usable, __ATOMIC_ACQUIRE))
    return ms_of(realtime_ns(e));
  uint64_t t = read_pair(e, &ns);
  if (t)
    reanchor(t, ns);
  return ms_of(ns);
}

/* Never below a timestamp already handed out (see the file comment). */
static inline uint32_t non_decreasing(uint32_t ms) {
  uint32_t m = __atomic_load_n(&max_ms, __ATOMIC_RELAXED);
  while (ms != m) {
    if ((int32_t)(ms - m) < 0)
      return m;
    if (__atomic_compare_exchange_n(&max_ms, &m, ms, 1, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED))
      break;
  }
  return ms;
}

uint32_t rt_now_ms(void) {
  int64_t e = __atomic_load_n(&epoch_sec, __ATOMIC_ACQUIRE);
  if (!e)
    return 0;
  const anchor *a = &th_anchor;
  uint32_t ms;
  uint64_t d;
  if (MP_LIKELY(a->span) && MP_LIKELY((d = rdtsc() - a->tsc) < a->span))
    ms = ms_of(a->ns + (int64_t)((d * a->mult) >> 32));
  else
    ms = now_slow(e);
  return non_decreasing(ms);
}

static int use_rdpid;

static inline uint32_t rdpid_cpu(void) {
  uint64_t aux;
  __asm__ volatile("rdpid %0" : "=r"(aux));
  return (uint32_t)aux & 0xFFF; /* Linux: node << 12 | cpu */
}

static int rdpid_agrees(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(c & (1u << 22)))
    return 0;
  int agreed = 0;
  for (int i = 0; i < 8 && agreed < 3; i++) {
    int before = sched_getcpu();
    uint32_t r = rdpid_cpu();
    if (before < 0 || sched_getcpu() != before)
      continue; /* migrated meanwhile: no verdict */
    if (r != (uint32_t)before)
      return 0;
    agreed++;
  }
  return agreed == 3;
}

void rt_cpu_init(void) {
  __atomic_store_n(&use_rdpid, rdpid_agrees(), __ATOMIC_RELEASE);
}

uint32_t rt_cpu(void) {
  if (!mp_inited)
    return 0xFFFFFFFFu;
  if (MP_LIKELY(__atomic_load_n(&use_rdpid, __ATOMIC_RELAXED)))
    return rdpid_cpu();
  return (uint32_t)sched_getcpu();
}
