/* helper.c - starting the tool's helper threads (helper.h).
 *
 * Every helper works beside a thread that stays busy: the main thread
 * adding an input while the next one is prepared, or sorting one half of
 * the stacks while the helper sorts the other.  Linux starts a new thread
 * on its creator's CPU and leaves it queued there until a balancer pulls
 * it to an idle one, which on a 2-CPU guest took up to half of a short
 * job; the main thread then waited for the helper at the join.  So a
 * helper is created allowed only on the other CPUs of the process (a
 * cpuset is respected), which starts it on one of them at once, and its
 * first act is to allow all of them again, so that it can still move
 * should its CPU get busy.  With a single CPU it is created as usual.
 * main.c turns helpers off for small merges (mp_helper_enable).
 */
#define _GNU_SOURCE
#include "helper.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>

typedef struct start {
  void *(*fn)(void *);
  void *arg;
  cpu_set_t all; /* the process's CPUs */
} start;

static void *trampoline(void *p) {
  start s = *(start *)p;
  free(p);
  sched_setaffinity(0, sizeof s.all, &s.all); /* a hint: failure is harmless */
  return s.fn(s.arg);
}

/* Attributes limiting a thread to s->all but the caller's CPU; 0 if
 * there is no such CPU or the attributes cannot be made. */
static int elsewhere(start *s, pthread_attr_t *a) {
  if (sched_getaffinity(0, sizeof s->all, &s->all) != 0) return 0;
  int me = sched_getcpu();
  if (me < 0 || me >= CPU_SETSIZE || !CPU_ISSET(me, &s->all) ||
      CPU_COUNT(&s->all) < 2)
    return 0;
  cpu_set_t others = s->all;
  CPU_CLR(me, &others);
  if (pthread_attr_init(a) != 0) return 0;
  if (pthread_attr_setaffinity_np(a, sizeof others, &others) != 0) {
    pthread_attr_destroy(a);
    return 0;
  }
  return 1;
}

static int enabled = 1;

void mp_helper_enable(int on) { enabled = on; }

int mp_helper_start(pthread_t *t, void *(*fn)(void *), void *arg) {
  if (!enabled) return EAGAIN;
  start *s = malloc(sizeof *s);
  pthread_attr_t a;
  if (!s || !elsewhere(s, &a)) {
    free(s);
    return pthread_create(t, NULL, fn, arg);
  }
  s->fn = fn;
  s->arg = arg;
  int rc = pthread_create(t, &a, trampoline, s);
  pthread_attr_destroy(&a);
  if (rc != 0) { /* the affinity refused: as usual */
    free(s);
    rc = pthread_create(t, NULL, fn, arg);
  }
  return rc;
}

int mp_helper_cpus(void) {
  static int n; /* counted once: any thread may ask, all get the same */
  int c = __atomic_load_n(&n, __ATOMIC_RELAXED);
  if (!c) {
    cpu_set_t set;
    c = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    if (c < 1) c = 1;
    __atomic_store_n(&n, c, __ATOMIC_RELAXED);
  }
  return c;
}
