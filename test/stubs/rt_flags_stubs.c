/* rt_flags_stubs.c - what runtime/base/rt_flags.c calls in the rest of the
 * runtime, stubbed so that the option parser can be compiled alone into a
 * test (test/unit/runtime/test_rt_flags.c) or a fuzzer (test/fuzz/fuzz_options.c).
 * Warnings are counted and the last one kept, not printed; the program's
 * __memprof_default_options() string is rt_stub_default_options. */
#define _GNU_SOURCE /* strchrnul, for the runtime's libc table */
#include "rt_flags_stubs.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *rt_stub_default_options;
size_t rt_stub_reports;
char rt_stub_last_report[512];

const char *__memprof_default_options(void) { return rt_stub_default_options; }

void rt_report(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rt_stub_last_report, sizeof rt_stub_last_report, fmt, ap);
  va_end(ap);
  rt_stub_reports++;
}

void rt_printf_fd(int fd, const char *fmt, ...) {
  (void)fd;
  (void)fmt;
}

int rt_open(const char *path, int flags, int mode) {
  (void)path;
  (void)flags;
  (void)mode;
  return -1;
}

void rt_close(int fd) { (void)fd; }

int rt_profile_failed;

/* The runtime's byte/string helpers call through this table (rt_internal.h);
 * here it points at libc's functions of the same names. */
rt_libc_fns rt_libc = {
#define RT_LIBC_FN(name, ret, args) .name = name,
#include "runtime/base/rt_libc_fns.inc"
#undef RT_LIBC_FN
};
