/* instrprof_prog.c - a program for test_instrprof.c, built with
 * -fprofile-generate: a loop, branches, a static function (whose PGO name
 * carries the file name), an indirect call (a value-profile site) and a
 * function never called, so that the raw file has counters of every kind
 * of count, zero included. */
__attribute__((noinline)) static int is_odd(int x) { return x & 1; }

__attribute__((noinline)) int classify(int i) {
  if (i % 3 == 0) return 0;
  if (is_odd(i)) return 1;
  return 2;
}

__attribute__((noinline)) int never(int i) { return i * 2; }

int (*volatile call)(int) = classify;

int main(int argc, char **argv) {
  (void)argv;
  int s = 0;
  for (int i = 0; i < 37; i++) s += call(i);
  if (argc > 5) s += never(argc);
  return s == 0;
}
