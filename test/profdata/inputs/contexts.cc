// contexts.cc - one allocation function (obj_alloc) reached from a cold
// context (64 KiB kept 1.5 s, touched once) and a hot one (128 B freed at
// once, written 100 times), plus a cold-only and a hot-only `new` in main,
// so clang sees "cold", "notcold" and "ambiguous" allocations.
// Arguments: REPS (hot iterations, default 50), COLDS (cold blocks, 1-8).
#include <cstdlib>
#include <cstring>
#include <unistd.h>

__attribute__((noinline)) char *obj_alloc(size_t n) { return new char[n]; }

__attribute__((noinline)) char *cold_path(size_t n) { return obj_alloc(n); }
__attribute__((noinline)) char *hot_path(size_t n) { return obj_alloc(n); }

__attribute__((noinline)) void touch(char *p, size_t n, int times) {
  for (int k = 0; k < times; k++) memset(p, k, n);
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 50;
  int colds = argc > 2 ? atoi(argv[2]) : 1;
  char *c[8];
  char *only_cold[8];
  for (int i = 0; i < colds && i < 8; i++) {
    c[i] = cold_path(65536);
    touch(c[i], 1, 1);
    only_cold[i] = new char[32768];
    touch(only_cold[i], 1, 1);
  }
  for (int i = 0; i < reps; i++) {
    char *h = hot_path(128);
    touch(h, 128, 100);
    delete[] h;
    char *nc = new char[256];
    touch(nc, 256, 100);
    delete[] nc;
  }
  usleep(1500000);
  for (int i = 0; i < colds && i < 8; i++) {
    delete[] c[i];
    delete[] only_cold[i];
  }
  return 0;
}
