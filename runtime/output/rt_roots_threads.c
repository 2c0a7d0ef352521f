/* rt_roots_threads.c - the roots in the threads: one root per thread
 * (kind RR_THREAD, its id as offset) holding its registers, its stack, its
 * static TLS and thread control block (glibc keeps the static TLS just
 * below the thread pointer and the control block, with the DTV pointer,
 * at it).
 *
 * The calling thread's registers are the callee-saved ones its entry
 * point saved, its stack is read from that entry point's frame up
 * (output/rt_roots.h, RT_ROOTS_ENTER).  The other threads
 * (record/rt_threads.c: those started while roots=1, and the main
 * thread, then those the census found in /proc and stopped): those the
 * census stopped (rt_roots_stop.c), their general
 * registers and their stack from the saved stack pointer up, the red zone
 * below it included (a leaf function's 128 bytes, which the kernel keeps
 * when it delivers the signal); the others, and a stopped thread whose
 * stack pointer is outside its recorded stack (on an alternate signal
 * stack), their whole stack from the recorded bounds, as they run.  Other
 * threads' memory is read with process_vm_readv on our own process, which
 * fails instead of faulting on memory a thread that ended has given back. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "rt_roots_priv.h"
#include "runtime/base/rt_sys.h"
#include "runtime/record/rt_stack.h"
#include "runtime/record/rt_threads.h"

#define CHUNK (64u << 10)
/* glibc's struct pthread (the control block) is about 2.3 KiB. */
#define TCB_BYTES 4096
#define RED_ZONE 128
/* x86-64 glibc's tcbhead_t: tcb, then the DTV pointer. */
#define DTV_AT 8

static size_t static_tls; /* glibc's static TLS size (with the TCB's) */

void rr_threads_prepare(void) {
  if (static_tls)
    return;
  void (*info)(size_t *, size_t *) =
      (void (*)(size_t *, size_t *))dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info");
  size_t size = 0, align = 0;
  if (info)
    info(&size, &align);
  static_tls = size ? size : 4096;
}

/* Reads [lo, hi) of our own memory chunk by chunk through buf, from the
 * top down (a stack's unmapped part is at its bottom), scanning each
 * chunk's words as if in place; stops at the first chunk that cannot be
 * read, and then returns 0. */
static int scan_copy(rr_census *c, uintptr_t lo, uintptr_t hi, uintptr_t *buf) {
  lo = (lo + 7) & ~(uintptr_t)7;
  hi &= ~(uintptr_t)7;
  while (hi > lo) {
    uintptr_t from = hi - lo > CHUNK ? hi - CHUNK : lo;
    struct iovec local = {buf, hi - from}, remote = {(void *)from, hi - from};
    long n = rt_syscall6(SYS_process_vm_readv, rt_getpid(), (long)&local, 1, (long)&remote, 1,
                         0);
    if (n != (long)(hi - from))
      return 0;
    c->scanned += hi - from;
    for (size_t i = 0; i < (hi - from) / 8; i++) {
      int64_t j = rr_find(c, buf[i]);
      if (j >= 0)
        rr_target(c, j);
    }
    hi = from;
  }
  return 1;
}

/* The static TLS below the thread pointer, and the control block above
 * it page by page up to TCB_BYTES or the end of its mapping (the block
 * sits at the top of a thread's stack mapping, often less than TCB_BYTES
 * from its end). */
static void scan_tls(rr_census *c, uintptr_t tp, uintptr_t *buf) {
  if (tp <= static_tls)
    return;
  scan_copy(c, tp - static_tls, tp, buf);
  for (uintptr_t lo = tp, end = tp + TCB_BYTES; lo < end;) {
    uintptr_t hi = rt_round_down(lo + RT_PAGE, RT_PAGE);
    if (hi > end)
      hi = end;
    if (!scan_copy(c, lo, hi, buf))
      break;
    lo = hi;
  }
}

/* One word of our own memory at a, or 0 when it cannot be read. */
static uintptr_t read_word(uintptr_t a) {
  uintptr_t w = 0;
  struct iovec local = {&w, sizeof w}, remote = {(void *)a, sizeof w};
  long n = rt_syscall6(SYS_process_vm_readv, rt_getpid(), (long)&local, 1, (long)&remote, 1, 0);
  return n == (long)sizeof w ? w : 0;
}

int rr_exited_dtvs(const rr_census *c, int64_t *out, int max) {
  uintptr_t tps[RT_EXITED_MAX];
  int n = rt_threads_exited(tps, RT_EXITED_MAX), k = 0;
  for (int i = 0; i < n && k < max; i++) {
    int64_t j = rr_find(c, read_word(tps[i] + DTV_AT));
    if (j >= 0)
      out[k++] = j;
  }
  return k;
}

static void scan_regs(rr_census *c, const uintptr_t *regs, int n) {
  for (int i = 0; i < n; i++) {
    int64_t j = rr_find(c, regs[i]);
    if (j >= 0)
      rr_target(c, j);
  }
}

typedef struct others {
  rr_census *c;
  uintptr_t *buf;
  int self;
} others;

static void other_cb(const rt_thread_rec *t, void *ctx) {
  others *o = ctx;
  if (t->tid == o->self)
    return;
  const rr_stopped *s = rr_stopped_thread(t->slot, t->tid);
  uintptr_t lo = t->bottom;
  if (s && s->sp > t->bottom && s->sp <= t->top)
    lo = s->sp - t->bottom > RED_ZONE ? s->sp - RED_ZONE : t->bottom;
  rr_root_begin(o->c, RR_THREAD, 0, (uint64_t)t->tid, t->top - lo, 0);
  if (s)
    scan_regs(o->c, s->regs, RR_NREGS);
  scan_copy(o->c, lo, t->top, o->buf);
  scan_tls(o->c, t->tp, o->buf);
  rr_root_end(o->c);
}

/* The stopped threads the runtime did not start: the registers, the
 * stack from the stack pointer to the end of its mapping, and the TLS,
 * unless the thread shares its thread pointer with a known thread (a raw
 * clone without CLONE_SETTLS). */
static void unknown_scan(rr_census *c, uintptr_t *buf, uintptr_t self_tp) {
  const rr_stopped *s[RR_UNKNOWN_MAX];
  int n = rr_stopped_unknown(s, RR_UNKNOWN_MAX);
  for (int i = 0; i < n; i++) {
    uintptr_t lo = 0, hi = 0;
    if (!rr_mapping_of(s[i]->sp, &lo, &hi))
      lo = hi = s[i]->sp;
    if (s[i]->sp - lo > RED_ZONE)
      lo = s[i]->sp - RED_ZONE;
    rr_root_begin(c, RR_THREAD, 0, (uint64_t)s[i]->tid, hi - lo, 0);
    scan_regs(c, s[i]->regs, RR_NREGS);
    scan_copy(c, lo, hi, buf);
    if (s[i]->tp != self_tp && !rt_threads_live_tp(s[i]->tp))
      scan_tls(c, s[i]->tp, buf);
    rr_root_end(c);
  }
}

void rr_threads_scan(rr_census *c, const uintptr_t *regs, int nregs, uintptr_t sp) {
  uintptr_t *buf = rt_mmap_anon(CHUNK, 0);
  if (!buf) {
    c->failed = 1;
    return;
  }
  int self = rt_gettid();
  uintptr_t top = rt_thread_stack_top();
  rr_root_begin(c, RR_THREAD, 0, (uint64_t)self, top > sp ? top - sp : 0, 0);
  scan_regs(c, regs, nregs);
  if (top > sp)
    rr_scan(c, (const void *)sp, (const void *)top);
  scan_tls(c, (uintptr_t)__builtin_thread_pointer(), buf);
  rr_root_end(c);
  others o = {c, buf, self};
  rt_threads_for_each(other_cb, &o);
  unknown_scan(c, buf, (uintptr_t)__builtin_thread_pointer());
  rt_munmap(buf, CHUNK);
}
