/* rt_abi.c - the compiler ABI and the public interface: access callbacks,
 * profile dump/reset, the sanitizer unaligned-access helpers and the
 * sanitizer allocator interface.  Elsewhere, in the module that reads
 * them: the weak data symbols the compiler normally provides
 * (__memprof_histogram: record/rt_shadow.c, __memprof_profile_filename:
 * output/rt_output.c, __memprof_default_options: base/rt_flags.c), the
 * malloc/free hooks (heap/rt_hooks.c) and the memory-intrinsic
 * replacements (__memprof_memcpy & co.: rt_intercept_mem.c). */
#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_sys.h"
#include "runtime/heap/rt_heap.h"
#include "runtime/output/rt_dump.h"
#include "runtime/output/rt_output.h"
#include "runtime/output/rt_roots.h"
#include "runtime/output/rt_text.h"
#include "runtime/record/rt_shadow.h"
#include "runtime/record/rt_stack.h"

/* The runtime counts once counting has started (rt_shadow.h). */
#define B rt_shadow_base

static inline void inc_default(uintptr_t a) {
  if (RT_LIKELY(B))
    *(uint64_t *)(((a & ~(uintptr_t)63) >> 3) + B) += 1;
}

static inline void inc_hist(uintptr_t a) {
  if (RT_LIKELY(B)) {
    unsigned char *c = (unsigned char *)((a >> 3) + B);
    if (*c != 255)
      (*c)++;
  }
}

/* ---- access callbacks -------------------------------------------------- */
RT_EXPORT void __memprof_load(uintptr_t a) { inc_default(a); }
RT_EXPORT void __memprof_store(uintptr_t a) { inc_default(a); }
RT_EXPORT void __memprof_hist_load(uintptr_t a) { inc_hist(a); }
RT_EXPORT void __memprof_hist_store(uintptr_t a) { inc_hist(a); }
RT_EXPORT void __memprof_record_access(const volatile void *p) {
  inc_default((uintptr_t)p);
}
RT_EXPORT void __memprof_record_access_hist(const volatile void *p) {
  inc_hist((uintptr_t)p);
}
RT_EXPORT void __memprof_record_access_range(const volatile void *p, size_t n) {
  rt_record_range(p, n);
}
RT_EXPORT void __memprof_record_access_range_hist(const volatile void *p,
                                                  size_t n) {
  uintptr_t a = (uintptr_t)p, end = a + n;
  for (; a < end; a += 8)
    inc_hist(a);
}

/* ---- unaligned helpers: one access at p, in the active mode ------------- */
typedef struct __attribute__((packed)) u16p { uint16_t v; } u16p;
typedef struct __attribute__((packed)) u32p { uint32_t v; } u32p;
typedef struct __attribute__((packed)) u64p { uint64_t v; } u64p;

static inline void record_one(const volatile void *p) {
  if (rt_hist_mode())
    inc_hist((uintptr_t)p);
  else
    inc_default((uintptr_t)p);
}

RT_EXPORT uint16_t __sanitizer_unaligned_load16(const void *p) {
  record_one(p);
  return ((const u16p *)p)->v;
}
RT_EXPORT uint32_t __sanitizer_unaligned_load32(const void *p) {
  record_one(p);
  return ((const u32p *)p)->v;
}
RT_EXPORT uint64_t __sanitizer_unaligned_load64(const void *p) {
  record_one(p);
  return ((const u64p *)p)->v;
}
RT_EXPORT void __sanitizer_unaligned_store16(void *p, uint16_t x) {
  record_one(p);
  ((u16p *)p)->v = x;
}
RT_EXPORT void __sanitizer_unaligned_store32(void *p, uint32_t x) {
  record_one(p);
  ((u32p *)p)->v = x;
}
RT_EXPORT void __sanitizer_unaligned_store64(void *p, uint64_t x) {
  record_one(p);
  ((u64p *)p)->v = x;
}

/* ---- profile control ----------------------------------------------------- */
RT_EXPORT int __memprof_profile_dump(void) {
  RT_ROOTS_ENTER(); /* a census with roots=1: the program's frames start here */
  rt_dump(0);
  return 0;
}

RT_EXPORT void __memprof_profile_reset(void) { rt_output_reset(); }

RT_EXPORT void __memprof_print_accumulated_stats(void) { rt_print_stats(); }

/* ---- sanitizer allocator interface ---------------------------------------- */
RT_EXPORT size_t __sanitizer_get_estimated_allocated_size(size_t n) { return n; }
RT_EXPORT int __sanitizer_get_ownership(const volatile void *p) {
  return rt_heap_owns((const void *)p);
}
RT_EXPORT size_t __sanitizer_get_allocated_size(const volatile void *p) {
  return rt_usable_size((const void *)p);
}
RT_EXPORT size_t __sanitizer_get_allocated_size_fast(const volatile void *p) {
  return rt_usable_size((const void *)p);
}
RT_EXPORT const void *__sanitizer_get_allocated_begin(const void *p) {
  return rt_heap_block_begin(p);
}

static rt_heap_stats stats_now(void) {
  rt_heap_stats s;
  rt_heap_get_stats(&s);
  return s;
}
RT_EXPORT size_t __sanitizer_get_current_allocated_bytes(void) {
  return stats_now().bytes_live;
}
RT_EXPORT size_t __sanitizer_get_heap_size(void) {
  rt_heap_stats s = stats_now();
  return s.heap_mapped + s.large_mapped;
}
RT_EXPORT size_t __sanitizer_get_free_bytes(void) {
  rt_heap_stats s = stats_now();
  uint64_t total = s.heap_mapped + s.large_mapped;
  return total > s.bytes_live ? total - s.bytes_live : 0;
}
RT_EXPORT size_t __sanitizer_get_unmapped_bytes(void) { return 0; }
RT_EXPORT void __sanitizer_purge_allocator(void) {}

/* ---- report path ----------------------------------------------------------- */
RT_EXPORT void __sanitizer_set_report_path(const char *path) {
  rt_flags_set_log_path(path);
}
RT_EXPORT const char *__sanitizer_get_report_path(void) { return rt_output_path(); }

RT_EXPORT __attribute__((noinline)) void __sanitizer_print_stack_trace(void) {
  uint32_t id = rt_stack_capture(RT_CALLER());
  uintptr_t pcs[RT_MAX_STACK];
  uint32_t k = rt_stack_get(id, pcs);
  for (uint32_t i = 0; i < k; i++)
    rt_printf_fd(2, "    #%u 0x%lx\n", i, (unsigned long)(pcs[i] - 1));
}
