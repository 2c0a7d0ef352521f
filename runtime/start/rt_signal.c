/* rt_signal.c - deadly signals: where the program left the default
 * disposition, a handler prints MemProfiler:DEADLYSIGNAL, dumps the profile
 * (try-locking only, so it never deadlocks) and exits with status 1, as
 * LLVM's runtime does.  A signal that arrives while another thread is
 * dumping gets the default action back and is re-raised.
 *
 * Termination requests (SIGTERM, SIGINT) left at their default action
 * dump the profile too, then end the process by the signal's own default
 * action, as they would have: its parent sees the same death.  A signal
 * the program ignores (a shell's background job ignores SIGINT) or
 * handles itself is left alone. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>

#include "rt_start.h"
#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_libc.h"
#include "runtime/base/rt_state.h"
#include "runtime/base/rt_sys.h"
#include "runtime/output/rt_dump.h"
#include "runtime/output/rt_output.h"
#include "runtime/record/rt_mibtable.h"

static int dumping;

/* The default action back for sig, which is then raised again: it is
 * blocked while its handler runs, so it lands right after the return
 * (a fault re-triggers by itself). */
static void reraise_default(int sig) {
  struct sigaction dfl;
  rt_memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, NULL);
  rt_syscall(SYS_tgkill, rt_getpid(), rt_gettid(), sig);
}

static void deadly_handler(int sig, siginfo_t *info, void *uctx) {
  (void)info;
  (void)uctx;
  static const char msg[] = "MemProfiler:DEADLYSIGNAL\n";
  rt_write(2, msg, sizeof msg - 1);
  if (!__atomic_exchange_n(&dumping, 1, __ATOMIC_ACQ_REL) && !rt_exit_dumped) {
    rt_dump(1);
    rt_exit_dumped = 1;
    __atomic_store_n(&rt_recording, 0, __ATOMIC_RELEASE);
    rt_syscall(SYS_exit_group, 1, 0, 0);
  }
  reraise_default(sig);
}

/* A termination request: the profile, then the signal's default action.
 * The dump try-locks; while other threads hold the table's stripes it
 * tries again, up to about 100 ms, unless this thread holds one (it
 * interrupted the runtime), when one try is all there is. */
static void terminate_handler(int sig, siginfo_t *info, void *uctx) {
  (void)info;
  (void)uctx;
  if (rt_inited && rt_owns_memory() && !__atomic_exchange_n(&dumping, 1, __ATOMIC_ACQ_REL) &&
      !rt_exit_dumped) {
    int tries = rt_mib_thread_locked() ? 1 : 100;
    while (rt_dump(1) == RT_DUMP_BUSY && --tries) {
      struct timespec ms = {0, 1000000};
      rt_syscall(SYS_nanosleep, &ms, NULL, 0);
    }
    rt_exit_dumped = 1;
    __atomic_store_n(&rt_recording, 0, __ATOMIC_RELEASE);
  }
  reraise_default(sig);
}

static void install_handler(int sig, void (*fn)(int, siginfo_t *, void *)) {
  struct sigaction old;
  if (sigaction(sig, NULL, &old) != 0)
    return;
  if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
    return; /* the program handles it: leave it alone */
  struct sigaction sa;
  rt_memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = fn;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, NULL);
}

static void install(int sig) { install_handler(sig, deadly_handler); }

void rt_signals_install(void) {
  if (rt_flags.handle_sigterm)
    install_handler(SIGTERM, terminate_handler);
  if (rt_flags.handle_sigint)
    install_handler(SIGINT, terminate_handler);
  if (rt_flags.handle_segv)
    install(SIGSEGV);
  if (rt_flags.handle_sigbus)
    install(SIGBUS);
  if (rt_flags.handle_sigfpe)
    install(SIGFPE);
  if (rt_flags.handle_sigill)
    install(SIGILL);
  if (rt_flags.handle_abort)
    install(SIGABRT);
}
