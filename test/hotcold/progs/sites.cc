// sites.cc - hinted call sites with known counts, for the call-site file
// (MEMPROF_HOTCOLD_OPTIONS=site_file=...):
//  - cold_site: 4 threads x 1000 allocations hinted cold, thread t of
//    (t + 1) x 32 bytes, all live together for 100 ms, then freed;
//  - aligned_site: 5 aligned nothrow allocations of 64 bytes hinted 0,
//    freed at once;
//  - warm_site: 10 allocations of 100 bytes hinted 128 (not cold), 3 of
//    them still live at exit.
// Each site is one call in a function of its own (noinline; built with
// -fno-optimize-sibling-calls, so the call is not a tail jump, whose site
// would be the caller's call), so the file must have exactly three sites;
// the test symbolizes their addresses.
#include <chrono>
#include <cstdint>
#include <new>
#include <thread>

enum class __hot_cold_t : uint8_t;
void *operator new(size_t, __hot_cold_t);
void *operator new(size_t, std::align_val_t, const std::nothrow_t &, __hot_cold_t) noexcept;

static const int THREADS = 4, PER_THREAD = 1000;

__attribute__((noinline)) void *cold_site(size_t n) {
  return operator new(n, static_cast<__hot_cold_t>(1));
}

__attribute__((noinline)) void *aligned_site() {
  return operator new(64, std::align_val_t(64), std::nothrow, static_cast<__hot_cold_t>(0));
}

__attribute__((noinline)) void *warm_site() {
  return operator new(100, static_cast<__hot_cold_t>(128));
}

static void worker(int t) {
  static thread_local void *blocks[PER_THREAD];
  for (int i = 0; i < PER_THREAD; i++)
    blocks[i] = cold_site((size_t)(t + 1) * 32);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (int i = 0; i < PER_THREAD; i++)
    operator delete(blocks[i]);
}

static void *kept[3];

int main() {
  // first, so that the cold arena exists before the threads: while one
  // thread sets it up, the others' cold blocks go to the default arenas
  for (int i = 0; i < 5; i++)
    operator delete(aligned_site(), std::align_val_t(64));
  std::thread th[THREADS];
  for (int t = 0; t < THREADS; t++)
    th[t] = std::thread(worker, t);
  for (int t = 0; t < THREADS; t++)
    th[t].join();
  for (int i = 0; i < 10; i++) {
    void *p = warm_site();
    if (i < 3)
      kept[i] = p;
    else
      operator delete(p);
  }
  return kept[0] ? 0 : 1;
}
