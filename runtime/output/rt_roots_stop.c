/* rt_roots_stop.c - stopping the other threads for a roots census
 * (roots=1, roots_stop_threads=1): each thread the runtime knows
 * (record/rt_threads.c), then each other one /proc/self/task lists (up to
 * RR_UNKNOWN_MAX: threads started before roots=1 took effect or by a raw
 * clone), is sent a signal whose handler saves its general-purpose
 * registers, stack pointer and thread pointer from the interrupted
 * context, answers, and waits on a futex until the census releases it;
 * rt_roots_threads.c then scans those registers and the stack from the
 * saved stack pointer up.  A thread finds its request by its slot in the
 * table (rt_thread_slot), or else by its id.
 *
 * The signal is SIGRTMAX-3: a real-time signal, so that a request is
 * queued, never merged with one the thread has pending; glibc reserves the
 * lowest real-time signals for itself and programs usually count theirs
 * up from SIGRTMIN, so one near the top is the least likely to be the
 * program's, and SIGRTMAX itself and just below are the ones programs
 * that count down take first.  It is sent with rt_tgsigqueueinfo (tgkill
 * with a payload), whose value marks it as the census's: any other
 * instance of the signal goes to the handler the program had installed
 * before ours (a program with none: it is ignored).  The handler runs with
 * every signal blocked and SA_RESTART; a system call the signal interrupts
 * is restarted, but those signal(7) lists as never restarted (poll,
 * select, epoll_wait, nanosleep, sem_timedwait, calls with a socket
 * timeout...) fail with EINTR.
 *
 * No deadlock: a thread is only stopped where it holds no runtime lock
 * nor MIB stripe (it answers "busy" and is asked again a moment later), and
 * while threads are stopped the census takes no lock but those (the
 * stripes, the large-block and internal-memory locks, the named roots'),
 * and never the loader's (the modules are listed before); it releases the
 * threads before it files the census.  A thread that does not answer
 * within roots_stop_wait_ms (it blocks the signal) is given up on, and is
 * not asked again while its SigBlk (/proc/self/task/TID/status) says it
 * still blocks the signal: it is left running, scanned as without
 * stopping, and reported once; a thread the runtime does not know is
 * asked only when /proc says it does not block the signal, and left
 * unscanned when it does not stop.  A thread that ended is skipped;
 * threads started while a census runs are not stopped. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>

#include "rt_roots_priv.h"
#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_libc.h"
#include "runtime/base/rt_state.h"
#include "runtime/base/rt_sys.h"
#include "runtime/record/rt_mibtable.h"
#include "runtime/record/rt_threads.h"

#define FUTEX_WAIT_PRIVATE (0 | 128)
#define FUTEX_WAKE_PRIVATE (1 | 128)
#define ESRCH 3
#define BUSY_PAUSE_NS 100000 /* before a thread that held a lock is asked again */

enum { IDLE, ASKED, BUSY, STOPPED };

typedef struct stop_rec {
  int state; /* futex word: the census's request and the thread's answer */
  int tid;   /* the thread asked */
  int missed; /* the id of a thread of this slot that did not answer */
  rr_stopped saved;
} stop_rec;

/* The known threads' slots, then the unknown threads of this census. */
#define NRECS (RT_THREADS_MAX + RR_UNKNOWN_MAX)
static stop_rec recs[NRECS];
static int asked[NRECS]; /* the records the running census asked */
static int n_asked;
static uint64_t known[RT_THREADS_MAX]; /* the known threads' ids this census, sorted */
static int n_known, n_unknown;
static int acks; /* futex word: bumped at each answer */
static int sig;
static struct sigaction prior;
static int installed, warned;
static char cookie; /* its address is the payload that marks our signals */

/* ---- the stopped thread's side --------------------------------------------- */

static void chain(int s, siginfo_t *si, void *uc) {
  if (prior.sa_flags & SA_SIGINFO) {
    if (prior.sa_sigaction)
      prior.sa_sigaction(s, si, uc);
  } else if (prior.sa_handler != SIG_DFL && prior.sa_handler != SIG_IGN) {
    prior.sa_handler(s);
  }
}

/* ASKED -> st; 0 if the census gave up on this thread meanwhile. */
static int answer(stop_rec *r, int st) {
  int want = ASKED;
  if (!__atomic_compare_exchange_n(&r->state, &want, st, 0, __ATOMIC_ACQ_REL,
                                   __ATOMIC_RELAXED))
    return 0;
  __atomic_fetch_add(&acks, 1, __ATOMIC_RELEASE);
  rt_futex(&acks, FUTEX_WAKE_PRIVATE, 1);
  return 1;
}

/* The calling thread's request: in its slot, or among the unknown. */
static stop_rec *request_of(int tid) {
  int slot = rt_thread_slot - 1;
  if (slot >= 0 && slot < RT_THREADS_MAX && recs[slot].tid == tid)
    return &recs[slot];
  int n = __atomic_load_n(&n_unknown, __ATOMIC_ACQUIRE);
  for (int i = 0; i < n; i++)
    if (recs[RT_THREADS_MAX + i].tid == tid)
      return &recs[RT_THREADS_MAX + i];
  return NULL;
}

static void on_signal(int s, siginfo_t *si, void *uc) {
  if (si->si_code != SI_QUEUE || si->si_value.sival_ptr != &cookie) {
    chain(s, si, uc);
    return;
  }
  stop_rec *r = request_of(rt_gettid());
  if (!r)
    return; /* a thread that left the table since it was asked */
  if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) != ASKED)
    return; /* a late request the census gave up on */
  if (rt_mib_thread_locked()) { /* the census may need what it holds */
    answer(r, BUSY);
    return;
  }
  static const int which[RR_NREGS] = {REG_RAX, REG_RBX, REG_RCX, REG_RDX, REG_RSI,
                                      REG_RDI, REG_RBP, REG_R8,  REG_R9,  REG_R10,
                                      REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};
  const greg_t *g = ((const ucontext_t *)uc)->uc_mcontext.gregs;
  for (int i = 0; i < RR_NREGS; i++)
    r->saved.regs[i] = (uintptr_t)g[which[i]];
  r->saved.sp = (uintptr_t)g[REG_RSP];
  r->saved.tp = (uintptr_t)__builtin_thread_pointer();
  r->saved.tid = rt_gettid();
  if (!answer(r, STOPPED))
    return;
  while (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) == STOPPED)
    rt_futex(&r->state, FUTEX_WAIT_PRIVATE, STOPPED);
}

void rr_stop_init(void) {
  if (!rt_flags.roots_stop_threads || installed)
    return;
  sig = SIGRTMAX - 3;
  struct sigaction sa;
  rt_memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigfillset(&sa.sa_mask);
  if (sigaction(sig, &sa, &prior) == 0)
    installed = 1;
}

/* ---- the census's side ------------------------------------------------------ */

static uint64_t now_ns(void) {
  struct timespec ts = {0, 0};
  rt_syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts, 0);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void nap(long ns) {
  struct timespec ts = {0, ns};
  rt_syscall(SYS_nanosleep, &ts, 0, 0);
}

/* The program may have put its own handler in ours' place since. */
static int still_ours(void) {
  struct sigaction cur;
  return sigaction(sig, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
         cur.sa_sigaction == on_signal;
}

static long send(int tid) {
  siginfo_t si;
  rt_memset(&si, 0, sizeof si);
  si.si_signo = sig;
  si.si_code = SI_QUEUE;
  si.si_pid = rt_getpid();
  si.si_value.sival_ptr = &cookie;
  return rt_syscall6(SYS_rt_tgsigqueueinfo, si.si_pid, tid, sig, (long)&si, 0, 0);
}

/* 0, or the signal could not be sent: -ESRCH the thread ended, else
 * (-EAGAIN: too many signals queued, one per census to a thread that
 * blocks it) it will not answer. */
static long ask(int slot, rr_stop_stats *st) {
  stop_rec *r = &recs[slot];
  __atomic_store_n(&r->state, ASKED, __ATOMIC_RELEASE);
  long e = send(r->tid);
  if (e >= 0)
    return 0;
  __atomic_store_n(&r->state, IDLE, __ATOMIC_RELEASE);
  *(e == -ESRCH ? &st->gone : &st->unanswered) += 1;
  return e;
}

/* Whether thread tid blocks the signal now (SigBlk in /proc).  Asked
 * only of a thread that did not answer the last time: threads block every
 * signal for a moment (glibc around clone, our handler until it returns),
 * and such a one answers once it unblocks. */
static int blocks_signal(int tid) {
  int blocks;
  return rr_task_status(tid, sig, &blocks) && blocks;
}

typedef struct asking {
  int self;
  rr_stop_stats *st;
} asking;

static void ask_cb(const rt_thread_rec *t, void *ctx) {
  asking *a = ctx;
  if (t->tid == a->self || n_asked >= RT_THREADS_MAX)
    return;
  known[n_known++] = (uint64_t)t->tid;
  if (recs[t->slot].missed == t->tid && blocks_signal(t->tid)) {
    a->st->blocked++; /* no new request queued to it at each census */
    return;
  }
  recs[t->slot].tid = t->tid;
  asked[n_asked++] = t->slot;
  ask(t->slot, a->st);
}

/* Whether the table listed thread tid (known[] sorted). */
static int is_known(int tid) {
  int lo = 0, hi = n_known;
  while (lo < hi) {
    int mid = lo + (hi - lo) / 2;
    if (known[mid] < (uint64_t)tid)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < n_known && known[lo] == (uint64_t)tid;
}

/* The threads /proc lists that the table does not: asked too, unless
 * they ended or block the signal. */
static void ask_unknown(asking *a) {
  int tids[RR_UNKNOWN_MAX + 64 + RT_THREADS_MAX / 16];
  int n = rr_tasks_list(tids, (int)(sizeof tids / sizeof *tids));
  rr_sort(known, (uint64_t)n_known, sizeof *known);
  for (int i = 0; i < n && n_unknown < RR_UNKNOWN_MAX; i++) {
    int blocks;
    if (tids[i] == a->self || is_known(tids[i]) || !rr_task_status(tids[i], sig, &blocks))
      continue;
    if (blocks) {
      a->st->blocked++;
      continue;
    }
    int k = RT_THREADS_MAX + n_unknown;
    recs[k].tid = tids[i];
    __atomic_store_n(&n_unknown, n_unknown + 1, __ATOMIC_RELEASE);
    asked[n_asked++] = k;
    a->st->unknown++;
    ask(k, a->st);
  }
}

/* The thread asked in record k ended or left the table: no answer will
 * come. */
static int gone(int k) {
  int tid = recs[k].tid;
  return (k < RT_THREADS_MAX && rt_threads_tid(k) != tid) ||
         rt_syscall(SYS_tgkill, rt_getpid(), tid, 0) == -ESRCH;
}

/* One look at the answers: asks again those that were busy, gives up on
 * those that ended (and on every one left when give_up); returns how many
 * are still to answer. */
static int pending(rr_stop_stats *st, int give_up) {
  int open = 0;
  for (int i = 0; i < n_asked; i++) {
    int slot = asked[i];
    stop_rec *r = &recs[slot];
    int s = __atomic_load_n(&r->state, __ATOMIC_ACQUIRE);
    if (s == BUSY && !give_up) {
      if (ask(slot, st))
        continue;
      s = ASKED;
    }
    if (s != ASKED && s != BUSY)
      continue; /* stopped, or given up on */
    int ended = gone(slot);
    if (!give_up && !ended) {
      open++;
      continue;
    }
    while ((s == ASKED || s == BUSY) &&
           !__atomic_compare_exchange_n(&r->state, &s, IDLE, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
      ;
    if (s != STOPPED)
      *(ended ? &st->gone : &st->unanswered) += 1;
    if (s != STOPPED && !ended)
      r->missed = r->tid;
  }
  return open;
}

static int any_busy(void) {
  for (int i = 0; i < n_asked; i++)
    if (__atomic_load_n(&recs[asked[i]].state, __ATOMIC_ACQUIRE) == BUSY)
      return 1;
  return 0;
}

void rr_stop_world(rr_stop_stats *st) {
  *st = (rr_stop_stats){0};
  n_asked = n_known = 0;
  __atomic_store_n(&n_unknown, 0, __ATOMIC_RELEASE);
  if (!installed)
    return;
  if (!still_ours()) {
    if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
      rt_report("WARNING: the program replaced the runtime's handler of signal %d: "
                "roots censuses do not stop the other threads",
                sig);
    return;
  }
  uint64_t t0 = now_ns(), deadline = t0 + (uint64_t)rt_flags.roots_stop_wait_ms * 1000000u;
  asking a = {rt_gettid(), st};
  rt_threads_for_each(ask_cb, &a);
  ask_unknown(&a);
  st->asked = n_asked + st->blocked;
  for (;;) {
    int seen = __atomic_load_n(&acks, __ATOMIC_ACQUIRE);
    int late = now_ns() >= deadline;
    if (!pending(st, late) || late)
      break;
    if (any_busy()) {
      nap(BUSY_PAUSE_NS);
      continue;
    }
    struct timespec ts = {0, 1000000}; /* look for ended threads every ms */
    rt_syscall6(SYS_futex, (long)&acks, FUTEX_WAIT_PRIVATE, seen, (long)&ts, 0, 0);
  }
  for (int i = 0; i < n_asked; i++)
    if (__atomic_load_n(&recs[asked[i]].state, __ATOMIC_ACQUIRE) == STOPPED) {
      st->stopped++;
      recs[asked[i]].missed = 0;
    }
  st->stop_us = (now_ns() - t0) / 1000;
  st->since_ns = now_ns();
}

int rr_stopped_unknown(const rr_stopped **out, int max) {
  int k = 0;
  for (int i = 0; i < n_unknown && k < max; i++) {
    const stop_rec *r = &recs[RT_THREADS_MAX + i];
    if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) == STOPPED && r->saved.tid == r->tid)
      out[k++] = &r->saved;
  }
  return k;
}

const rr_stopped *rr_stopped_thread(int slot, int tid) {
  if (slot < 0 || slot >= RT_THREADS_MAX)
    return NULL;
  const stop_rec *r = &recs[slot];
  if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) != STOPPED || r->saved.tid != tid)
    return NULL;
  return &r->saved;
}

void rr_release_world(rr_stop_stats *st) {
  for (int i = 0; i < n_asked; i++) {
    stop_rec *r = &recs[asked[i]];
    if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) != STOPPED)
      continue;
    __atomic_store_n(&r->state, IDLE, __ATOMIC_RELEASE);
    rt_futex(&r->state, FUTEX_WAKE_PRIVATE, 1);
  }
  n_asked = 0;
  __atomic_store_n(&n_unknown, 0, __ATOMIC_RELEASE);
  if (!installed)
    return;
  uint64_t held_us = st->since_ns ? (now_ns() - st->since_ns) / 1000 : 0;
  if ((st->unanswered || st->blocked) && !__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
    rt_report("WARNING: roots census: threads that block signal %d: %d, that did not stop "
              "within %d ms: %d; their whole stacks were scanned as they ran",
              sig, st->blocked, rt_flags.roots_stop_wait_ms, st->unanswered);
  if (rt_flags.verbosity >= 1)
    rt_report("roots census: %d of %d threads stopped in %llu us, held %llu us; "
              "%d block the signal, %d did not answer, %d ended; "
              "%d not started by the runtime",
              st->stopped, st->asked, (unsigned long long)st->stop_us,
              (unsigned long long)held_us, st->blocked, st->unanswered, st->gone, st->unknown);
}

/* The child's only thread is the one that forked: no census runs there. */
void rr_stop_fork_child(void) {
  for (int i = 0; i < NRECS; i++)
    recs[i].state = recs[i].missed = IDLE;
  n_asked = n_known = n_unknown = 0;
  acks = 0;
}
