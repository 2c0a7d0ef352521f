/* rt_intercept_io.c - counting interceptors for libc I/O that fills or
 * drains user buffers: read, write, pread(64), pwrite(64), readv, writev,
 * fread, fwrite, fgets, fputs, puts.
 *
 * The real work goes to glibc's own aliases of these functions (__read,
 * _IO_fread, ...), which are exported under those names, so no dlsym and no
 * allocation is needed; readv/writev have no such alias and are resolved
 * with dlsym(RTLD_NEXT) at first use.  As in LLVM, only the bytes actually
 * transferred are counted, after the call.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#include "rt_intercept.h"
#include "runtime/base/rt_libc.h"

extern ssize_t __read(int fd, void *buf, size_t n);
extern ssize_t __write(int fd, const void *buf, size_t n);
extern ssize_t __pread64(int fd, void *buf, size_t n, off_t off);
extern ssize_t __pwrite64(int fd, const void *buf, size_t n, off_t off);
extern size_t _IO_fread(void *p, size_t size, size_t nmemb, FILE *f);
extern size_t _IO_fwrite(const void *p, size_t size, size_t nmemb, FILE *f);
extern char *_IO_fgets(char *s, int n, FILE *f);
extern int _IO_fputs(const char *s, FILE *f);
extern int _IO_puts(const char *s);

RT_EXPORT ssize_t read(int fd, void *buf, size_t n) {
  ssize_t r = __read(fd, buf, n);
  if (r > 0)
    rt_count(buf, (size_t)r);
  return r;
}

RT_EXPORT ssize_t write(int fd, const void *buf, size_t n) {
  ssize_t r = __write(fd, buf, n);
  if (r > 0)
    rt_count(buf, (size_t)r);
  return r;
}


RT_EXPORT ssize_t pread64(int fd, void *buf, size_t n, off_t off) {
  ssize_t r = __pread64(fd, buf, n, off);
  if (r > 0)
    rt_count(buf, (size_t)r);
  return r;
}


RT_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off) {
  ssize_t r = __pwrite64(fd, buf, n, off);
  if (r > 0)
    rt_count(buf, (size_t)r);
  return r;
}

/* off_t is 64-bit on x86-64: the plain names are the same functions. */
RT_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off) RT_ALIAS(pread64);
RT_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
    RT_ALIAS(pwrite64);

/* ---- vectored I/O ---- */

typedef ssize_t (*rt_iov_fn)(int, const struct iovec *, int);

/* libc's function `name`, or NULL (then the raw system call is used). */
static rt_iov_fn real_iov(rt_iov_fn *slot, const char *name) {
  rt_iov_fn f = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
  if (!f) {
    f = (rt_iov_fn)dlsym(RTLD_NEXT, name);
    __atomic_store_n(slot, f, __ATOMIC_RELEASE);
  }
  return f;
}

/* Count the first `total` bytes spread over the vector, one range per
 * element.  writev also counts the iovec array itself, as LLVM does. */
static void count_iov(const struct iovec *iov, int cnt, size_t total) {
  for (int i = 0; i < cnt && total; i++) {
    size_t sz = rt_min(iov[i].iov_len, total);
    rt_count(iov[i].iov_base, sz);
    total -= sz;
  }
}

RT_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt) {
  static rt_iov_fn real;
  rt_iov_fn f = real_iov(&real, "readv");
  ssize_t r = f ? f(fd, iov, cnt) : syscall(SYS_readv, fd, iov, cnt);
  if (r > 0)
    count_iov(iov, cnt, (size_t)r);
  return r;
}

RT_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt) {
  static rt_iov_fn real;
  rt_iov_fn f = real_iov(&real, "writev");
  ssize_t r = f ? f(fd, iov, cnt) : syscall(SYS_writev, fd, iov, cnt);
  if (r > 0) {
    rt_count(iov, sizeof(*iov) * (size_t)cnt);
    count_iov(iov, cnt, (size_t)r);
  }
  return r;
}

/* ---- stdio ---- */

RT_EXPORT size_t fread(void *p, size_t size, size_t nmemb, FILE *f) {
  size_t r = _IO_fread(p, size, nmemb, f);
  if (r > 0)
    rt_count(p, r * size);
  return r;
}

RT_EXPORT size_t fwrite(const void *p, size_t size, size_t nmemb, FILE *f) {
  size_t r = _IO_fwrite(p, size, nmemb, f);
  if (r > 0)
    rt_count(p, r * size);
  return r;
}

RT_EXPORT char *fgets(char *s, int n, FILE *f) {
  char *r = _IO_fgets(s, n, f);
  if (r)
    rt_count(s, rt_strlen(s) + 1);
  return r;
}

RT_EXPORT int fputs(const char *s, FILE *f) {
  rt_count(s, rt_strlen(s) + 1);
  return _IO_fputs(s, f);
}

RT_EXPORT int puts(const char *s) {
  rt_count(s, rt_strlen(s) + 1);
  return _IO_puts(s);
}
