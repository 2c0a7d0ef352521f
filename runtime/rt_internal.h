/* rt_internal.h - the contract between the runtime's public entry points
 * (allocation API, new/delete, libc interceptors) and its profiling core
 * (shadow, heap, stacks, MIB table, dump).
 *
 * Rules every runtime file follows:
 *  - Never call the public malloc family or stdio: the runtime *is* malloc.
 *    Use rt_mem* / rt_str* helpers and raw syscalls (rt_sys.h).
 *  - Public entry points capture the caller with RT_CALLER() so that no
 *    frame of the runtime is ever recorded: the recorded stack starts at the
 *    return address into the code that called the entry point.
 *  - Everything not part of the ABI is hidden (RT_HIDDEN); ABI symbols are
 *    RT_EXPORT.
 */
#ifndef MEMPROF_RT_INTERNAL_H
#define MEMPROF_RT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#define RT_EXPORT __attribute__((visibility("default")))
/* A runtime function that calls into libc on the program's behalf
 * (pthread_create): what libc allocates there is the program's, and the
 * stack walk leaves this function's frame out (rt_stack.c), so that no
 * runtime frame is recorded. */
#define RT_CALLS_LIBC __attribute__((section("memprof_calls_libc"), noinline))
#define RT_HIDDEN __attribute__((visibility("hidden")))
/* A second ABI name for an entry point of the same file (same code, so
 * RT_CALLER in it still sees the caller's frame). */
#if defined(__GNUC__) && !defined(__clang__)
/* gcc wants the alias to carry the attributes libc's headers give the target. */
#define RT_ALIAS(target) __attribute__((alias(#target), copy(target)))
#else
#define RT_ALIAS(target) __attribute__((alias(#target)))
#endif
#define RT_LIKELY(x) __builtin_expect(!!(x), 1)
#define RT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* The frame of the public entry point.  The core reads the return address
 * from it and walks the frame-pointer chain of the caller from there.  Every
 * entry point must be compiled with frame pointers (the runtime is). */
typedef struct rt_caller {
  uintptr_t fp; /* __builtin_frame_address(0) of the entry point */
} rt_caller;
#define RT_CALLER() ((rt_caller){(uintptr_t)__builtin_frame_address(0)})

/* ---- allocation core ----------------------------------------------------
 * rt_alloc and rt_free, for the API's files, are in rt_alloc.h. */
/* The largest block rt_alloc serves (rt_heap.c's limit; LLVM's too). */
#define RT_MAX_ALLOC_SIZE (1ULL << 40)
/* Fatal allocation errors (rt_errors.c): a report on stderr as LLVM's
 * runtime prints it (kind: its SUMMARY name; hint: suggest
 * allocator_may_return_null=1), the profile written, exit status 1. */
RT_HIDDEN __attribute__((noreturn, format(printf, 4, 5))) void
rt_die_alloc(rt_caller c, const char *kind, int hint, const char *fmt, ...);
/* An entry point whose rt_alloc failed: returns if the program accepts
 * NULL (allocator_may_return_null=1), else reports a size over
 * RT_MAX_ALLOC_SIZE or running out of memory and exits. */
RT_HIDDEN void rt_alloc_failed(size_t n, rt_caller c);
RT_HIDDEN int rt_may_return_null(void);
/* realloc calls that moved a block, and their bytes (rt_malloc.c). */
RT_HIDDEN void rt_realloc_stats(uint64_t *calls, uint64_t *bytes);
/* The core owns the pthread_create interceptor (rt_thread.c, it records
 * thread stack bounds for the unwinder): no other file may define
 * pthread_create. */
/* The size requested for a live block of ours, 0 if `p` is not one. */
RT_HIDDEN size_t rt_usable_size(const void *p);

/* ---- access counting ----------------------------------------------------
 * Count an access to [p, p+n) as the compiler's range callbacks do: one
 * count per 8 bytes in the active shadow mode.  Ranges of at most 64 bytes
 * in default mode (most of the interceptors' and intrinsics' calls) touch
 * at most two 64-byte cells and are counted inline. */
extern RT_EXPORT uintptr_t __memprof_shadow_memory_dynamic_address;
extern RT_EXPORT char __memprof_histogram;
/* The shadow base once the core is initialised in default mode, else 0:
 * the inline path's one test.  The interceptors and intrinsics run it
 * millions of times in a C++ program; testing the init flag, the base and the
 * mode apiece, and again for the second buffer, made a copy's count half
 * as long again. */
RT_HIDDEN extern uintptr_t rt_range_base;
RT_HIDDEN void rt_record_range_slow(const volatile void *p, size_t n);
/* What the interceptors count outside the inline path: nothing before
 * init or for n == 0, else rt_record_range_slow. */
RT_HIDDEN void rt_count_slow(const volatile void *p, size_t n);

/* [a, a+n), 1 <= n <= 64, in default mode. */
static inline void rt_record_small(uintptr_t base, uintptr_t a, size_t n) {
  uintptr_t cell = a & ~(uintptr_t)63, end = a + n;
  uintptr_t first_end = end < cell + 64 ? end : cell + 64;
  uint64_t k = (n + 7) >> 3, k0 = (first_end - a + 7) >> 3;
  *(uint64_t *)((cell >> 3) + base) += k0;
  if (k > k0)
    *(uint64_t *)(((cell + 64) >> 3) + base) += k - k0;
}

static inline uintptr_t rt_range_base_load(void) {
  return __atomic_load_n(&rt_range_base, __ATOMIC_RELAXED);
}

static inline void rt_record_range(const volatile void *p, size_t n) {
  uintptr_t base = rt_range_base_load();
  if (RT_LIKELY(base && n - 1 < 64)) {
    rt_record_small(base, (uintptr_t)p, n);
    return;
  }
  rt_record_range_slow(p, n);
}

/* True once the core is fully initialised (shadow, options, epoch). */
RT_HIDDEN extern int rt_inited;
RT_HIDDEN void rt_init_core(void);

/* ---- libc primitives (rt_libc.c) ---------------------------------------
 * What the runtime does its own byte and string work with: never the
 * public names, which are our counting interceptors.  Self-contained
 * fallbacks until rt_libc_resolve (called once the loader may be used)
 * switches them to glibc's implementations. */
typedef struct rt_libc_fns {
#define RT_LIBC_FN(name, ret, args) ret(*name) args;
#include "rt_libc_fns.inc"
#undef RT_LIBC_FN
} rt_libc_fns;
RT_HIDDEN extern rt_libc_fns rt_libc;
RT_HIDDEN void rt_libc_resolve(void);
/* The definition of `name` after the runtime's in the loader's order (the
 * C library's), or NULL if there is none besides `ours`. */
RT_HIDDEN void *rt_next_definition(const char *name, void *ours);
#define RT_LIBC(name) (__atomic_load_n(&rt_libc.name, __ATOMIC_RELAXED))

static inline void *rt_memcpy(void *d, const void *s, size_t n) {
  return RT_LIBC(memcpy)(d, s, n);
}
static inline void *rt_memmove(void *d, const void *s, size_t n) {
  return RT_LIBC(memmove)(d, s, n);
}
static inline void *rt_memset(void *d, int c, size_t n) {
  return RT_LIBC(memset)(d, c, n);
}
static inline int rt_memcmp(const void *a, const void *b, size_t n) {
  return RT_LIBC(memcmp)(a, b, n);
}
static inline size_t rt_strlen(const char *s) { return RT_LIBC(strlen)(s); }
static inline size_t rt_strnlen(const char *s, size_t max) {
  return RT_LIBC(strnlen)(s, max);
}

#endif
