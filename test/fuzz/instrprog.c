/* instrprog.c - the program whose instrumentation (PGO) profiles seed the
 * instrprof fuzzer and the damaged-file corpus (instrprog.py records them):
 * indirect calls to several targets and one uninstrumented target (value
 * kind 0), memcpy of varying sizes (value kind 1), and a condition with
 * three terms (an MC/DC bitmap under -fcoverage-mcdc).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*op_fn)(int);

static int twice(int x) { return 2 * x; }
static int plus_one(int x) { return x + 1; }
int negate(int x) { return -x; }

static op_fn ops[4] = {twice, plus_one, negate, abs};

static int decide(int a, int b, int c) { return (a > 2 && b < 5) || c == 7; }

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 300, sum = 0;
  char src[256], dst[256];
  memset(src, 1, sizeof src);
  for (int i = 0; i < n; i++) {
    sum += ops[(i * 7) % 4](i);
    memcpy(dst, src, (size_t)(i % 5) * 16 + 1);
    sum += dst[0] + decide(i % 4, i % 9, i % 11);
  }
  printf("%d\n", sum);
  return 0;
}
