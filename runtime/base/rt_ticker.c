/* rt_ticker.c - the runtime's one background thread: it runs a function
 * (rt_background.c's loop) with every signal blocked, on its own small
 * stack and its own thread pointer.
 *
 * It is started with a raw clone, not pthread_create: it can be started from
 * inside malloc, a signal handler or a forked child (pthread_create may
 * allocate and takes libc locks), and glibc never learns about it, so it
 * never runs thread-exit or fork handlers.  Because glibc does not know it,
 * the function it runs must not touch libc state: only raw syscalls, no TLS
 * variable and no errno.  Its thread pointer is a private fake TCB (self
 * pointer and the stack-protector canary at the offsets x86-64 code reads),
 * so it does not depend on the memory of the thread that started it, which
 * may exit long before it.  It dies with the process (exit_group) and does
 * not exist in a forked child. */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>

#include "rt_clock.h"
#include "rt_sys.h"

#define TICKER_STACK (64 * 1024)

/* The words of the x86-64 TCB that compiled code may read through %fs:
 * 0x00 the TCB's own address, 0x28 the stack-protector canary. */
typedef struct fake_tcb {
  void *self;
  uintptr_t unused[4];
  uintptr_t canary;
  uintptr_t pad[2];
} fake_tcb;
_Static_assert(__builtin_offsetof(fake_tcb, canary) == 0x28, "canary at fs:0x28");

static fake_tcb tcb __attribute__((aligned(64)));
static void (*entry)(void);

static __attribute__((noreturn, used)) void ticker_start(void) {
  entry();
  for (;;)
    rt_syscall(SYS_exit, 0, 0, 0); /* this thread only */
}

/* clone(2) returning in the child on a fresh stack: the child finds its
 * start function at the top of that stack and never returns from it. */
static long raw_clone(unsigned long flags, void *stack_top, void *tls) {
  long ret;
  void **sp = (void **)stack_top - 2; /* 16-aligned at the call below */
  sp[0] = (void *)ticker_start;
  register long r10 __asm__("r10") = 0; /* child_tid */
  register long r8 __asm__("r8") = (long)tls;
  __asm__ volatile("syscall\n\t"
                   "test %%rax, %%rax\n\t"
                   "jnz 1f\n\t"
                   "xor %%ebp, %%ebp\n\t"
                   "call *(%%rsp)\n\t"
                   "hlt\n"
                   "1:"
                   : "=a"(ret)
                   : "a"(SYS_clone), "D"(flags), "S"(sp), "d"(0), "r"(r10), "r"(r8)
                   : "rcx", "r11", "memory");
  return ret;
}

int rt_ticker_spawn(void (*fn)(void)) {
  char *stack = rt_mmap_anon(TICKER_STACK, 0);
  if (!stack)
    return 0;
  uintptr_t canary;
  __asm__("mov %%fs:0x28, %0" : "=r"(canary));
  tcb.self = &tcb;
  tcb.canary = canary;
  entry = fn;
  /* Blocked before the clone, so no signal can ever be delivered to the new
   * thread (it inherits the mask); the caller's mask is restored after. */
  uint64_t all = ~0ULL, old;
  rt_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, (long)&old, 8, 0, 0);
  long tid = raw_clone(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND |
                           CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS,
                       stack + TICKER_STACK, &tcb);
  rt_syscall6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8, 0, 0);
  if (tid < 0) {
    rt_munmap(stack, TICKER_STACK);
    return 0;
  }
  return 1;
}
