/* rt_sys.c - raw syscall wrappers, the futex slow path, the printf-subset
 * formatter and rt_report (timestamps and CPU ids are rt_clock.c's).
 * Nothing here allocates or touches stdio: it runs inside malloc and
 * inside signal handlers. */
#define _GNU_SOURCE
#include "rt_libc.h"
#include "rt_lock.h"
#include "rt_sys.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>


void *rt_mmap_anon(size_t len, int noreserve) {
  long flags = MAP_PRIVATE | MAP_ANONYMOUS | (noreserve ? MAP_NORESERVE : 0);
  long r = rt_syscall6(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE, flags,
                       -1, 0);
  if (r < 0 && r > -4096)
    return NULL;
  return (void *)r;
}

void rt_munmap(void *p, size_t len) { rt_syscall(SYS_munmap, p, len, 0); }

void *rt_mremap(void *p, size_t old_len, size_t new_len) {
  long r = rt_syscall6(SYS_mremap, (long)p, (long)old_len, (long)new_len,
                       MREMAP_MAYMOVE, 0, 0);
  if (r < 0 && r > -4096)
    return NULL;
  return (void *)r;
}

void rt_madvise(void *p, size_t len, int advice) {
  rt_syscall(SYS_madvise, p, len, advice);
}

void rt_populate(uintptr_t lo, uintptr_t hi) {
  lo = rt_round_down(lo, RT_PAGE);
  hi = rt_round_up(hi, RT_PAGE);
  if (hi > lo)
    rt_madvise((void *)lo, hi - lo, 23 /* MADV_POPULATE_WRITE */);
}

/* For the runtime's own tables that grow with the number of contexts.  A
 * program with tens of thousands of them faults a 4 KiB page every dozen
 * new contexts, a few microseconds each in a guest; past the first `small`
 * bytes one fault brings 2 MiB.  Those stay in small pages so that
 * programs with few contexts (most of them) pay no memory for it.  The
 * reservation is placed so that they end on a 2 MiB boundary.  The huge
 * pages are a hint only: nothing changes but the speed where the kernel
 * says no. */
void *rt_reserve_huge_after(size_t len, size_t small) {
  const uintptr_t huge = (uintptr_t)2 << 20;
  char *raw = rt_mmap_anon(len + huge, 1);
  if (!raw)
    return NULL;
  char *p = (char *)((((uintptr_t)raw + small + huge - 1) & ~(huge - 1)) - small);
  if (p > raw)
    rt_munmap(raw, (size_t)(p - raw));
  if (raw + huge > p)
    rt_munmap(p + len, (size_t)(raw + huge - p));
  if (small < len)
    rt_madvise(p + small, len - small, MADV_HUGEPAGE);
  return p;
}

long rt_write(int fd, const void *buf, size_t n) {
  const char *p = buf;
  size_t done = 0;
  while (done < n) {
    long r = rt_syscall(SYS_write, fd, p + done, n - done);
    if (r == -4 /* EINTR */)
      continue;
    if (r < 0)
      return r;
    if (r == 0)
      return -28; /* ENOSPC: no progress */
    done += (size_t)r;
  }
  return (long)done;
}

int rt_open(const char *path, int flags, int mode) {
  long r;
  do
    r = rt_syscall6(SYS_openat, AT_FDCWD, (long)path, flags | O_CLOEXEC, mode,
                    0, 0);
  while (r == -4);
  return (int)r;
}

void rt_close(int fd) { rt_syscall(SYS_close, fd, 0, 0); }
int rt_mkdir(const char *path, int mode) {
  return (int)rt_syscall(SYS_mkdir, path, mode, 0);
}
int rt_getpid(void) { return (int)rt_syscall(SYS_getpid, 0, 0, 0); }
int rt_gettid(void) { return (int)rt_syscall(SYS_gettid, 0, 0, 0); }
int rt_futex(int *addr, int op, int val) {
  return (int)rt_syscall6(SYS_futex, (long)addr, op, val, 0, 0, 0);
}
void rt_sched_yield(void) { rt_syscall(SYS_sched_yield, 0, 0, 0); }

void rt_mutex_lock_slow(rt_mutex *m) {
  for (int i = 0; i < 100; i++) {
    int c = 0;
    if (__atomic_compare_exchange_n(&m->v, &c, 1, 0, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED))
      return;
    __builtin_ia32_pause();
  }
  while (__atomic_exchange_n(&m->v, 2, __ATOMIC_ACQUIRE) != 0)
    rt_futex(&m->v, 0 /* FUTEX_WAIT */ | 128, 2);
}

/* Spin, then sleep, until m looks free, without taking it.  It marks m
 * contended first, so whoever takes it after such a wait must keep that
 * mark (rt_mutex_trylock_waited): other sleepers rely on its release to
 * wake them. */
void rt_mutex_wait_free(rt_mutex *m) {
  for (int i = 0; i < 100; i++) {
    if (!__atomic_load_n(&m->v, __ATOMIC_RELAXED))
      return;
    __builtin_ia32_pause();
  }
  int c;
  while ((c = __atomic_load_n(&m->v, __ATOMIC_RELAXED)) != 0) {
    if (c == 1 && !__atomic_compare_exchange_n(&m->v, &c, 2, 0, __ATOMIC_RELAXED,
                                               __ATOMIC_RELAXED))
      continue;
    rt_futex(&m->v, 0 /* FUTEX_WAIT */ | 128, 2);
  }
}

/* ---- formatter --------------------------------------------------------- */

typedef struct out {
  char *buf;
  size_t cap, len;
} out;

static void put(out *o, char c) {
  if (o->len + 1 < o->cap)
    o->buf[o->len] = c;
  o->len++;
}

static void put_num(out *o, uint64_t v, unsigned base, int width, char pad,
                    int neg) {
  char tmp[24];
  int n = 0;
  do {
    unsigned d = (unsigned)(v % base);
    tmp[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
    v /= base;
  } while (v);
  if (neg)
    tmp[n++] = '-';
  for (int i = n; i < width; i++)
    put(o, pad);
  while (n)
    put(o, tmp[--n]);
}

size_t rt_vformat(char *buf, size_t cap, const char *fmt, va_list ap) {
  out o = {buf, cap, 0};
  for (const char *f = fmt; *f; f++) {
    if (*f != '%') {
      put(&o, *f);
      continue;
    }
    f++;
    char pad = ' ';
    int width = 0, lng = 0;
    if (*f == '0')
      pad = '0';
    while (*f >= '0' && *f <= '9')
      width = width * 10 + (*f++ - '0');
    while (*f == 'l' || *f == 'z') {
      lng = 1;
      f++;
    }
    switch (*f) {
    case 's': {
      const char *s = va_arg(ap, const char *);
      if (!s)
        s = "(null)";
      size_t n = 0;
      while (s[n])
        n++;
      for (size_t i = n; i < (size_t)width; i++)
        put(&o, ' ');
      while (*s)
        put(&o, *s++);
      break;
    }
    case 'c':
      put(&o, (char)va_arg(ap, int));
      break;
    case 'd': {
      int64_t v = lng ? va_arg(ap, int64_t) : va_arg(ap, int);
      put_num(&o, v < 0 ? (uint64_t)-v : (uint64_t)v, 10, width, pad, v < 0);
      break;
    }
    case 'u':
      put_num(&o, lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned), 10, width,
              pad, 0);
      break;
    case 'x':
      put_num(&o, lng ? va_arg(ap, uint64_t) : va_arg(ap, unsigned), 16, width,
              pad, 0);
      break;
    case 'p':
      put(&o, '0');
      put(&o, 'x');
      put_num(&o, (uintptr_t)va_arg(ap, void *), 16, width, pad, 0);
      break;
    case '%':
      put(&o, '%');
      break;
    case 0:
      f--;
      break;
    default:
      put(&o, '%');
      put(&o, *f);
    }
  }
  if (cap)
    buf[o.len < cap ? o.len : cap - 1] = 0;
  return o.len < cap ? o.len : (cap ? cap - 1 : 0);
}

size_t rt_format(char *buf, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  size_t n = rt_vformat(buf, cap, fmt, ap);
  va_end(ap);
  return n;
}

static int buf_reserve(rt_buf *b, size_t more) {
  if (b->failed)
    return 0;
  if (b->len + more <= b->cap)
    return 1;
  size_t cap = b->cap ? b->cap : 65536;
  while (cap < b->len + more)
    cap *= 2;
  char *p = rt_mmap_anon(cap, 0);
  if (!p) {
    b->failed = 1;
    return 0;
  }
  if (b->p) {
    rt_memcpy(p, b->p, b->len);
    rt_munmap(b->p, b->cap);
  }
  b->p = p;
  b->cap = cap;
  return 1;
}

void rt_buf_printf(rt_buf *b, const char *fmt, ...) {
  char tmp[1024];
  va_list ap;
  va_start(ap, fmt);
  size_t n = rt_vformat(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (!buf_reserve(b, n))
    return;
  rt_memcpy(b->p + b->len, tmp, n);
  b->len += n;
}

void rt_buf_append(rt_buf *b, const void *p, size_t n) {
  if (!buf_reserve(b, n))
    return;
  rt_memcpy(b->p + b->len, p, n);
  b->len += n;
}

void rt_buf_free(rt_buf *b) {
  if (b->p)
    rt_munmap(b->p, b->cap);
  b->p = NULL;
  b->len = b->cap = 0;
}

void rt_printf_fd(int fd, const char *fmt, ...) {
  char tmp[1024];
  va_list ap;
  va_start(ap, fmt);
  size_t n = rt_vformat(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  rt_write(fd, tmp, n);
}

void rt_report(const char *fmt, ...) {
  char tmp[1024];
  size_t n = rt_format(tmp, sizeof tmp, "MemProfiler: ");
  va_list ap;
  va_start(ap, fmt);
  n += rt_vformat(tmp + n, sizeof tmp - n, fmt, ap);
  va_end(ap);
  if (n && tmp[n - 1] != '\n' && n + 1 < sizeof tmp)
    tmp[n++] = '\n';
  rt_write(2, tmp, n);
}

int rt_replace_file(const char *path, const void *a, size_t na, const void *b, size_t nb) {
  char tmp[4200];
  size_t n = rt_format(tmp, sizeof tmp, "%s.tmp", path);
  if (n + 1 >= sizeof tmp)
    return -36; /* ENAMETOOLONG */
  int fd = rt_open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0660);
  if (fd < 0)
    return fd;
  long r = rt_write(fd, a, na);
  if (r >= 0 && nb)
    r = rt_write(fd, b, nb);
  rt_close(fd);
  if (r >= 0)
    r = rt_syscall(SYS_rename, tmp, path, 0);
  if (r < 0)
    rt_syscall(SYS_unlink, tmp, 0, 0);
  return (int)r;
}
