/* helper.h - starting the tool's helper threads. */
#ifndef PROFDATA_HELPER_H
#define PROFDATA_HELPER_H

#include <pthread.h>

/* pthread_create(t, NULL, fn, arg), but the thread may only run on CPUs
 * other than the caller's, when the process has others.  Returns 0 on
 * success, like pthread_create; EAGAIN when helpers are turned off
 * (callers then do the work themselves). */
int mp_helper_start(pthread_t *t, void *(*fn)(void *), void *arg);

/* Whether mp_helper_start starts threads (it does until told otherwise);
 * set before any helper runs. */
void mp_helper_enable(int on);

/* CPUs this process may run on (at least 1). */
int mp_helper_cpus(void);

#endif
