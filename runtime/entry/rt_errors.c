/* rt_errors.c - fatal allocation errors, reported as LLVM's runtime reports
 * them, always on stderr (whatever log_path says):
 *
 *   ==<pid>==ERROR: MemProfiler: <what went wrong>
 *       #0 ... in malloc ...
 *       #1 ... in main file.c:12:3
 *   ==<pid>==HINT: if you don't care about these errors you may set allocator_may_return_null=1
 *   SUMMARY: MemProfiler: <kind> file.c:12:3 in main
 *
 * (no SUMMARY with print_summary=0; the process map follows with
 * print_module_map=1 or 2).  Then, unlike LLVM, the profile recorded so far
 * is written, and the process exits with status 1 as LLVM's does.  Callers
 * are allocation entry points, after the allocator returned: no runtime
 * lock is held. */
#include <sys/syscall.h>

#include "rt_errors.h"
#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_sys.h"
#include "runtime/heap/rt_heap.h"
#include "runtime/output/rt_dump.h"
#include "runtime/output/rt_frames.h"
#include "runtime/output/rt_output.h"
#include "runtime/output/rt_text.h"
#include "runtime/record/rt_stack.h"

static void put_pid_prefix(rt_buf *b) { rt_buf_printf(b, "==%d==", rt_getpid()); }

static void write_buf(rt_buf *b) {
  if (!b->failed)
    rt_write(2, b->p, b->len);
  b->len = 0;
}

void rt_die_alloc(rt_caller c, const char *kind, int hint, const char *fmt, ...) {
  static int dying;
  if (__atomic_exchange_n(&dying, 1, __ATOMIC_ACQ_REL))
    for (;;) /* another thread reports: it ends the process */
      rt_sched_yield();
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  rt_vformat(msg, sizeof msg, fmt, ap);
  va_end(ap);

  rt_buf b = {0}, where = {0};
  put_pid_prefix(&b);
  rt_buf_printf(&b, "ERROR: MemProfiler: %s\n", msg);
  write_buf(&b); /* before the stack: naming frames may take a while */
  uintptr_t pcs[RT_MAX_STACK];
  uint32_t k = rt_stack_get(rt_stack_capture(c), pcs);
  rt_frames_print_pcs(&b, pcs, k, &where);
  if (hint) {
    put_pid_prefix(&b);
    rt_buf_printf(&b, "HINT: if you don't care about these errors you may set "
                      "allocator_may_return_null=1\n");
  }
  if (rt_flags.print_summary) {
    rt_buf_printf(&b, "SUMMARY: MemProfiler: %s", kind);
    if (where.len)
      rt_buf_append(&b, " ", 1), rt_buf_append(&b, where.p, where.len);
    rt_buf_append(&b, "\n", 1);
  }
  write_buf(&b);
  rt_buf_free(&where);
  rt_buf_free(&b);
  if (rt_flags.print_module_map)
    rt_print_module_map(2);
  if (!rt_exit_dumped && rt_flags.dump_at_exit) {
    rt_dump(0);
    rt_exit_dumped = 1;
  }
  rt_syscall(SYS_exit_group, 1, 0, 0);
  __builtin_unreachable();
}

int rt_may_return_null(void) { return rt_flags.allocator_may_return_null; }

void rt_alloc_failed(size_t n, rt_caller c) {
  if (rt_flags.allocator_may_return_null)
    return;
  if (n > RT_MAX_ALLOC_SIZE)
    rt_die_alloc(c, "allocation-size-too-big", 1,
                 "requested allocation size 0x%lx exceeds maximum supported size of 0x%lx",
                 (unsigned long)n, (unsigned long)RT_MAX_ALLOC_SIZE);
  rt_die_alloc(c, "out-of-memory", 1,
               "out of memory: allocator is trying to allocate 0x%lx bytes",
               (unsigned long)n);
}
