/* rt_malloc.c - the C allocation API (malloc family, glibc extras, strdup).
 *
 * Every entry point captures RT_CALLER() itself and calls the allocation
 * core directly, so the recorded stack starts at the user's call site and
 * no entry point ever calls another public one.
 *
 * Semantic choices (glibc behaviour unless LLVM's runtime says otherwise):
 *  - Failure returns NULL with errno ENOMEM under allocator_may_return_null=1
 *    (our default: a profiler should not kill a program that handles
 *    allocation failure); with 0, as LLVM's runtime by default, it is
 *    reported and the process exits 1 (rt_errors.c): a size over
 *    RT_MAX_ALLOC_SIZE, no memory, calloc/reallocarray overflow, and the
 *    alignments aligned_alloc and posix_memalign refuse.
 *  - realloc(p, 0) with p != NULL frees p and returns NULL, as LLVM does
 *    (allocator_frees_and_returns_null_on_realloc_zero=1).  realloc moves
 *    the block: new block with the realloc call's stack, copy of min(old,
 *    new) bytes (not counted as accesses), then the old block is freed and
 *    its MIB recorded.  Only a block the C library serves (sampling with
 *    unsampled_to_libc) whose new block is not sampled either goes to the
 *    C library's realloc, which may grow it in place; and a large block
 *    of ours made large again keeps its mapping, resized (remap_large,
 *    rt_realloc_large): the profile is the same, no byte is copied.
 *  - memalign rounds a non-power-of-two alignment up, as glibc does;
 *    aligned_alloc and posix_memalign reject it (EINVAL).
 *  - glibc's own names of its entry points (__libc_malloc, __libc_free,
 *    ...), which programs and libraries call, are aliases of ours: were
 *    they glibc's, a block from one family freed by the other would reach
 *    an allocator that never gave it out.
 *  - mallinfo/mallinfo2 return zeros, mallopt accepts glibc's parameters
 *    (returns 1) and ignores them, malloc_trim returns 0 (glibc's own
 *    answers while it serves the unrecorded blocks of sampling), malloc_stats
 *    prints the profiler's allocator statistics, as LLVM's does.
 */
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "include/memprof_interface.h"
#include "rt_errors.h"
#include "runtime/base/rt_libc.h"
#include "runtime/base/rt_state.h"
#include "runtime/heap/rt_alloc.h"
#include "runtime/heap/rt_heap.h"
#include "runtime/record/rt_shadow.h"

#define RT_MIN_ALIGN 16

static size_t page_size(void) {
  static size_t cached;
  size_t p = __atomic_load_n(&cached, __ATOMIC_RELAXED);
  if (!p) {
    p = getauxval(AT_PAGESZ);
    if (!p)
      p = 4096;
    __atomic_store_n(&cached, p, __ATOMIC_RELAXED);
  }
  return p;
}

static int is_pow2(size_t x) { return x && !(x & (x - 1)); }

/* rt_alloc with the API's failure convention (errno ENOMEM).  Inline in
 * each entry point: its constant arguments fold the C library's path
 * (rt_alloc.h) to a countdown and one call. */
static inline __attribute__((always_inline)) void *alloc_or_enomem(size_t n, size_t align, int zero, rt_caller c) {
  void *p = rt_alloc(n, align, zero, c);
  if (RT_UNLIKELY(!p)) {
    rt_alloc_failed(n, c);
    errno = ENOMEM;
  }
  return p;
}

/* count * size does not fit in size_t (calloc, reallocarray). */
static void overflowed(const char *fn, size_t nmemb, size_t size, rt_caller c) {
  if (!rt_may_return_null())
    rt_die_alloc(c, fn[0] == 'c' ? "calloc-overflow" : "reallocarray-overflow", 1,
                 "%s parameters overflow: count * size (%lu * %lu) cannot be "
                 "represented in type size_t",
                 fn, (unsigned long)nmemb, (unsigned long)size);
  errno = ENOMEM;
}

static int bad_alignment(const char *fn, size_t align, rt_caller c) {
  if (!rt_may_return_null())
    rt_die_alloc(c, fn[0] == 'a' ? "invalid-aligned-alloc-alignment"
                                 : "invalid-posix-memalign-alignment",
                 1, "invalid alignment requested in %s: %lu, alignment must be a power "
                    "of two%s",
                 fn, (unsigned long)align,
                 fn[0] == 'a' ? "" : " and a multiple of sizeof(void*) == 8");
  return EINVAL;
}

RT_EXPORT void *malloc(size_t n) {
  return alloc_or_enomem(n, 0, 0, RT_CALLER());
}

RT_EXPORT void *__libc_malloc(size_t n) RT_ALIAS(malloc);

RT_EXPORT void *calloc(size_t nmemb, size_t size) {
  size_t n;
  if (RT_UNLIKELY(__builtin_mul_overflow(nmemb, size, &n))) {
    overflowed("calloc", nmemb, size, RT_CALLER());
    return NULL;
  }
  return alloc_or_enomem(n, 0, 1, RT_CALLER());
}

RT_EXPORT void *__libc_calloc(size_t nmemb, size_t size) RT_ALIAS(calloc);

static void *realloc_impl(void *old, size_t n, rt_caller c) {
  if (RT_UNLIKELY(__atomic_load_n(&rt_forwarding, __ATOMIC_RELAXED)))
    return rt_forward_realloc(old, n); /* the serving allocator's realloc */
  if (!old)
    return alloc_or_enomem(n, 0, 0, c);
  if (n == 0) {
    rt_free(old);
    return NULL;
  }
  void *p = rt_realloc_own(old, n); /* an unrecorded small block's fast path */
  if (p)
    return p;
  /* The C library's block first: the profiler's heap, its statistics
   * and its large blocks are not touched for it. */
  if (rt_is_libc_block(old)) {
    p = rt_realloc_libc(old, n, c);
    if (RT_UNLIKELY(!p)) {
      rt_alloc_failed(n, c);
      errno = ENOMEM;
    }
    return p;
  }
  rt_heap_note_realloc(n); /* a live block of ours to a nonzero size */
  if (rt_realloc_large(old, n, c, &p)) {
    if (RT_UNLIKELY(!p)) {
      rt_alloc_failed(n, c);
      errno = ENOMEM;
    }
    return p;
  }
  p = alloc_or_enomem(n, 0, 0, c);
  if (!p)
    return NULL; /* the old block stays valid, as the standard requires */
  size_t old_n = rt_usable_size(old);
  rt_memcpy(p, old, old_n < n ? old_n : n);
  rt_free(old);
  return p;
}

RT_EXPORT void *realloc(void *old, size_t n) {
  return realloc_impl(old, n, RT_CALLER());
}

RT_EXPORT void *__libc_realloc(void *old, size_t n) RT_ALIAS(realloc);

RT_EXPORT void *reallocarray(void *old, size_t nmemb, size_t size) {
  size_t n;
  if (RT_UNLIKELY(__builtin_mul_overflow(nmemb, size, &n))) {
    overflowed("reallocarray", nmemb, size, RT_CALLER());
    return NULL;
  }
  return realloc_impl(old, n, RT_CALLER());
}

RT_EXPORT void free(void *p) { rt_free(p); }
RT_EXPORT void cfree(void *p) RT_ALIAS(free);
RT_EXPORT void __libc_free(void *p) RT_ALIAS(free);

RT_EXPORT void free_sized(void *p, size_t n) {
  (void)n;
  rt_free(p);
}

RT_EXPORT void free_aligned_sized(void *p, size_t align, size_t n) {
  (void)align;
  (void)n;
  rt_free(p);
}

/* glibc memalign: alignments below the minimum are raised, others rounded
 * up to a power of two; only impossible alignments fail (EINVAL). */
static void *memalign_impl(size_t align, size_t n, rt_caller c) {
  if (align <= RT_MIN_ALIGN)
    return alloc_or_enomem(n, 0, 0, c);
  if (RT_UNLIKELY(align > (SIZE_MAX >> 1) + 1)) {
    errno = EINVAL;
    return NULL;
  }
  if (!is_pow2(align))
    align = (size_t)1 << (64 - __builtin_clzll(align));
  return alloc_or_enomem(n, align, 0, c);
}

RT_EXPORT void *memalign(size_t align, size_t n) {
  return memalign_impl(align, n, RT_CALLER());
}

RT_EXPORT void *__libc_memalign(size_t align, size_t n) RT_ALIAS(memalign);

RT_EXPORT void *aligned_alloc(size_t align, size_t n) {
  if (RT_UNLIKELY(!is_pow2(align))) {
    errno = bad_alignment("aligned_alloc", align, RT_CALLER());
    return NULL;
  }
  return alloc_or_enomem(n, align, 0, RT_CALLER());
}

RT_EXPORT int posix_memalign(void **out, size_t align, size_t n) {
  if (RT_UNLIKELY(!is_pow2(align) || align % sizeof(void *)))
    return bad_alignment("posix_memalign", align, RT_CALLER());
  void *p = rt_alloc(n, align, 0, RT_CALLER());
  if (RT_UNLIKELY(!p)) {
    rt_alloc_failed(n, RT_CALLER());
    return ENOMEM;
  }
  *out = p;
  return 0;
}

RT_EXPORT void *valloc(size_t n) {
  return alloc_or_enomem(n, page_size(), 0, RT_CALLER());
}

RT_EXPORT void *__libc_valloc(size_t n) RT_ALIAS(valloc);

/* pvalloc allocates whole pages: the recorded size is the rounded one, as
 * in LLVM's runtime. */
RT_EXPORT void *pvalloc(size_t n) {
  size_t ps = page_size();
  if (RT_UNLIKELY(n > SIZE_MAX - ps)) {
    errno = ENOMEM;
    return NULL;
  }
  n = n ? (n + ps - 1) & ~(ps - 1) : ps;
  return alloc_or_enomem(n, ps, 0, RT_CALLER());
}

RT_EXPORT void *__libc_pvalloc(size_t n) RT_ALIAS(pvalloc);

RT_EXPORT size_t malloc_usable_size(void *p) {
  return p ? rt_usable_size(p) : 0;
}

/* While the C library serves the unrecorded blocks (sampling), these are
 * its answers: its heap holds nearly all of the program's blocks. */
RT_EXPORT struct mallinfo mallinfo(void) {
  struct mallinfo mi;
  if (libc_heap_serves() && libc_tune.mallinfo)
    return libc_tune.mallinfo();
  rt_memset(&mi, 0, sizeof(mi));
  return mi;
}

RT_EXPORT struct mallinfo2 mallinfo2(void) {
  struct mallinfo2 mi;
  if (libc_heap_serves() && libc_tune.mallinfo2)
    return libc_tune.mallinfo2();
  rt_memset(&mi, 0, sizeof(mi));
  return mi;
}

RT_EXPORT int mallopt(int param, int value) {
  if (libc_heap_serves() && libc_tune.mallopt)
    return libc_tune.mallopt(param, value);
  /* glibc's parameters: M_MXFAST (1) and M_TRIM_THRESHOLD .. M_ARENA_MAX
   * (-1 .. -8).  Accepted and ignored. */
  return param == 1 || (param <= -1 && param >= -8);
}

RT_EXPORT int malloc_trim(size_t pad) {
  if (libc_heap_serves() && libc_tune.trim)
    return libc_tune.trim(pad);
  return 0;
}

/* As in LLVM's runtime: the profiler's allocator statistics. */
RT_EXPORT void malloc_stats(void) { __memprof_print_accumulated_stats(); }

/* ---- string duplication: allocate through the profiler with their own
 * stack and count the read of the source, as LLVM's interceptors do. ---- */

/* LLVM's strdup counts the source before allocating, strndup after; the
 * order matters only when the source shares a shadow cell with the new
 * block, but costs nothing to keep. */
static char *dup_impl(const char *s, size_t len, size_t counted,
                      int count_first, rt_caller c) {
  if (count_first && rt_inited)
    rt_record_range(s, counted);
  char *p = alloc_or_enomem(len + 1, 0, 0, c);
  if (!count_first && rt_inited)
    rt_record_range(s, counted);
  if (p) {
    rt_memcpy(p, s, len);
    p[len] = '\0';
  }
  return p;
}

RT_EXPORT char *strdup(const char *s) {
  size_t len = rt_strlen(s);
  return dup_impl(s, len, len + 1, 1, RT_CALLER());
}

RT_EXPORT char *__strdup(const char *s) RT_ALIAS(strdup);

/* LLVM counts min(n, len + 1) bytes of the source for strndup. */
RT_EXPORT char *strndup(const char *s, size_t n) {
  size_t len = rt_strnlen(s, n);
  return dup_impl(s, len, len + 1 < n ? len + 1 : n, 0, RT_CALLER());
}

RT_EXPORT char *__strndup(const char *s, size_t n) RT_ALIAS(strndup);
