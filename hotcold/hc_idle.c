/* hc_idle.c - the idle thread: started at the first cold allocation (never
 * if idle_ms is 0), it wakes every idle_ms and, when no cold allocation or
 * free happened since its previous wake, releases the cold arena's unused
 * pages and advises the rest MADV_COLD, once per idle spell.
 *
 * jemalloc only decays an arena's dirty pages when that arena is used, so
 * an arena gone quiet would keep them; and only a thread can act while
 * the whole program sleeps or blocks.  The thread runs with every signal
 * blocked (signals stay the program's) and is restarted after fork() in
 * the child at its next cold allocation. */
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "hc_internal.h"

static int started;
static unsigned long rounds;
/* The arena's side (hc_cold.c), handed over at start: the thread reads
 * its activity clock and tells it to go idle. */
static unsigned long (*activity_of)(void);
static void (*go_idle)(void);

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) != 0)
    ;
}

static void *idle_main(void *arg) {
  (void)arg;
  unsigned long seen = activity_of();
  int acted = 0;
  for (;;) {
    sleep_ms(hc_opt.idle_ms);
    unsigned long now = activity_of();
    if (now != seen) {
      seen = now;
      acted = 0;
      continue;
    }
    if (!acted) {
      go_idle();
      acted = 1;
      __atomic_fetch_add(&rounds, 1, __ATOMIC_RELAXED);
    }
  }
  return NULL;
}

static void after_fork_child(void) { started = 0; }

void hc_idle_start(unsigned long (*activity)(void), void (*idle)(void)) {
  if (HC_LIKELY(__atomic_load_n(&started, __ATOMIC_RELAXED)) || hc_opt.idle_ms <= 0)
    return;
  int expect = 0;
  if (!__atomic_compare_exchange_n(&started, &expect, 1, 0, __ATOMIC_ACQ_REL,
                                   __ATOMIC_RELAXED))
    return;
  activity_of = activity;
  go_idle = idle;
  static int atfork_registered;
  if (!atfork_registered) {
    atfork_registered = 1;
    pthread_atfork(NULL, NULL, after_fork_child);
  }
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  pthread_t t;
  /* On failure the arena simply never gets the idle treatment. */
  pthread_create(&t, &attr, idle_main, NULL);
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

unsigned long hc_idle_rounds(void) {
  return __atomic_load_n(&rounds, __ATOMIC_RELAXED);
}
