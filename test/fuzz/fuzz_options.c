/* fuzz_options.c - libFuzzer target for the runtime's option parser
 * (runtime/rt_flags.c, compiled in unchanged).
 *
 * rt_flags.c has no pure parse entry point, so the input is handed to
 * rt_flags_init() as the program's __memprof_default_options() string, with
 * MEMPROF_OPTIONS unset.  The runtime's syscall and report helpers are
 * stubbed: the parser's warnings are counted, not printed.
 */
#define _GNU_SOURCE /* strchrnul, for the runtime's libc table */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_core.h"

static char *opts;
static size_t reports;

const char *__memprof_default_options(void) { return opts; }

/* ---- stubs for what rt_flags.c calls in the runtime ------------------- */
void rt_report(const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  reports++;
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
void rt_output_note_failure(void) {}
/* The runtime's byte/string helpers call through this table (rt_internal.h);
 * here it points at libc's functions of the same names. */
rt_libc_fns rt_libc = {
#define RT_LIBC_FN(name, ret, args) .name = name,
#include "rt_libc_fns.inc"
#undef RT_LIBC_FN
};

static rt_flags_t defaults;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  unsetenv("MEMPROF_OPTIONS");
  defaults = rt_flags;
  return 0;
}

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "fuzz invariant broken: %s\n", what);
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  opts = malloc(size + 1);
  memcpy(opts, data, size);
  opts[size] = 0;
  rt_flags = defaults;
  rt_flags.help = 0;
  rt_flags_init();
  check(rt_flags.raw_version >= 3 && rt_flags.raw_version <= 5,
        "raw_version outside 3..5 after init");
  check(!rt_flags.log_path || strlen(rt_flags.log_path) < 4096,
        "log_path longer than its buffer");
  check(!rt_flags.log_suffix || strlen(rt_flags.log_suffix) < 256,
        "log_suffix longer than its buffer");
  /* Values are copied: the option string may go away after init. */
  check(!rt_flags.log_path ||
            !(rt_flags.log_path >= opts && rt_flags.log_path <= opts + size),
        "log_path points into the option string");
  free(opts);
  opts = NULL;
  return 0;
}
