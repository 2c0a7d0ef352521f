/* helper.c - starting the tool's helper threads (helper.h).
 *
 * Every helper works beside a thread that stays busy: the main thread
 * adding an input while the next one is prepared, or sorting one half of
 * the stacks while the helper sorts the other.  Linux starts a new thread
 * on its creator's CPU and leaves it queued there until a balancer pulls
 * it to an idle one, which on a 2-CPU guest took up to 2 ms of a
 * 4 ms job; the main thread then waited for the helper at the join.  A
 * helper that may not run on the creator's CPU starts on another at once.
 * Only the CPUs the process may use are offered, so a cpuset is
 * respected; with a single CPU the thread is created as usual.
 */
#define _GNU_SOURCE
#include "helper.h"

#include <sched.h>

/* Attributes limiting a thread to the process's CPUs but the caller's;
 * 0 if there is no such CPU or the attributes cannot be made. */
static int elsewhere(pthread_attr_t *a) {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
  int me = sched_getcpu();
  if (me < 0 || me >= CPU_SETSIZE || !CPU_ISSET(me, &set) ||
      CPU_COUNT(&set) < 2)
    return 0;
  CPU_CLR(me, &set);
  if (pthread_attr_init(a) != 0) return 0;
  if (pthread_attr_setaffinity_np(a, sizeof set, &set) != 0) {
    pthread_attr_destroy(a);
    return 0;
  }
  return 1;
}

int mp_helper_start(pthread_t *t, void *(*fn)(void *), void *arg) {
  pthread_attr_t a;
  if (!elsewhere(&a)) return pthread_create(t, NULL, fn, arg);
  int rc = pthread_create(t, &a, fn, arg);
  pthread_attr_destroy(&a);
  if (rc != 0) rc = pthread_create(t, NULL, fn, arg); /* affinity refused */
  return rc;
}
