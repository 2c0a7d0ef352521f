/* rt_clock.c - the timestamps of allocations and frees (ms since the epoch
 * recorded by __memprof_init, from CLOCK_REALTIME as LLVM's runtime) and
 * the CPU ids.
 *
 * Two timestamps per malloc/free pair are a large share of the profiler's
 * cost for allocation-heavy programs: a vDSO clock read, or even one
 * RDTSC (a microcoded instruction on AMD), costs more than the rest of a
 * timestamp.  Three ways, by option:
 *
 *  - Default: each thread extrapolates the clock from the TSC when the
 *    kernel keeps time with it (clocksource "tsc": invariant and
 *    synchronised across CPUs), from its own anchor (a TSC value and the
 *    realtime read with it) and a global ticks->ns rate taken over the
 *    span since the epoch, re-reading the real clock every RESYNC_NS.  The
 *    TSC is read first thing in malloc and free (rt_stamp), so that the
 *    slow instruction overlaps their other work, and converted last
 *    (rt_stamp_ms); each thread keeps the TSC range of the millisecond it
 *    last computed (rt_clk_window), and a stamp inside it, while no thread
 *    has handed out a later millisecond, is that millisecond without the
 *    arithmetic.  (A signal handler that interrupts the window's update can
 *    take a stamp one ms off at a boundary.)  Under another clocksource
 *    (kvm-clock in a virtual machine: its vDSO read and the sequence
 *    checks around it were a tenth of a preloaded python3's time) the
 *    same holds when the CPU reports an invariant TSC (invariant_tsc=1,
 *    the default); otherwise, and with invariant_tsc=0 there, a stamp
 *    reads the real clock.  Either way a stamp is at most one rate error
 *    over 4 ms off the real clock, and never below a stamp handed out.
 *  - background_thread=1: the background thread (rt_background.c), paced
 *    by clock_tick, publishes the current millisecond at every boundary
 *    and a timestamp is one load of it.  Each thread still reads the clock
 *    itself every CHECK_EVERY timestamps, which bounds the damage if the
 *    thread is late (descheduled).  It sleeps while timestamps come slower
 *    than SLOW_PER_MS a millisecond over RATE_TICKS ticks, an idle program
 *    included: its wake-ups would then cost more CPU than the threads' own
 *    reads; meanwhile stamps read the clock, and a thread wakes it when
 *    WAKE_BURST of its own timestamps fall within one ms boundary.  A
 *    timestamp taken after a boundary but before the thread woke for it
 *    reads the previous ms.
 *  - exact_clock=1: the real clock (clock_gettime) every time.
 *
 * Timestamps are globally non-decreasing (max_ms), so a boundary case, a
 * late thread or a clock stepped back can never give a block a negative
 * (wrapped) lifetime.
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

#include "rt_background.h"
#include "rt_clock.h"
#include "rt_flags.h"
#include "rt_state.h"
#include "rt_sys.h"

#define RESYNC_NS 4000000LL    /* each thread re-reads the clock every 4 ms */
#define CALIB_MIN_NS 1000000LL /* no rate from a span shorter than 1 ms */
#define MAX_READ_TICKS 50000   /* a clock read bracketed by more was interrupted */
#define CHECK_EVERY 64         /* ticker timestamps between a thread's own reads */
#define RATE_TICKS 64          /* ticks over which the ticker counts timestamps */
#define SLOW_PER_MS 256        /* fewer timestamps a ms than this: the ticker sleeps */
#define WAKE_BURST 1024        /* a thread's timestamps within 1 ms that wake it */


static int64_t epoch_sec; /* 0 = not yet recorded */
static uint32_t epoch_read_ms; /* the ms of that second it was recorded in */
static int tsc_usable;
static uint64_t calib_tsc; /* TSC and realtime (ns since the epoch) at the epoch */
static int64_t calib_ns;
static uint64_t tick_mult; /* ns per TSC tick << 32; 0 = not yet known */

/* What every timestamp reads (rt_sys.h), in one line the ticker writes
 * once per ms. */
rt_clock_line rt_clk __attribute__((aligned(64)));
__thread uint32_t rt_clk_countdown __attribute__((tls_model("initial-exec")));
__thread rt_ms_window rt_clk_window __attribute__((tls_model("initial-exec")));
/* Checked reads (one per CHECK_EVERY timestamps) since the ticker last
 * looked: a line of its own, away from the one every timestamp reads. */
static uint32_t tk_checks __attribute__((aligned(64)));
/* A thread's timestamps while the ticker sleeps for a slow rate: how many
 * since the ms in burst_ms. */
static __thread uint32_t burst_n __attribute__((tls_model("initial-exec")));
static __thread uint32_t burst_ms __attribute__((tls_model("initial-exec")));

typedef struct anchor {
  uint64_t tsc, span, mult; /* span: ticks the anchor is trusted for (0: none) */
  int64_t ns;
} anchor;
static __thread anchor th_anchor __attribute__((tls_model("initial-exec")));

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
  uint64_t t0 = rt_rdtsc();
  *ns = realtime_ns(e);
  uint64_t t1 = rt_rdtsc();
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

/* CPUID's invariant TSC (leaf 0x80000007, EDX bit 8): one rate in every
 * power and frequency state.  A hypervisor that passes it on keeps the
 * guest's TSC synchronised across its CPUs (as kvm-clock itself needs). */
static int cpu_tsc_invariant(void) {
  unsigned a, b, c, d;
  return __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8));
}

void rt_set_epoch(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  int64_t zero = 0;
  if (!__atomic_compare_exchange_n(&epoch_sec, &zero, (int64_t)ts.tv_sec, 0,
                                   __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
    return;
  epoch_read_ms = (uint32_t)(ts.tv_nsec / 1000000);
  /* Not with the ticker (background_thread=1): it publishes the clock's
   * own millisecond, and the threads' checks of it read the clock too. */
  int invariant = rt_flags.invariant_tsc && !rt_flags.background_thread && cpu_tsc_invariant();
  if (!kernel_uses_tsc() && !invariant)
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

int64_t rt_epoch_sec(void) { return __atomic_load_n(&epoch_sec, __ATOMIC_ACQUIRE); }
uint32_t rt_epoch_read_ms(void) { return epoch_read_ms; }

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
  uint32_t m = __atomic_load_n(&rt_clk.max_ms, __ATOMIC_RELAXED);
  while (ms != m) {
    if ((int32_t)(ms - m) < 0)
      return m;
    if (__atomic_compare_exchange_n(&rt_clk.max_ms, &m, ms, 1, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED))
      break;
  }
  return ms;
}

/* TSC ticks from d ticks past anchor a, at ns (in millisecond ms), that
 * still give ms: up to the next millisecond, within the anchor's span.
 * One tick short of the boundary, so that rounding never stretches it. */
static uint64_t ticks_left_in_ms(const anchor *a, uint64_t d, int64_t ns, uint32_t ms) {
  if (ns <= 0)
    return 0;
  uint64_t left_ns = (uint64_t)(ms + 1) * 1000000u - (uint64_t)ns;
  uint64_t ticks = (left_ns << 32) / a->mult;
  if (ticks > a->span - d)
    ticks = a->span - d;
  return ticks ? ticks - 1 : 0;
}

/* The clock itself at TSC value *t (0: now, and *t is set; see the file
 * comment); *left: ticks from *t on that give the same millisecond (0: not
 * known). */
static uint32_t read_ms(int64_t e, uint64_t *t, uint64_t *left) {
  const anchor *a = &th_anchor;
  uint64_t d;
  *left = 0;
  if (!*t)
    *t = rt_rdtsc();
  if (RT_LIKELY(a->span) && RT_LIKELY((d = *t - a->tsc) < a->span)) {
    int64_t ns = a->ns + (int64_t)((d * a->mult) >> 32);
    uint32_t ms = ms_of(ns);
    *left = ticks_left_in_ms(a, d, ns, ms);
    return ms;
  }
  return now_slow(e);
}

/* ---- the background thread's pace --------------------------------------
 * rt_background.c runs this first at every tick, on its raw thread: raw
 * syscalls only (no vDSO, TLS or errno). */

/* Publishes the current millisecond; nanoseconds to the next boundary, or
 * -1 (sleep) when timestamps came slower than SLOW_PER_MS a millisecond
 * over the last RATE_TICKS ticks. */
static long clock_tick(void) {
  static uint32_t ticks, checks; /* the thread's alone */
  int64_t e = __atomic_load_n(&epoch_sec, __ATOMIC_ACQUIRE);
  struct timespec ts;
  rt_syscall(SYS_clock_gettime, CLOCK_REALTIME, &ts, 0);
  int64_t ns = ((int64_t)ts.tv_sec - e) * 1000000000LL + ts.tv_nsec;
  non_decreasing(ms_of(ns));
  checks += __atomic_exchange_n(&tk_checks, 0, __ATOMIC_RELAXED);
  if (++ticks == RATE_TICKS) {
    int slow = (uint64_t)checks * CHECK_EVERY < (uint64_t)RATE_TICKS * SLOW_PER_MS;
    ticks = checks = 0;
    if (slow)
      return -1;
  }
  return ns > 0 ? 1000000 - ns % 1000000 : 1000000;
}

void rt_clock_init(void) { rt_bg_set_pacer(clock_tick); }

/* Called by every thread's own clock read, of `ms`: start the ticker,
 * count the read for its rate, or count towards waking it. */
static void ticker_want(uint32_t ms) {
  int s = __atomic_load_n(&rt_bg_state, __ATOMIC_ACQUIRE);
  if (s == RT_BG_RUN) {
    __atomic_fetch_add(&tk_checks, 1, __ATOMIC_RELAXED);
  } else if (s == RT_BG_SLOW) {
    if (++burst_n < WAKE_BURST)
      return;
    if (ms - burst_ms <= 1)
      rt_bg_wake();
    burst_n = 0;
    burst_ms = ms;
  } else if (s == RT_BG_NONE) {
    int ticker = rt_flags.background_thread && !rt_flags.exact_clock;
    if (!ticker && !rt_flags.exact_clock && __atomic_load_n(&tsc_usable, __ATOMIC_ACQUIRE))
      __atomic_store_n(&rt_clk.stamp_tsc, 1, __ATOMIC_RELAXED);
    rt_bg_start(ticker);
  }
}

/* Every CHECK_EVERY-th timestamp of a thread while the ticker runs, and
 * the others when a thread's millisecond window (rt_clk_window) does not
 * hold them. */
uint32_t rt_now_ms_checked(uint64_t tsc) {
  int64_t e = __atomic_load_n(&epoch_sec, __ATOMIC_ACQUIRE);
  if (!e)
    return 0;
  rt_clk_countdown = CHECK_EVERY;
  uint32_t ms;
  uint64_t left = 0;
  /* exact_clock: the clock itself, not the TSC extrapolated from it (a
   * rate taken early or under load can put a stamp across a ms boundary) */
  if (rt_flags.exact_clock)
    ms = non_decreasing(ms_of(realtime_ns(e)));
  else
    ms = non_decreasing(read_ms(e, &tsc, &left));
  if (__atomic_load_n(&rt_clk.stamp_tsc, __ATOMIC_RELAXED))
    rt_clk_window = (rt_ms_window){tsc, left, ms};
  ticker_want(ms);
  return ms;
}

int rt_use_rdpid;

static int rdpid_agrees(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(c & (1u << 22)))
    return 0;
  int agreed = 0;
  for (int i = 0; i < 8 && agreed < 3; i++) {
    int before = sched_getcpu();
    uint32_t r = rt_rdpid_cpu();
    if (before < 0 || sched_getcpu() != before)
      continue; /* migrated meanwhile: no verdict */
    if (r != (uint32_t)before)
      return 0;
    agreed++;
  }
  return agreed == 3;
}

void rt_cpu_init(void) {
  __atomic_store_n(&rt_use_rdpid, rdpid_agrees(), __ATOMIC_RELEASE);
}

uint32_t rt_cpu_slow(void) {
  if (!rt_inited)
    return 0xFFFFFFFFu;
  return (uint32_t)sched_getcpu();
}
