/* check.h - the unit tests' CHECK: report a failed condition with a printf
 * message and go on, so that one run lists every failure; main ends with
 * check_result().  (Unit tests are files named test_*.c; this header is
 * not one.) */
#ifndef TEST_UNIT_CHECK_H
#define TEST_UNIT_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...)                                                     \
  do {                                                                       \
    if (!(cond)) {                                                           \
      printf("FAIL " __VA_ARGS__);                                           \
      printf("\n");                                                          \
      failures++;                                                            \
    }                                                                        \
  } while (0)

/* The exit status: 0 and "ok" if nothing failed. */
static inline int check_result(void) {
  if (failures) {
    printf("%d failures\n", failures);
    return 1;
  }
  printf("ok\n");
  return 0;
}

#endif
