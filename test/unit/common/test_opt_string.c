/* test_opt_string.c - the option-string syntax the runtime and the hot/cold
 * allocator share (include/opt_string.h): the pairs a string splits into,
 * with every separator, empty names and values and a pair without '=';
 * integers at and past their bound; the boolean words. */
#include <string.h>

#include "test/unit/check.h"
#include "include/internal/opt_string.h"

/* The pairs of s as "name=value;" each ("name;" printed as "name=;"). */
static const char *pairs(const char *s) {
  static char out[256];
  size_t n = 0;
  mpf_opt_pair p;
  while (mpf_opt_next(&s, &p))
    n += (size_t)snprintf(out + n, sizeof out - n, "%.*s=%.*s;", (int)p.name_len,
                          p.name, (int)p.val_len, p.val);
  out[n] = 0;
  return out;
}

static void test_pairs(void) {
  static const struct {
    const char *in, *want;
  } cases[] = {
      {"", ""},
      {":, \t\n\r", ""},
      {"a=1", "a=1;"},
      {"a=1:b=2,c=3 d=4\te=5\nf=6\rg=7", "a=1;b=2;c=3;d=4;e=5;f=6;g=7;"},
      {"::a=1,,", "a=1;"},
      {"flag", "flag=;"},
      {"flag:b=", "flag=;b=;"},
      {"=5:x=y=z", "=5;x=y=z;"},
      {"path=/tmp/a,b", "path=/tmp/a;b=;"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const char *got = pairs(cases[i].in);
    CHECK(!strcmp(got, cases[i].want), "pairs of \"%s\": %s, want %s", cases[i].in,
          got, cases[i].want);
  }
}

static int int_of(const char *v, long long max, long long *out) {
  return mpf_opt_int(v, strlen(v), max, out);
}

static void test_int(void) {
  long long x = 7;
  CHECK(int_of("0", 10, &x) && x == 0, "0");
  CHECK(int_of("2147483647", 0x7fffffff, &x) && x == 2147483647, "INT_MAX");
  CHECK(int_of("-2147483647", 0x7fffffff, &x) && x == -2147483647, "-INT_MAX");
  x = 7;
  CHECK(!int_of("2147483648", 0x7fffffff, &x) && x == 7, "past the bound refused, out untouched");
  CHECK(!int_of("99999999999999999999999", 0x7fffffff, &x), "no overflow");
  CHECK(int_of("007", 10, &x) && x == 7, "leading zeros");
  CHECK(!int_of("", 10, &x) && !int_of("-", 10, &x), "no digits");
  CHECK(!int_of("1x", 10, &x) && !int_of("+1", 10, &x) && !int_of(" 1", 10, &x),
        "not a number");
  CHECK(mpf_opt_int("12", 1, 100, &x) && x == 1, "only n characters read");
}

/* Out of line: with constant arguments gcc's -Warray-bounds follows
 * mpf_opt_is past the word's end on a path that stops before it. */
static __attribute__((noinline)) int is(const char *v, size_t n, const char *w) {
  return mpf_opt_is(v, n, w);
}

static void test_bool(void) {
  static const char *const on[] = {"1", "true", "yes"}, *const off[] = {"0", "false", "no"};
  int b;
  for (int i = 0; i < 3; i++) {
    b = 0;
    CHECK(mpf_opt_bool(on[i], strlen(on[i]), &b) && b == 1, "%s", on[i]);
    b = 1;
    CHECK(mpf_opt_bool(off[i], strlen(off[i]), &b) && b == 0, "%s", off[i]);
  }
  static const char *const bad[] = {"", "2", "True", "on", "yess", "t"};
  for (int i = 0; i < 6; i++)
    CHECK(!mpf_opt_bool(bad[i], strlen(bad[i]), &b), "\"%s\" refused", bad[i]);
  CHECK(is("help=1", 4, "help") && !is("hel", 3, "help") && !is("helpx", 5, "help"),
        "mpf_opt_is compares exactly n characters with the whole word");
}

int main(void) {
  test_pairs();
  test_int();
  test_bool();
  return check_result();
}
