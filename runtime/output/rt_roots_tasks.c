/* rt_roots_tasks.c - what /proc says of the process's threads, for a
 * roots census that stops them (rt_roots_stop.c) and scans them
 * (rt_roots_threads.c): the ids of every thread (/proc/self/task, also
 * those the runtime did not start), whether one is still alive and blocks
 * a signal (/proc/self/task/TID/status), and the mapping that holds an
 * address (/proc/self/maps: the stack of a thread the runtime knows only
 * by its stack pointer).
 *
 * Read with system calls into buffers on the stack: no allocation, no
 * stdio, and no lock (the census runs while the other threads are
 * stopped). */
#define _GNU_SOURCE
#include <sys/syscall.h>

#include "rt_roots_priv.h"
#include "runtime/base/rt_libc.h"
#include "runtime/base/rt_sys.h"

#define O_DIRECTORY_FLAG 0200000

int rr_tasks_list(int *tids, int max) {
  int fd = rt_open("/proc/self/task", O_DIRECTORY_FLAG, 0);
  if (fd < 0)
    return -1;
  char buf[4096] __attribute__((aligned(8)));
  int n = 0;
  long got;
  while ((got = rt_syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
    for (long off = 0; off < got;) {
      /* struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, name */
      unsigned short reclen;
      rt_memcpy(&reclen, buf + off + 16, sizeof reclen);
      const char *name = buf + off + 19;
      int tid = 0;
      for (const char *p = name; *p >= '0' && *p <= '9'; p++)
        tid = tid * 10 + (*p - '0');
      if (tid > 0 && n < max)
        tids[n++] = tid;
      off += reclen ? reclen : got;
    }
  }
  rt_close(fd);
  return n;
}

/* The value after key (e.g. "\nSigBlk:") in buf[0, n), skipping blanks:
 * its first character's offset, or -1. */
static long field(const char *buf, long n, const char *key, long klen) {
  for (long i = 0; i + klen < n; i++)
    if (!rt_memcmp(buf + i, key, (size_t)klen)) {
      long k = i + klen;
      while (k < n && (buf[k] == '\t' || buf[k] == ' '))
        k++;
      return k;
    }
  return -1;
}

int rr_task_status(int tid, int sig, int *blocks) {
  char path[64], buf[4096];
  *blocks = 0;
  rt_format(path, sizeof path, "/proc/self/task/%d/status", tid);
  int fd = rt_open(path, 0 /* O_RDONLY */, 0);
  if (fd < 0)
    return 0;
  long n = rt_syscall(SYS_read, fd, buf, sizeof buf - 1);
  rt_close(fd);
  if (n <= 0)
    return 0;
  static const char state[] = "\nState:", sigblk[] = "\nSigBlk:";
  long s = field(buf, n, state, sizeof state - 1);
  if (s >= 0 && (buf[s] == 'Z' || buf[s] == 'X'))
    return 0; /* ended, not yet reaped */
  long b = field(buf, n, sigblk, sizeof sigblk - 1);
  uint64_t mask = 0;
  for (long k = b; b >= 0 && k < n; k++) {
    char ch = buf[k];
    int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
    if (d < 0)
      break;
    mask = mask << 4 | (uint64_t)d;
  }
  *blocks = (int)(mask >> (sig - 1) & 1);
  return 1;
}

static uintptr_t hex(const char *p, const char *end, const char **next) {
  uintptr_t v = 0;
  for (; p < end; p++) {
    int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
    if (d < 0)
      break;
    v = v << 4 | (uintptr_t)d;
  }
  *next = p;
  return v;
}

int rr_mapping_of(uintptr_t a, uintptr_t *lo, uintptr_t *hi) {
  int fd = rt_open("/proc/self/maps", 0 /* O_RDONLY */, 0);
  if (fd < 0)
    return 0;
  char buf[8192];
  long have = 0, got;
  int found = 0;
  while (!found && (got = rt_syscall(SYS_read, fd, buf + have, sizeof buf - have)) > 0) {
    have += got;
    long start = 0;
    for (long i = 0; i < have && !found; i++) {
      if (buf[i] != '\n')
        continue;
      const char *p;
      uintptr_t l = hex(buf + start, buf + i, &p);
      uintptr_t h = p < buf + i && *p == '-' ? hex(p + 1, buf + i, &p) : 0;
      if (l <= a && a < h) {
        *lo = l;
        *hi = h;
        found = 1;
      }
      start = i + 1;
    }
    rt_memmove(buf, buf + start, (size_t)(have - start)); /* a partial line */
    have -= start;
    if (have == (long)sizeof buf)
      have = 0; /* a line longer than the buffer: not one of ours */
  }
  rt_close(fd);
  return found;
}
