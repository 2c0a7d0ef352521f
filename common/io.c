/* io.c - input files in memory, byte buffers and atomic output (io.h). */
#define _GNU_SOURCE /* fallocate */
#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Inputs up to this size are read into the heap, not mapped: a mapping of
 * the page cache costs its page-table entries at map time and a TLB
 * shootdown of every CPU the process runs on (the preparing thread's too)
 * at munmap, per input, which cost a merge of many inputs more than reading
 * them into the heap mp_heap_prefill faulted in. */
#define READ_WHOLE_MAX (16u << 20)

static int read_whole(mp_file *f, int fd, mp_err *err) {
  unsigned char *m = malloc(f->size);
  if (!m) {
    close(fd);
    return mp_fail(err, "cannot read: out of memory for %zu bytes", f->size);
  }
  for (size_t got = 0; got < f->size;) {
    ssize_t n = pread(fd, m + got, f->size - got, (off_t)got);
    if (n <= 0) {
      int e = errno;
      close(fd);
      free(m);
      return mp_fail(err, "cannot read: %s", n ? strerror(e) : "file shrank while read");
    }
    got += (size_t)n;
  }
  close(fd);
  f->owned = m;
  f->data = m;
  return 0;
}

int mp_file_open(mp_file *f, const char *path, mp_err *err) {
  memset(f, 0, sizeof *f);
  /* O_NONBLOCK: a FIFO must be refused below, not block the open. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return mp_fail(err, "cannot open: %s", strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return mp_fail(err, "cannot stat: %s", strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return mp_fail(err, "not a regular file");
  }
  f->size = (size_t)st.st_size;
  if (f->size == 0) {
    close(fd);
    f->data = (const unsigned char *)"";
    return 0;
  }
  if (f->size <= READ_WHOLE_MAX) return read_whole(f, fd, err);
  /* every byte is read, so map it whole now: one call instead of a page
   * fault every few pages (and no heap: RLIMIT_DATA does not count it) */
  void *m = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  int e = errno;
  close(fd);
  if (m == MAP_FAILED) return mp_fail(err, "cannot map: %s", strerror(e));
  f->map = m;
  f->data = m;
  return 0;
}

void mp_file_close(mp_file *f) {
  if (f->map) munmap(f->map, f->size);
  free(f->owned);
  memset(f, 0, sizeof *f);
}

void mp_buf_reserve(mp_buf *b, size_t extra) {
  if (b->len + extra <= b->cap) return;
  size_t nc = b->cap ? b->cap * 2 : 4096;
  while (nc < b->len + extra) nc *= 2;
  b->data = mp_xrealloc(b->data, nc);
  b->cap = nc;
}

void mp_buf_free(mp_buf *b) {
  free(b->data);
  memset(b, 0, sizeof *b);
}

void mp_buf_printf(mp_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  mp_buf_reserve(b, (size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf((char *)b->data + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

/* mkstemp creates 0600; give the output the mode a plain create would. */
static mode_t output_mode(void) {
  mode_t um = umask(0);
  umask(um);
  return 0666 & ~um;
}

static int write_all(int fd, const unsigned char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* Devices and pipes (-o /dev/null, a FIFO) are written in place: renaming
 * a temporary file over them would replace the node itself. */
static int write_in_place(const char *path, const void *data, size_t len,
                          mp_err *err) {
  int fd = strcmp(path, "-") == 0 ? 1 : open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return mp_fail(err, "cannot open: %s", strerror(errno));
  int rc = write_all(fd, data, len);
  int e = errno;
  if (fd != 1) close(fd);
  return rc ? mp_fail(err, "cannot write: %s", strerror(e)) : 0;
}

int mp_write_atomic(const char *path, const void *data, size_t len,
                    mp_err *err) {
  struct stat st;
  if (strcmp(path, "-") == 0 ||
      (stat(path, &st) == 0 && !S_ISREG(st.st_mode)))
    return write_in_place(path, data, len, err);
  size_t n = strlen(path);
  char *tmp = mp_xmalloc(n + 32);
  snprintf(tmp, n + 32, "%s.tmp.%ld.XXXXXX", path, (long)getpid());
  int fd = mkstemp(tmp);
  if (fd < 0) {
    mp_fail(err, "cannot create %s: %s", tmp, strerror(errno));
    free(tmp);
    return -1;
  }
  /* No fsync: the rename already keeps readers and a failed run from ever
   * seeing a partial file, and waiting for the disk cost more than all the
   * rest of a one-input merge (llvm-profdata does not sync either). */
  /* Allocating the blocks up front spares the rename a flush: ext4
   * writes back a file's delayed-allocation data when it is renamed over
   * an existing file (auto_da_alloc), which took longer than writing it. */
  if (len) fallocate(fd, 0, 0, (off_t)len); /* a hint: errors are harmless */
  int rc = write_all(fd, data, len);
  int e = errno;
  if (close(fd) != 0 && rc == 0) {
    rc = -1;
    e = errno;
  }
  if (rc == 0) chmod(tmp, output_mode());
  if (rc == 0 && rename(tmp, path) != 0) {
    rc = -1;
    e = errno;
  }
  if (rc != 0) {
    unlink(tmp);
    mp_fail(err, "cannot write: %s", strerror(e));
  }
  free(tmp);
  return rc;
}

char *mp_path_beside(const char *path, const char *suffix) {
  size_t n = strlen(path), k = strlen(suffix);
  char *p = mp_xmalloc(n + k + 1);
  memcpy(p, path, n);
  memcpy(p + n, suffix, k + 1);
  return p;
}
