// inline_split.cc - one allocation function inlined into two callers, one
// keeping its block across a 1.2 s sleep (cold), one freeing its blocks at
// once after many accesses (not cold).  Inlined, the allocation is two
// calls, one in each caller, each reached by its own contexts: clang gives
// each its own single verdict instead of one ambiguous call.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

static volatile long sink;
static char *volatile seen; // the busy blocks escape, so -O2 keeps them

static inline __attribute__((always_inline)) char *make(size_t n) {
  return new char[n];
}

__attribute__((noinline)) char *keep_one() {
  char *p = make(4096);
  p[0] = 1;
  return p;
}

__attribute__((noinline)) void churn() {
  for (int i = 0; i < 100; i++) {
    char *p = make(64);
    seen = p;
    for (int r = 0; r < 20; r++) {
      memset(p, r, 64);
      sink += p[r];
    }
    delete[] p;
  }
}

int main() {
  char *kept = keep_one();
  churn();
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  delete[] kept;
  std::printf("%ld\n", (long)sink);
  return 0;
}
