/* helper.h - starting the tool's helper threads. */
#ifndef PROFDATA_HELPER_H
#define PROFDATA_HELPER_H

#include <pthread.h>

/* pthread_create(t, NULL, fn, arg), but the thread may only run on CPUs
 * other than the caller's, when the process has others.  Returns 0 on
 * success, like pthread_create. */
int mp_helper_start(pthread_t *t, void *(*fn)(void *), void *arg);

/* CPUs this process may run on (at least 1). */
int mp_helper_cpus(void);

#endif
