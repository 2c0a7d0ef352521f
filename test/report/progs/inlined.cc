// inlined.cc - an allocation inlined into its caller in the profiled build
// (so its context has an inline frame) and one that is not, for the pprof
// test: a pprof location holds a physical frame and the frames inlined
// into it.
#include <cstdio>

static inline __attribute__((always_inline)) char *inner(size_t n) {
  return new char[n];
}

__attribute__((noinline)) char *outer(size_t n) {
  char *p = inner(n);
  p[0] = 1;
  return p;
}

__attribute__((noinline)) char *plain(size_t n) { return new char[n]; }

int main() {
  char *a = outer(100), *b = plain(200);
  std::printf("%d\n", a[0] + (b[0] = 2));
  delete[] a;
  delete[] b;
  return 0;
}
