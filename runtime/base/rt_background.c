/* rt_background.c - the loop of the runtime's optional background thread
 * (rt_background.h).
 *
 * At each tick the pacer (the clock) publishes the time and says when the
 * next tick is due, or that the thread should sleep; then every registered
 * hook runs.  Before sleeping (RUN -> SLOW) the hooks run once more, for
 * the work posted while the state was still RUN: nobody posts once it is
 * not.  The thread sleeps on a futex on the state until rt_bg_wake.  It
 * runs on rt_ticker.c's raw thread: raw syscalls only, no TLS, no errno. */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>

#include "rt_background.h"
#include "rt_clock.h"
#include "rt_sys.h"

#define MAX_HOOKS 4

int rt_bg_state __attribute__((aligned(64)));
static void (*hooks[MAX_HOOKS])(void);
static int n_hooks;
static long (*pacer)(void);

void rt_bg_add_tick(void (*fn)(void)) {
  for (int i = 0; i < n_hooks; i++)
    if (hooks[i] == fn)
      return;
  if (n_hooks < MAX_HOOKS)
    hooks[n_hooks++] = fn;
}

void rt_bg_set_pacer(long (*fn)(void)) { pacer = fn; }

static void run_hooks(void) {
  for (int i = 0; i < n_hooks; i++)
    hooks[i]();
}

/* RUN -> SLOW, then asleep until a thread sets RUN again. */
static void sleep_until_woken(void) {
  int run = RT_BG_RUN;
  if (!__atomic_compare_exchange_n(&rt_bg_state, &run, RT_BG_SLOW, 0, __ATOMIC_ACQ_REL,
                                   __ATOMIC_RELAXED))
    return;
  run_hooks();
  while (__atomic_load_n(&rt_bg_state, __ATOMIC_ACQUIRE) == RT_BG_SLOW)
    rt_syscall6(SYS_futex, (long)&rt_bg_state, FUTEX_WAIT_PRIVATE, RT_BG_SLOW, 0, 0, 0);
}

static void loop(void) {
  /* Wake-ups at the boundary, not up to 50 us (the default slack) late. */
  rt_syscall6(SYS_prctl, PR_SET_TIMERSLACK, 1, 0, 0, 0, 0);
  for (;;) {
    long ns = pacer ? pacer() : 1000000;
    run_hooks();
    if (ns < 0) {
      sleep_until_woken();
      continue;
    }
    struct timespec rel = {0, ns};
    rt_syscall(SYS_nanosleep, &rel, 0, 0);
  }
}

void rt_bg_start(int enabled) {
  int s = RT_BG_NONE;
  if (!enabled) {
    __atomic_compare_exchange_n(&rt_bg_state, &s, RT_BG_OFF, 0, __ATOMIC_ACQ_REL,
                                __ATOMIC_RELAXED);
    return;
  }
  if (!__atomic_compare_exchange_n(&rt_bg_state, &s, RT_BG_STARTING, 0, __ATOMIC_ACQ_REL,
                                   __ATOMIC_RELAXED))
    return;
  /* RUN first: the thread may sleep (RUN -> SLOW) before spawn returns. */
  __atomic_store_n(&rt_bg_state, RT_BG_RUN, __ATOMIC_RELEASE);
  if (!rt_ticker_spawn(loop))
    __atomic_store_n(&rt_bg_state, RT_BG_OFF, __ATOMIC_RELEASE);
}

void rt_bg_wake(void) {
  int s = RT_BG_SLOW;
  if (__atomic_compare_exchange_n(&rt_bg_state, &s, RT_BG_RUN, 0, __ATOMIC_ACQ_REL,
                                  __ATOMIC_RELAXED))
    rt_syscall(SYS_futex, &rt_bg_state, FUTEX_WAKE_PRIVATE, 1);
}

void rt_bg_fork_child(void) {
  if (__atomic_load_n(&rt_bg_state, __ATOMIC_RELAXED) != RT_BG_OFF)
    __atomic_store_n(&rt_bg_state, RT_BG_NONE, __ATOMIC_RELAXED);
}
