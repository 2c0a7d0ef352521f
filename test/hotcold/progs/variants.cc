// variants.cc - every __hot_cold_t entry point of libmemprof-hotcold, and
// the size-returning ones, called directly (declared as tcmalloc declares
// them, which gives exactly the names clang-22 emits), checked for:
//  - placement: a hint below 128 is served by the cold arena, others not,
//    whatever the upper bits of the hint's register hold;
//  - alignment (16 by default, the asked one for align_val_t forms);
//  - failure: nothrow forms return NULL, throwing forms run the
//    new-handler while there is one, then throw std::bad_alloc;
//  - release: every delete form, free() and realloc(p, 0) give the block
//    back (jemalloc's counters of the cold arena, and the bytes allocated
//    in the default arenas, return to where they were).
// Prints one line per failed check and "variants: CHECKS checks, FAILS
// failures"; exits 1 on any failure.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <new>

#include "check.h"

enum class __hot_cold_t : uint8_t;
void *operator new(size_t, __hot_cold_t);
void *operator new[](size_t, __hot_cold_t);
void *operator new(size_t, const std::nothrow_t &, __hot_cold_t) noexcept;
void *operator new[](size_t, const std::nothrow_t &, __hot_cold_t) noexcept;
void *operator new(size_t, std::align_val_t, __hot_cold_t);
void *operator new[](size_t, std::align_val_t, __hot_cold_t);
void *operator new(size_t, std::align_val_t, const std::nothrow_t &, __hot_cold_t) noexcept;
void *operator new[](size_t, std::align_val_t, const std::nothrow_t &, __hot_cold_t) noexcept;

extern "C" {
struct __sized_ptr_t {
  void *p;
  size_t n;
};
__sized_ptr_t __size_returning_new(size_t);
__sized_ptr_t __size_returning_new_aligned(size_t, std::align_val_t);
__sized_ptr_t __size_returning_new_hot_cold(size_t, __hot_cold_t);
__sized_ptr_t __size_returning_new_aligned_hot_cold(size_t, std::align_val_t, __hot_cold_t);
}

static const size_t HUGE_SIZE = SIZE_MAX / 2;
static const unsigned hints[] = {0, 1, 127, 128, 222, 254, 255};
static __hot_cold_t H(unsigned h) { return static_cast<__hot_cold_t>(h); }
static bool cold_hint(unsigned h) { return h < 128; }

// ---- jemalloc's view: cold arena frees, default-arena bytes ----------------

static uint64_t arena_u64(const char *what) {
  char name[96];
  std::snprintf(name, sizeof name, "stats.arenas.%d.%s", memprof_hotcold_cold_arena(), what);
  uint64_t epoch = 1, v = 0;
  size_t sz = sizeof epoch;
  memprof_hotcold_mallctl("epoch", &epoch, &sz, &epoch, sizeof epoch);
  sz = sizeof v;
  if (memprof_hotcold_mallctl(name, &v, &sz, nullptr, 0))
    return UINT64_MAX;
  return v;
}
static uint64_t cold_frees() {
  return arena_u64("small.ndalloc") + arena_u64("large.ndalloc");
}
static uint64_t cold_allocs() {
  return arena_u64("small.nmalloc") + arena_u64("large.nmalloc");
}
// ---- one allocation form: make, check, release --------------------------------

typedef void *(*make_fn)(size_t n, size_t align, unsigned hint);
typedef void (*release_fn)(void *p, size_t n, size_t align);

struct form {
  const char *name;
  make_fn make;
  bool aligned_form;
};

static void *f_new(size_t n, size_t, unsigned h) { return operator new(n, H(h)); }
static void *f_new_arr(size_t n, size_t, unsigned h) { return operator new[](n, H(h)); }
static void *f_new_nt(size_t n, size_t, unsigned h) { return operator new(n, std::nothrow, H(h)); }
static void *f_new_arr_nt(size_t n, size_t, unsigned h) {
  return operator new[](n, std::nothrow, H(h));
}
static void *f_new_al(size_t n, size_t a, unsigned h) {
  return operator new(n, std::align_val_t(a), H(h));
}
static void *f_new_arr_al(size_t n, size_t a, unsigned h) {
  return operator new[](n, std::align_val_t(a), H(h));
}
static void *f_new_al_nt(size_t n, size_t a, unsigned h) {
  return operator new(n, std::align_val_t(a), std::nothrow, H(h));
}
static void *f_new_arr_al_nt(size_t n, size_t a, unsigned h) {
  return operator new[](n, std::align_val_t(a), std::nothrow, H(h));
}
static void *f_srn(size_t n, size_t, unsigned h) { return __size_returning_new_hot_cold(n, H(h)).p; }
static void *f_srn_al(size_t n, size_t a, unsigned h) {
  return __size_returning_new_aligned_hot_cold(n, std::align_val_t(a), H(h)).p;
}

static const form forms[] = {
    {"new", f_new, false},
    {"new[]", f_new_arr, false},
    {"new nothrow", f_new_nt, false},
    {"new[] nothrow", f_new_arr_nt, false},
    {"new align", f_new_al, true},
    {"new[] align", f_new_arr_al, true},
    {"new align nothrow", f_new_al_nt, true},
    {"new[] align nothrow", f_new_arr_al_nt, true},
    {"size_returning", f_srn, false},
    {"size_returning align", f_srn_al, true},
};

// Every way a program may give a block back.
static void r_delete(void *p, size_t, size_t) { operator delete(p); }
static void r_delete_arr(void *p, size_t, size_t) { operator delete[](p); }
static void r_delete_sized(void *p, size_t n, size_t) { operator delete(p, n); }
static void r_delete_arr_sized(void *p, size_t n, size_t) { operator delete[](p, n); }
static void r_delete_nt(void *p, size_t, size_t) { operator delete(p, std::nothrow); }
static void r_delete_al(void *p, size_t, size_t a) { operator delete(p, std::align_val_t(a)); }
static void r_delete_arr_al(void *p, size_t, size_t a) { operator delete[](p, std::align_val_t(a)); }
static void r_delete_sized_al(void *p, size_t n, size_t a) {
  operator delete(p, n, std::align_val_t(a));
}
static void r_delete_arr_sized_al(void *p, size_t n, size_t a) {
  operator delete[](p, n, std::align_val_t(a));
}
static void r_delete_al_nt(void *p, size_t, size_t a) {
  operator delete(p, std::align_val_t(a), std::nothrow);
}
static void r_free(void *p, size_t, size_t) { free(p); }
static void r_realloc0(void *p, size_t, size_t) { CHECK(realloc(p, 0) == nullptr, "realloc(p, 0)"); }

static const struct {
  const char *name;
  release_fn fn;
} releases[] = {
    {"delete", r_delete},           {"delete[]", r_delete_arr},
    {"sized delete", r_delete_sized}, {"sized delete[]", r_delete_arr_sized},
    {"nothrow delete", r_delete_nt}, {"align delete", r_delete_al},
    {"align delete[]", r_delete_arr_al}, {"sized align delete", r_delete_sized_al},
    {"sized align delete[]", r_delete_arr_sized_al},
    {"align nothrow delete", r_delete_al_nt}, {"free", r_free},
    {"realloc(p, 0)", r_realloc0},
};
static const size_t NREL = sizeof releases / sizeof releases[0];

// Make one block with form f, check it, release it with release r and
// check that it went back.
static void one(const form &f, size_t n, size_t align, unsigned hint, size_t r) {
  const char *rn = releases[r].name;
  size_t before = allocated_bytes();
  uint64_t cfree = cold_frees();
  void *p = f.make(n, align, hint);
  CHECK(p != nullptr, "%s(%zu, %zu, %u)", f.name, n, align, hint);
  if (!p)
    return;
  size_t want_align = f.aligned_form ? align : 16;
  CHECK(aligned(p, want_align), "%s: %p not aligned to %zu", f.name, p, want_align);
  CHECK(memprof_hotcold_is_cold(p) == cold_hint(hint), "%s hint %u: cold=%d", f.name, hint,
        memprof_hotcold_is_cold(p));
  CHECK(malloc_usable_size(p) >= n, "%s: usable %zu < %zu", f.name, malloc_usable_size(p), n);
  memset(p, 0x5a, n);
  // Aligned releases only for aligned blocks, and the reverse.
  releases[r].fn(p, n, f.aligned_form ? align : 16);
  if (cold_hint(hint))
    CHECK(cold_frees() == cfree + 1, "%s hint %u, %s: cold frees %llu -> %llu", f.name, hint,
          rn, (unsigned long long)cfree, (unsigned long long)cold_frees());
  size_t after = allocated_bytes();
  CHECK(after == before, "%s hint %u, %s: allocated %zu -> %zu", f.name, hint, rn, before,
        after);
}

static bool aligned_release(size_t r) { return std::strstr(releases[r].name, "align") != nullptr; }

static void placement_and_release() {
  const size_t sizes[] = {1, 40, 1000, 40000, 3 << 20};
  const size_t aligns[] = {64, 4096, 1 << 21};
  size_t r = 0;
  for (const form &f : forms)
    for (unsigned h : hints)
      for (size_t n : sizes)
        for (size_t i = 0; i < (f.aligned_form ? 3 : 1); i++) {
          // The next release that fits the block's kind.
          while (aligned_release(r % NREL) != f.aligned_form)
            r++;
          one(f, n, f.aligned_form ? aligns[i] : 16, h, r % NREL);
          r++;
        }
}

// ---- the hint's register: only its low 8 bits count -------------------------

static void hint_register_bits() {
  typedef void *(*raw_new)(size_t, unsigned);
  raw_new f = reinterpret_cast<raw_new>(
      static_cast<void *(*)(size_t, __hot_cold_t)>(&operator new));
  void *c = f(100, 0xabcdef01u); // low byte 1: cold
  void *w = f(100, 0x00000180u); // low byte 0x80: not cold
  CHECK(memprof_hotcold_is_cold(c) == 1, "upper bits set, hint 1: not cold");
  CHECK(memprof_hotcold_is_cold(w) == 0, "hint 0x80 with bit 8 set: cold");
  free(c);
  free(w);
}

// ---- failure ------------------------------------------------------------------

static int handler_calls;
static void handler() {
  if (++handler_calls == 2)
    std::set_new_handler(nullptr);
}

static bool throws_bad_alloc(void *(*fn)(size_t, size_t, unsigned), size_t n, size_t a,
                             unsigned h) {
  try {
    void *p = fn(n, a, h);
    free(p);
    return false;
  } catch (const std::bad_alloc &) {
    return true;
  }
}

static void failures() {
  for (unsigned h : hints) {
    for (const form &f : forms) {
      bool nothrow = std::strstr(f.name, "nothrow") != nullptr;
      handler_calls = 0;
      std::set_new_handler(handler);
      if (nothrow) {
        CHECK(f.make(HUGE_SIZE, 64, h) == nullptr, "%s hint %u: huge size not NULL", f.name, h);
        CHECK(handler_calls == 0, "%s: nothrow form ran the new-handler", f.name);
        if (f.aligned_form)
          CHECK(f.make(100, 48, h) == nullptr, "%s: alignment 48 not NULL", f.name);
      } else {
        CHECK(throws_bad_alloc(f.make, HUGE_SIZE, 64, h), "%s hint %u: no bad_alloc", f.name, h);
        CHECK(handler_calls == 2, "%s hint %u: new-handler ran %d times, want 2", f.name, h,
              handler_calls);
        if (f.aligned_form) {
          std::set_new_handler(nullptr);
          CHECK(throws_bad_alloc(f.make, 100, 48, h), "%s: alignment 48 did not throw", f.name);
        }
      }
      std::set_new_handler(nullptr);
    }
  }
}

// ---- size-returning forms: the size is the block's whole usable size ----------

static void size_returning() {
  for (unsigned h : hints) {
    __sized_ptr_t r = __size_returning_new_hot_cold(1000, H(h));
    CHECK(r.n >= 1000 && r.n == malloc_usable_size(r.p), "hint %u: n %zu usable %zu", h, r.n,
          malloc_usable_size(r.p));
    memset(r.p, 1, r.n);
    operator delete(r.p, r.n); // the returned size is a valid size to delete with
    r = __size_returning_new_aligned_hot_cold(1000, std::align_val_t(4096), H(h));
    CHECK(aligned(r.p, 4096) && r.n >= 1000 && r.n == malloc_usable_size(r.p),
          "aligned hint %u: %p n %zu", h, r.p, r.n);
    operator delete(r.p, r.n, std::align_val_t(4096));
  }
  __sized_ptr_t r = __size_returning_new(100);
  CHECK(!memprof_hotcold_is_cold(r.p) && r.n == malloc_usable_size(r.p), "unhinted: n %zu", r.n);
  operator delete(r.p, r.n);
  r = __size_returning_new_aligned(100, std::align_val_t(256));
  CHECK(aligned(r.p, 256) && r.n == malloc_usable_size(r.p), "unhinted aligned: n %zu", r.n);
  operator delete(r.p, r.n, std::align_val_t(256));
}

// ---- realloc keeps a cold block cold and its contents -------------------------------

static void realloc_cold() {
  char *p = static_cast<char *>(operator new(100, H(1)));
  memset(p, 7, 100);
  p = static_cast<char *>(realloc(p, 100000));
  CHECK(p && memprof_hotcold_is_cold(p) && p[0] == 7 && p[99] == 7, "realloc of a cold block");
  free(p);
}

int main() {
  std::printf("variants:\n"); // stdout's buffer exists before any measurement
  // The first cold block creates the cold arena (and the idle thread):
  // allocations of their own, outside what the checks measure.
  operator delete(operator new(1, H(1)));
  placement_and_release();
  hint_register_bits();
  failures();
  size_returning();
  realloc_cold();
  uint64_t a = cold_allocs(), f = cold_frees();
  CHECK(a == f && a > 0, "cold arena: %llu allocations, %llu frees", (unsigned long long)a,
        (unsigned long long)f);
  std::printf("variants: %d checks, %d failures\n", checks, fails);
  return fails ? 1 : 0;
}
