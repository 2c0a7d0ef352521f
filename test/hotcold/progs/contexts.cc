// contexts.cc - allocation contexts for the -fmemory-profile-use tests of
// libmemprof-hotcold.  For each allocation form clang-22 can turn into a
// __hot_cold_t call (new, new[], their nothrow, align_val_t and
// align+nothrow forms, and the two size-returning forms) there is one
// context whose blocks live long and are never touched (cold_*) and one
// whose blocks are written hard and freed at once (warm_*).  Each context
// is its own function, so the profile decides every call on its own
// without LTO.
//
// The same source is built twice: instrumented (our runtime; the
// size-returning names are linked to operator new with --defsym, as the
// runtime has no size-returning forms) and with the profile.  In the
// second build memprof_hotcold_is_cold exists and the program prints, per
// context, how many of its blocks the cold arena held:
//   ctx NAME blocks=K cold=M
#include <chrono>
#include <cstdio>
#include <cstring>
#include <new>
#include <thread>

extern "C" int memprof_hotcold_is_cold(const void *p) __attribute__((weak));

struct sized_ptr_t {
  void *p;
  size_t n;
};
extern "C" sized_ptr_t __size_returning_new(size_t);
extern "C" sized_ptr_t __size_returning_new_aligned(size_t, std::align_val_t);

struct Small {
  long v[5];
};
struct alignas(64) Big {
  char b[192];
};

enum { NCTX = 10, MAXK = 16, HOT_ROUNDS = 400 };
static void *kept[NCTX][MAXK];
static const char *const names[NCTX] = {
    "new",         "new_array",         "new_nothrow",   "new_array_nothrow",
    "new_aligned", "new_array_aligned", "new_aligned_nothrow",
    "new_array_aligned_nothrow", "size_returning", "size_returning_aligned"};
// Blocks per cold context: all different, so a miscount shows which.
static const int counts[NCTX] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};

// ---- the cold contexts: allocate, keep, never touch --------------------------
__attribute__((noinline)) void *cold_new() { return new Small; }
__attribute__((noinline)) void *cold_new_array() { return new Small[3]; }
__attribute__((noinline)) void *cold_new_nothrow() { return new (std::nothrow) Small; }
__attribute__((noinline)) void *cold_new_array_nothrow() {
  return new (std::nothrow) Small[3];
}
__attribute__((noinline)) void *cold_new_aligned() { return new Big; }
__attribute__((noinline)) void *cold_new_array_aligned() { return new Big[2]; }
__attribute__((noinline)) void *cold_new_aligned_nothrow() {
  return new (std::nothrow) Big;
}
__attribute__((noinline)) void *cold_new_array_aligned_nothrow() {
  return new (std::nothrow) Big[2];
}
__attribute__((noinline)) void *cold_size_returning() {
  return __size_returning_new(1000).p;
}
__attribute__((noinline)) void *cold_size_returning_aligned() {
  return __size_returning_new_aligned(1000, std::align_val_t(64)).p;
}

// ---- the warm contexts: the same forms, used hard and freed at once ------------
__attribute__((noinline)) void *warm_new() { return new Small; }
__attribute__((noinline)) void *warm_new_array() { return new Small[3]; }
__attribute__((noinline)) void *warm_new_nothrow() { return new (std::nothrow) Small; }
__attribute__((noinline)) void *warm_new_array_nothrow() {
  return new (std::nothrow) Small[3];
}
__attribute__((noinline)) void *warm_new_aligned() { return new Big; }
__attribute__((noinline)) void *warm_new_array_aligned() { return new Big[2]; }
__attribute__((noinline)) void *warm_new_aligned_nothrow() {
  return new (std::nothrow) Big;
}
__attribute__((noinline)) void *warm_new_array_aligned_nothrow() {
  return new (std::nothrow) Big[2];
}
__attribute__((noinline)) void *warm_size_returning() {
  return __size_returning_new(1000).p;
}
__attribute__((noinline)) void *warm_size_returning_aligned() {
  return __size_returning_new_aligned(1000, std::align_val_t(64)).p;
}

typedef void *(*alloc_fn)();
static const alloc_fn cold_fns[NCTX] = {
    cold_new,         cold_new_array,         cold_new_nothrow,
    cold_new_array_nothrow, cold_new_aligned, cold_new_array_aligned,
    cold_new_aligned_nothrow, cold_new_array_aligned_nothrow,
    cold_size_returning, cold_size_returning_aligned};
static const alloc_fn warm_fns[NCTX] = {
    warm_new,         warm_new_array,         warm_new_nothrow,
    warm_new_array_nothrow, warm_new_aligned, warm_new_array_aligned,
    warm_new_aligned_nothrow, warm_new_array_aligned_nothrow,
    warm_size_returning, warm_size_returning_aligned};
// Bytes each context's block has (what the program writes in warm ones).
static const size_t sizes[NCTX] = {sizeof(Small), 3 * sizeof(Small), sizeof(Small),
                                   3 * sizeof(Small), sizeof(Big), 2 * sizeof(Big),
                                   sizeof(Big), 2 * sizeof(Big), 1000, 1000};

// Release a block with the delete form that matches how it was made.
static void release(int ctx, void *p) {
  switch (ctx) {
  case 0: case 2: delete static_cast<Small *>(p); break;
  case 1: case 3: delete[] static_cast<Small *>(p); break;
  case 4: case 6: delete static_cast<Big *>(p); break;
  case 5: case 7: delete[] static_cast<Big *>(p); break;
  case 8: ::operator delete(p); break;
  default: ::operator delete(p, std::align_val_t(64)); break;
  }
}

static int warm_cold[NCTX];

static long warm_work() {
  long sum = 0;
  for (int r = 0; r < HOT_ROUNDS; r++)
    for (int c = 0; c < NCTX; c++) {
      char *b = static_cast<char *>(warm_fns[c]());
      if (memprof_hotcold_is_cold)
        warm_cold[c] += memprof_hotcold_is_cold(b);
      for (int pass = 0; pass < 4; pass++) {
        memset(b, r + pass, sizes[c]);
        for (size_t i = 0; i < sizes[c]; i += 8)
          sum += b[i];
      }
      release(c, b);
    }
  return sum;
}

int main() {
  for (int c = 0; c < NCTX; c++)
    for (int i = 0; i < counts[c]; i++)
      kept[c][i] = cold_fns[c]();
  long sum = warm_work();
  std::this_thread::sleep_for(std::chrono::milliseconds(1300));
  for (int c = 0; c < NCTX; c++) {
    int cold = 0;
    for (int i = 0; i < counts[c]; i++)
      cold += memprof_hotcold_is_cold ? memprof_hotcold_is_cold(kept[c][i]) : 0;
    if (memprof_hotcold_is_cold) {
      std::printf("ctx cold_%s blocks=%d cold=%d\n", names[c], counts[c], cold);
      std::printf("ctx warm_%s blocks=%d cold=%d\n", names[c], HOT_ROUNDS, warm_cold[c]);
    }
    for (int i = 0; i < counts[c]; i++)
      release(c, kept[c][i]);
  }
  std::printf("sum %ld\n", sum);
  return 0;
}
