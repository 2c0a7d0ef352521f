/* rt_output.c - where profiles go: <prefix>.<pid> (prefix = log_path, else
 * __memprof_profile_filename, which is "memprof.profraw" unless the program
 * was built with another; an empty one means stderr; "stdout"/"stderr"
 * special).
 * Opened lazily with O_WRONLY|O_CREAT|O_TRUNC 0660 and kept open so later
 * dumps append; reopened under the new pid after fork; closed by
 * __memprof_profile_reset.  Failures are reported once on stderr and the
 * program carries on; LLVM's runtime dies with status 1 at the failed
 * write.  Ours makes the exit status 1 instead, once the program exits with
 * 0 (a program's own failure status is kept): the status comes from an
 * on_exit handler, which runs before the exit-time dump in a program linked
 * with libmemprof.a and after it with the shared runtime (a library's
 * handler is registered before __libc_start_main's), so whichever of the
 * two comes last decides. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "rt_output.h"
#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_libc.h"
#include "runtime/base/rt_lock.h"
#include "runtime/base/rt_state.h"
#include "runtime/base/rt_sys.h"

/* Weak (clang emits a strong copy in every instrumented TU).  The name
 * clang gives by default: a program that was not built with
 * -fmemory-profile (the runtime preloaded) writes a file too, not a binary
 * profile on its stderr. */
RT_EXPORT __attribute__((weak)) char __memprof_profile_filename[] = "memprof.profraw";

#define PATH_MAX_LEN 4096

static rt_mutex mu = RT_MUTEX_INIT;
static int fd = -1, fd_pid, is_file;
static int error_reported;
static char full_path[PATH_MAX_LEN]; /* of the open file */
/* The program's exit status, once known (whether a profile could not be
 * written where asked is rt_profile_failed, rt_state.h). */
static int exit_status, exit_status_known;
int rt_exit_dumped; /* rt_output.h */

static int str_eq(const char *a, const char *b) {
  while (*a && *a == *b)
    a++, b++;
  return *a == *b;
}

static const char *prefix(void) {
  if (rt_flags.log_path)
    return rt_flags.log_path;
  if (__memprof_profile_filename[0])
    return __memprof_profile_filename;
  return NULL;
}

static void report_once(const char *what, const char *path) {
  rt_output_note_failure();
  if (error_reported)
    return;
  error_reported = 1;
  rt_report("ERROR: %s: %s (profile not written)", what, path);
}

static size_t exe_basename(char *out, size_t cap) {
  char buf[PATH_MAX_LEN];
  long n = rt_syscall(SYS_readlink, "/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0)
    return rt_format(out, cap, "unknown");
  buf[n] = 0;
  const char *b = buf;
  for (const char *p = buf; *p; p++)
    if (*p == '/')
      b = p + 1;
  return rt_format(out, cap, "%s", b);
}

/* Build the file name; 0 if it does not fit. */
static int build_path(char *out, size_t cap, const char *pre) {
  char exe[256] = "";
  if (rt_flags.log_exe_name)
    exe_basename(exe, sizeof exe);
  size_t n = rt_format(out, cap, "%s%s%s.%d%s", pre, exe[0] ? "." : "", exe,
                       rt_getpid(), rt_flags.log_suffix ? rt_flags.log_suffix : "");
  return n + 1 < cap;
}

static int is_dir(const char *path) {
  struct stat st;
  return rt_syscall(SYS_stat, path, &st, 0) == 0 && S_ISDIR(st.st_mode);
}

/* 0 (reported) if a parent cannot be made: it exists as a file, say. */
static int make_parents(char *path) {
  for (char *p = path + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = 0;
    int r = rt_mkdir(path, 0755);
    int ok = r == 0 || (r == -17 /* EEXIST */ && is_dir(path));
    if (!ok)
      report_once("Can't create directory", path);
    *p = '/';
    if (!ok)
      return 0;
  }
  return 1;
}

static int open_output(void) {
  const char *pre = prefix();
  is_file = 0;
  if (!pre || str_eq(pre, "stderr"))
    return fd = 2;
  if (str_eq(pre, "stdout"))
    return fd = 1;
  char path[PATH_MAX_LEN];
  if (!build_path(path, sizeof path, pre)) {
    char head[9];
    rt_format(head, sizeof head, "%s", pre);
    report_once("Path is too long", head);
    return -1;
  }
  int f = rt_open(path, O_WRONLY | O_CREAT | O_TRUNC, 0660);
  if (f == -2 /* ENOENT */ || f == -20 /* ENOTDIR */) {
    if (!make_parents(path))
      return -1;
    f = rt_open(path, O_WRONLY | O_CREAT | O_TRUNC, 0660);
  }
  if (f < 0) {
    report_once("Can't open file", path);
    return -1;
  }
  is_file = 1;
  fd_pid = rt_getpid();
  rt_memcpy(full_path, path, sizeof full_path);
  return fd = f;
}

void rt_output_init(void) {
  /* Names are resolved at first write (the CWD and pid of that moment). */
}

int rt_output_write(const void *buf, size_t n) {
  if (rt_nonblocking) {
    if (!rt_mutex_trylock(&mu))
      return -1;
  } else {
    rt_mutex_lock(&mu);
  }
  if (fd >= 0 && is_file && fd_pid != rt_getpid()) {
    rt_close(fd); /* forked: the child writes its own file */
    fd = -1;
  }
  if (fd < 0)
    open_output();
  int ok = -1;
  if (fd >= 0) {
    long r = rt_write(fd, buf, n);
    if (r >= 0)
      ok = 0;
    else if (!error_reported) {
      error_reported = 1;
      rt_output_note_failure();
      rt_report("ERROR: writing the profile failed (errno %d)", (int)-r);
    }
  }
  rt_mutex_unlock(&mu);
  return ok;
}

/* __sanitizer_get_report_path: the file profiles go to now ("<prefix>.<pid>",
 * opened if it was not), as LLVM's returns; "stdout" or "stderr" for those. */
const char *rt_output_path(void) {
  rt_mutex_lock(&mu);
  if (fd >= 0 && is_file && fd_pid != rt_getpid()) {
    rt_close(fd);
    fd = -1;
  }
  if (fd < 0)
    open_output();
  const char *p = is_file ? full_path : fd == 1 ? "stdout" : fd == 2 ? "stderr" : "";
  rt_mutex_unlock(&mu);
  return p;
}

int rt_output_file(char *path, size_t cap, uint64_t *size) {
  if (rt_nonblocking) {
    if (!rt_mutex_trylock(&mu))
      return 0;
  } else {
    rt_mutex_lock(&mu);
  }
  int ok = fd >= 0 && is_file && fd_pid == rt_getpid();
  if (ok) {
    long end = rt_syscall(SYS_lseek, fd, 0, 1 /* SEEK_CUR */);
    ok = end >= 0 && rt_format(path, cap, "%s", full_path) + 1 < cap;
    *size = ok ? (uint64_t)end : 0;
  }
  rt_mutex_unlock(&mu);
  return ok;
}

/* The program's buffered output is flushed first: _exit would drop it. */
static void exit_failed(void) {
  fflush(NULL);
  rt_syscall(SYS_exit_group, 1, 0, 0);
}

static void on_exit_status(int status, void *arg) {
  (void)arg;
  exit_status = status;
  exit_status_known = 1;
  if (rt_profile_failed && rt_exit_dumped && status == 0)
    exit_failed();
}

void rt_output_install_exit(void) { on_exit(on_exit_status, NULL); }

void rt_output_exit_check(void) {
  if (rt_profile_failed && exit_status_known && exit_status == 0)
    exit_failed();
}

void rt_output_reset(void) {
  rt_mutex_lock(&mu);
  if (fd >= 0 && is_file)
    rt_close(fd);
  if (is_file || fd < 0)
    fd = -1;
  rt_mutex_unlock(&mu);
}

void rt_output_fork_child(void) { rt_mutex_reset(&mu); }
RT_HIDDEN void rt_output_fork_prepare(void) { rt_mutex_lock(&mu); }
RT_HIDDEN void rt_output_fork_parent(void) { rt_mutex_unlock(&mu); }
