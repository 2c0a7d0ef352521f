/* rt_state.c - the runtime's process-wide state words that files of every
 * layer read (rt_state.h): whether start-up finished, whether the program
 * is instrumented, the failure flag of the profile's output, and each
 * thread's lock count and signal-dump mode; the parked-MIB flag the lock
 * count's last leave tests. */
#include "rt_state.h"

int rt_inited;
int rt_instrumented;
int rt_forwarding;
int rt_profile_failed;
__thread int rt_nonblocking __attribute__((tls_model("initial-exec")));
__thread int rt_locks_held __attribute__((tls_model("initial-exec")));
uint64_t rt_mib_parked; /* rt_mibtable.c's parked list head: record ref | tag << 32 */
