// multi.cc - allocation calls reached through several contexts each, for
// the report's verdict test: one call whose contexts are all cold, one
// whose contexts are all short-lived and busy, one whose contexts disagree
// two callers up (so clang trims its !memprof contexts and prunes a
// not-cold one), and one busy call for hot hints.  Cold blocks live across
// one 1.2 s sleep and are touched once; busy blocks are freed at once
// after many accesses.  Every function is noinline so that the optimized
// build sees each `new` where the profile does.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#define NOINLINE __attribute__((noinline))

static char *kept[64];
static int n_kept;
static volatile long sink;

NOINLINE char *cold_site(size_t n) { return new char[n]; }
NOINLINE char *busy_site(size_t n) { return new char[n]; }
NOINLINE char *mixed_site(size_t n) { return new char[n]; }
NOINLINE char *hot_site(size_t n) { return new char[n]; }

static void keep(char *p) {
  p[0] = 1;
  kept[n_kept++] = p;
}

static void churn(char *p, size_t n, int rounds) {
  for (int r = 0; r < rounds; r++) {
    memset(p, r, n);
    for (size_t i = 0; i < n; i += 8) sink += p[i];
  }
  delete[] p;
}

NOINLINE void cold_a() { keep(cold_site(4096)); }
NOINLINE void cold_b() { keep(cold_site(8192)); }
NOINLINE void busy_a() { for (int i = 0; i < 50; i++) churn(busy_site(64), 64, 20); }
NOINLINE void busy_b() { for (int i = 0; i < 50; i++) churn(busy_site(128), 128, 20); }

// mixed_site: via mid1 from a cold and a busy caller, via mid2 from two
// busy callers.
NOINLINE char *mid1(size_t n) { return mixed_site(n); }
NOINLINE char *mid2(size_t n) { return mixed_site(n); }
NOINLINE void top_a() { keep(mid1(65536)); }
NOINLINE void top_b() { for (int i = 0; i < 50; i++) churn(mid1(256), 256, 20); }
NOINLINE void top_c() { for (int i = 0; i < 50; i++) churn(mid2(256), 256, 20); }
NOINLINE void top_d() { for (int i = 0; i < 50; i++) churn(mid2(512), 512, 20); }

NOINLINE void hot_a() { for (int i = 0; i < 200; i++) churn(hot_site(32), 32, 200); }
NOINLINE void hot_b() { for (int i = 0; i < 200; i++) churn(hot_site(48), 48, 10); }

int main() {
  // The 64 KiB block is allocated first and freed last, a few ms apart
  // from the others, so its context is the longest-lived by a margin the
  // millisecond timestamps see (the HTML test sorts by lifetime).
  top_a();
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  cold_a();
  cold_b();
  busy_a();
  busy_b();
  top_b();
  top_c();
  top_d();
  hot_a();
  hot_b();
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  for (int i = n_kept - 1; i > 0; i--) delete[] kept[i];
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  delete[] kept[0];
  std::printf("%ld\n", (long)sink);
  return 0;
}
