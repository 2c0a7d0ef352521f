// many_contexts.cc - 4096 allocation contexts through one allocation
// function: step() recurses 12 levels through r1/r2 chosen by the bits of w,
// so every w/2 gives its own call stack.  Contexts with w % 3 == 0 keep their
// block until the end (after a 1.1 s sleep: cold); the others free at once.
#include <cstdlib>
#include <unistd.h>

__attribute__((noinline)) char *leaf(int n) { return new char[n]; }
__attribute__((noinline)) char *r1(int d, int w);
__attribute__((noinline)) char *r2(int d, int w);
__attribute__((noinline)) char *step(int d, int w) {
  return d == 0 ? leaf(w) : ((w >> d) & 1) ? r1(d - 1, w) : r2(d - 1, w);
}
__attribute__((noinline)) char *r1(int d, int w) { return step(d, w); }
__attribute__((noinline)) char *r2(int d, int w) { return step(d, w); }

int main() {
  static char *kept[3 * 4096];
  int n = 0;
  for (int rep = 0; rep < 3; rep++)
    for (int w = 0; w < 8192; w += 2) {
      char *p = step(12, w + 1);
      if (w % 3 == 0)
        kept[n++] = p;
      else
        delete[] p;
    }
  usleep(1100000);
  while (n) delete[] kept[--n];
  return 0;
}
