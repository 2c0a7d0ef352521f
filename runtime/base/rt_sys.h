/* rt_sys.h - raw Linux syscalls, a tiny formatter and the
 * runtime's diagnostics (rt_report).
 *
 * Syscalls go straight to the kernel (inline `syscall`) so that no libc
 * wrapper the runtime itself intercepts (write, open, ...) is ever re-entered
 * and errno is never touched.  They return -errno on failure.
 */
#ifndef MEMPROF_RT_SYS_H
#define MEMPROF_RT_SYS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "rt_internal.h"

static inline long rt_syscall6(long n, long a, long b, long c, long d, long e,
                               long f) {
  long ret;
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return ret;
}
#define rt_syscall(n, a, b, c) rt_syscall6(n, (long)(a), (long)(b), (long)(c), 0, 0, 0)

/* Anonymous private memory; NULL on failure.  `noreserve` adds
 * MAP_NORESERVE for big sparse reservations. */
RT_HIDDEN void *rt_mmap_anon(size_t len, int noreserve);
RT_HIDDEN void rt_munmap(void *p, size_t len);
/* The mapping [p, p+old_len) resized to new_len, moved by the kernel if
 * it must (MREMAP_MAYMOVE: page tables move, no byte is copied); NULL on
 * failure, the mapping then unchanged. */
RT_HIDDEN void *rt_mremap(void *p, size_t old_len, size_t new_len);
RT_HIDDEN void rt_madvise(void *p, size_t len, int advice);
/* Faults [lo, hi) in, rounded out to pages, in one call (a hint: kernels
 * without MADV_POPULATE_WRITE say EINVAL and nothing changes). */
RT_HIDDEN void rt_populate(uintptr_t lo, uintptr_t hi);
/* Reserves len bytes (NORESERVE) whose first `small` end on a 2 MiB
 * boundary and stay in small pages; the rest asks for 2 MiB pages (see
 * rt_sys.c).  NULL if it cannot. */
RT_HIDDEN void *rt_reserve_huge_after(size_t len, size_t small);

RT_HIDDEN long rt_write(int fd, const void *buf, size_t n); /* all or -errno */
RT_HIDDEN int rt_open(const char *path, int flags, int mode); /* fd or -errno */
RT_HIDDEN void rt_close(int fd);
RT_HIDDEN int rt_mkdir(const char *path, int mode);
/* Writes a then b to "<path>.tmp" and renames it to path, so that readers
 * see the old file or the new one; 0 or -errno. */
RT_HIDDEN int rt_replace_file(const char *path, const void *a, size_t na, const void *b,
                              size_t nb);
RT_HIDDEN int rt_getpid(void);
RT_HIDDEN int rt_gettid(void);
RT_HIDDEN int rt_futex(int *addr, int op, int val);
RT_HIDDEN void rt_sched_yield(void);

#define RT_PAGE 4096UL
static inline uintptr_t rt_round_up(uintptr_t x, uintptr_t a) {
  return (x + a - 1) & ~(a - 1);
}
static inline uintptr_t rt_round_down(uintptr_t x, uintptr_t a) {
  return x & ~(a - 1);
}

/* ---- formatter ----------------------------------------------------------
 * printf subset: %s %c %d %u %x %p %% with l/ll/z length modifiers and an
 * optional zero-pad width (%016llx).  Writes at most cap-1 chars plus NUL;
 * returns the number of chars stored. */
RT_HIDDEN size_t rt_vformat(char *buf, size_t cap, const char *fmt, va_list ap);
RT_HIDDEN size_t rt_format(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Growable text buffer on mmap'd memory (for text profiles). */
typedef struct rt_buf {
  char *p;
  size_t len, cap;
  int failed;
} rt_buf;
RT_HIDDEN void rt_buf_printf(rt_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* n raw bytes (rt_buf_printf formats at most 1 KiB a call). */
RT_HIDDEN void rt_buf_append(rt_buf *b, const void *p, size_t n);
RT_HIDDEN void rt_buf_free(rt_buf *b);

/* "MemProfiler: <message>" on stderr. */
RT_HIDDEN void rt_report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Raw message (no prefix) to a file descriptor. */
RT_HIDDEN void rt_printf_fd(int fd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
