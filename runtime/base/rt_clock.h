/* rt_clock.h - timestamps and CPU ids (rt_clock.c), the common cases
 * inline. */
#ifndef MEMPROF_RT_CLOCK_H
#define MEMPROF_RT_CLOCK_H

#include "rt_background.h"
#include "rt_state.h"

/* ---- time and CPU (rt_clock.c) ------------------------------------------
 * Inline because every malloc and free takes both: the common cases are a
 * TSC read within the thread's millisecond window (or, with the background
 * thread, a load of its published millisecond) and one RDPID. */
typedef struct rt_clock_line {
  uint32_t max_ms; /* the latest timestamp handed out */
  int stamp_tsc;   /* no ticker, TSC clocksource: stamps read the TSC */
} rt_clock_line;
RT_HIDDEN extern rt_clock_line rt_clk;
RT_HIDDEN extern __thread uint32_t rt_clk_countdown
    __attribute__((tls_model("initial-exec")));
/* The TSC values [from, from + len) of a thread that all give the
 * millisecond ms: a stamp inside it needs no arithmetic (rt_clock.c). */
typedef struct rt_ms_window {
  uint64_t from, len;
  uint32_t ms;
} rt_ms_window;
RT_HIDDEN extern __thread rt_ms_window rt_clk_window
    __attribute__((tls_model("initial-exec")));
RT_HIDDEN uint32_t rt_now_ms_checked(uint64_t tsc);

static inline uint64_t rt_rdtsc(void) {
  uint32_t lo, hi;
  __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
  return (uint64_t)hi << 32 | lo;
}

/* The start of a timestamp: the TSC when stamps extrapolate from it, else
 * 0.  Taken first thing in malloc and free, so that the counter read (a
 * slow instruction) overlaps their other work. */
static inline uint64_t rt_stamp(void) {
  return __atomic_load_n(&rt_clk.stamp_tsc, __ATOMIC_RELAXED) ? rt_rdtsc() : 0;
}

/* Milliseconds since the epoch recorded by __memprof_init (0 before it)
 * at the stamp `tsc` (rt_stamp). */
static inline uint32_t rt_stamp_ms(uint64_t tsc) {
  if (tsc) {
    const rt_ms_window *w = &rt_clk_window;
    if (RT_LIKELY(tsc - w->from < w->len) &&
        RT_LIKELY(w->ms == __atomic_load_n(&rt_clk.max_ms, __ATOMIC_RELAXED)))
      return w->ms;
  } else if (RT_LIKELY(rt_bg_running()) && RT_LIKELY(rt_clk_countdown-- != 0)) {
    return __atomic_load_n(&rt_clk.max_ms, __ATOMIC_RELAXED);
  }
  return rt_now_ms_checked(tsc);
}

static inline uint32_t rt_now_ms(void) { return rt_stamp_ms(rt_stamp()); }
RT_HIDDEN void rt_set_epoch(void);
/* The epoch: its whole second of CLOCK_REALTIME (0 before rt_set_epoch),
 * and the millisecond of that second it was recorded in. */
RT_HIDDEN int64_t rt_epoch_sec(void);
RT_HIDDEN uint32_t rt_epoch_read_ms(void);
/* Makes the clock the background thread's pacer (rt_background.h). */
RT_HIDDEN void rt_clock_init(void);
/* Runs fn on a new raw thread (see rt_ticker.c); 0 if it cannot.  Only
 * rt_background.c starts one. */
RT_HIDDEN int rt_ticker_spawn(void (*fn)(void));

RT_HIDDEN extern int rt_use_rdpid; /* TSC_AUX holds the CPU number */
RT_HIDDEN uint32_t rt_cpu_slow(void);
/* The CPU number Linux keeps in TSC_AUX (node << 12 | cpu). */
static inline uint32_t rt_rdpid_cpu(void) {
  uint64_t aux;
  __asm__ volatile("rdpid %0" : "=r"(aux));
  return (uint32_t)aux & 0xFFF;
}
/* Current CPU, 0xFFFFFFFF before init (as LLVM). */
static inline uint32_t rt_cpu(void) {
  if (RT_LIKELY(rt_inited) && RT_LIKELY(__atomic_load_n(&rt_use_rdpid, __ATOMIC_RELAXED)))
    return rt_rdpid_cpu();
  return rt_cpu_slow();
}
RT_HIDDEN void rt_cpu_init(void); /* picks the cheapest reliable source */


#endif
