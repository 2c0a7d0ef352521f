// inline.cc - allocations inside an always_inline function, inlined into
// main and into mid(); built at -O2 so the profile has inline frames.
// Argument: REPS (default 20).
#include <cstdlib>
#include <cstring>

static inline __attribute__((always_inline)) char *inl_alloc(size_t n) {
  char *p = new char[n];
  memset(p, 1, n);
  return p;
}

__attribute__((noinline)) char *mid(size_t n) { return inl_alloc(n); }

__attribute__((noinline)) void use(char *p) { asm volatile("" : : "r"(p) : "memory"); }

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 20;
  for (int i = 0; i < reps; i++) {
    char *a = inl_alloc(64);
    use(a);
    delete[] a;
  }
  for (int i = 0; i < reps * 2; i++) {
    char *b = mid(32);
    use(b);
    delete[] b;
  }
  return 0;
}
