/* shell.h - what the unit tests that run the LLVM toolchain share: a
 * scratch folder, and a command run through the shell.  (Unit tests are
 * files named test_*.c; this header is not one.) */
#ifndef TEST_UNIT_SHELL_H
#define TEST_UNIT_SHELL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* A new folder /tmp/memprof-<what>-XXXXXX into dir (room for 64 bytes);
 * NULL if it cannot be made. */
static inline char *scratch_dir(char *dir, const char *what) {
  snprintf(dir, 64, "/tmp/memprof-%s-XXXXXX", what);
  return mkdtemp(dir);
}

/* Run the printf-formatted command; 0 if it exited with status 0, else
 * -1 after printing the command. */
__attribute__((format(printf, 1, 2))) static inline int shell(const char *fmt,
                                                              ...) {
  char cmd[4096];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= sizeof cmd || system(cmd) != 0) {
    printf("command failed: %s\n", cmd);
    return -1;
  }
  return 0;
}

/* Remove a folder scratch_dir made (unless MEMPROF_KEEP_SCRATCH is set). */
static inline void scratch_remove(const char *dir) {
  if (!getenv("MEMPROF_KEEP_SCRATCH")) (void)shell("rm -rf '%s'", dir);
}

#endif
