/* rt_signal.c - deadly signals: where the program left the default
 * disposition, a handler prints MemProfiler:DEADLYSIGNAL, dumps the profile
 * (try-locking only, so it never deadlocks) and exits with status 1, as
 * LLVM's runtime does.  A signal that arrives while another thread is
 * dumping gets the default action back and is re-raised. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>

#include "rt_start.h"
#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_libc.h"
#include "runtime/base/rt_sys.h"
#include "runtime/output/rt_dump.h"
#include "runtime/output/rt_output.h"
#include "runtime/record/rt_mibtable.h"

static int dumping;

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
  struct sigaction dfl;
  rt_memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigaction(sig, &dfl, NULL);
  /* Faults re-trigger on return; raised signals need raising again.  The
   * signal is blocked in the handler, so it lands right after return. */
  rt_syscall(SYS_tgkill, rt_getpid(), rt_gettid(), sig);
}

static void install(int sig) {
  struct sigaction old;
  if (sigaction(sig, NULL, &old) != 0)
    return;
  if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
    return; /* the program handles it: leave it alone */
  struct sigaction sa;
  rt_memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = deadly_handler;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, NULL);
}

void rt_signals_install(void) {
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
