/* rt_start_time.c - when the process started, on the runtime's clock
 * (milliseconds from the epoch second rt_clock.c records, as the raw
 * profile's timestamps count), for the timeline's StartMs
 * (docs/timeline-format.md, section 3).
 *
 * The kernel keeps a task's start (the fork that created it) in
 * CLOCK_BOOTTIME and shows it in /proc/self/stat's 22nd field, in clock
 * ticks (USER_HZ, AT_CLKTCK: 100 a second), truncated: the start read is
 * up to one tick (10 ms) before the true one.  It becomes the clock's
 * time through CLOCK_REALTIME and CLOCK_BOOTTIME read together: start =
 * realtime now - (boottime now - boottime at the start).  When /proc
 * cannot be read, the start is when the runtime recorded its epoch (the
 * earliest moment it sees; later than the true start by the dynamic
 * loader's work and the constructors before the runtime's).
 *
 * Recorded once, right after the epoch: a forked child keeps its
 * parent's start, as its timeline continues its parent's.  Raw syscalls
 * and the vDSO only: no allocation. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <time.h>

#include "rt_clock.h"
#include "rt_start_time.h"
#include "rt_sys.h"

static int64_t start_ms;
static int start_from; /* RT_START_* once recorded, 0 before */

/* The 22nd field of /proc/self/stat (starttime, in clock ticks since
 * boot); -1 when it cannot be read. */
static int64_t stat_start_ticks(void) {
  char buf[1024];
  int fd = rt_open("/proc/self/stat", O_RDONLY, 0);
  if (fd < 0)
    return -1;
  long n = rt_syscall(SYS_read, fd, buf, sizeof buf - 1);
  rt_close(fd);
  if (n <= 0)
    return -1;
  long i = n - 1;
  while (i >= 0 && buf[i] != ')') /* the name may hold spaces and ')' */
    i--;
  if (i < 0)
    return -1;
  int field = 2; /* the name's */
  for (i++; i < n && field < 22; i++)
    if (buf[i] == ' ')
      field++;
  int64_t v = -1;
  for (; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
    v = (v < 0 ? 0 : v * 10) + (buf[i] - '0');
  return field == 22 ? v : -1;
}

static int64_t ns_of(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* a / b rounded towards minus infinity */
static int64_t floor_div(int64_t a, int64_t b) {
  return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

void rt_start_record(void) {
  if (__atomic_load_n(&start_from, __ATOMIC_ACQUIRE))
    return;
  int64_t ticks = stat_start_ticks();
  unsigned long hz = getauxval(AT_CLKTCK);
  int64_t ms, epoch = rt_epoch_sec() * 1000000000LL;
  int from;
  if (ticks >= 0 && hz) {
    int64_t boot = ns_of(CLOCK_BOOTTIME), real = ns_of(CLOCK_REALTIME);
    int64_t at_start = ticks / (int64_t)hz * 1000000000LL +
                       ticks % (int64_t)hz * 1000000000LL / (int64_t)hz;
    ms = floor_div(real - (boot - at_start) - epoch, 1000000);
    from = RT_START_KERNEL;
  } else {
    ms = rt_epoch_read_ms();
    from = RT_START_RUNTIME;
  }
  start_ms = ms;
  __atomic_store_n(&start_from, from, __ATOMIC_RELEASE);
}

int64_t rt_start_ms(int *from) {
  rt_start_record();
  *from = __atomic_load_n(&start_from, __ATOMIC_ACQUIRE);
  return start_ms;
}
