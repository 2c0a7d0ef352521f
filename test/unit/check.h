/* check.h - the unit tests' one assertion header.  A failed CHECK prints
 * "FAIL file:line: " and its message (or, without one, the condition) and
 * the test goes on, so that one run lists every failure; main ends with
 * `return check_result();`.  (Unit tests are files named test_*.c; this
 * header is not one.)
 *
 *   CHECK(cond)                  FAIL t.c:12: n == 3
 *   CHECK(cond, fmt, ...)        FAIL t.c:12: records 2
 *   CHECK_EQ(got, want)          FAIL t.c:12: n = 2 (0x2), want 3 (0x3)
 */
#ifndef TEST_UNIT_CHECK_H
#define TEST_UNIT_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static int failures;

/* fmt is " " for a CHECK without a message, else " " and the message. */
__attribute__((format(printf, 4, 5))) static inline void
check_fail(const char *file, int line, const char *cond, const char *fmt, ...) {
  printf("FAIL %s:%d: ", file, line);
  if (fmt[1] == 0) {
    printf("%s", cond);
  } else {
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt + 1, ap);
    va_end(ap);
  }
  printf("\n");
  failures++;
}

/* The message, if any, must start with a string literal. */
#define CHECK(cond, ...)                                                     \
  do {                                                                       \
    if (!(cond)) check_fail(__FILE__, __LINE__, #cond, " " __VA_ARGS__);     \
  } while (0)

/* Integers (up to 64 bits) compared as unsigned long long, both printed. */
#define CHECK_EQ(got, want)                                                  \
  do {                                                                       \
    unsigned long long check_g_ = (unsigned long long)(got),                 \
                       check_w_ = (unsigned long long)(want);                \
    CHECK(check_g_ == check_w_, "%s = %llu (%#llx), want %llu (%#llx)", #got, \
          check_g_, check_g_, check_w_, check_w_);                           \
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
