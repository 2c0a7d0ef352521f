/* rt_new_delete.c - the 20 replaceable C++ operator new/delete, in C.
 *
 * Written in C under their Itanium-mangled names so that the runtime links
 * into C programs without libstdc++.  Each operator captures RT_CALLER()
 * itself, so the recorded stack starts at the `new` expression.
 *
 * Failure of a throwing form follows [new.delete.single]: call the
 * new-handler while one is installed and retry; without a handler throw
 * std::bad_alloc.  libstdc++ is reached through weak references, so in a
 * program without it a failing throwing `new` prints a message and aborts.
 * An alignment that is not a power of two is the caller's error, not a
 * failure to find memory: it is reported and the process exits 1, whatever
 * allocator_may_return_null says, as LLVM's runtime does after version 22
 * (rt_errors.c).  Running out of memory, or a size too big, follows the
 * standard: bad_alloc (throwing forms) or NULL (nothrow forms).
 */
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rt_errors.h"
#include "runtime/heap/rt_alloc.h"

/* std::bad_alloc, thrown by libstdc++, unwinds through the frames of this
 * file: runtime/CMakeLists.txt builds it with -funwind-tables although the
 * rest of the runtime has no unwind tables. */

typedef void (*rt_new_handler)(void);

/* __STDCPP_DEFAULT_NEW_ALIGNMENT__ on x86-64. */
#define RT_NEW_ALIGN 16

/* std::get_new_handler() and std::__throw_bad_alloc(), if libstdc++ is
 * linked in. */
extern rt_new_handler _ZSt15get_new_handlerv(void) __attribute__((weak));
extern void _ZSt17__throw_bad_allocv(void) __attribute__((weak, noreturn));

static int is_pow2(size_t x) { return x && !(x & (x - 1)); }

static void __attribute__((noreturn)) fail_bad_alloc(void) {
  if (_ZSt17__throw_bad_allocv)
    _ZSt17__throw_bad_allocv();
  static const char msg[] =
      "memprof: operator new failed and std::bad_alloc is not available\n";
  /* A raw write: the public write() is one of our interceptors. */
  syscall(SYS_write, 2, msg, sizeof(msg) - 1);
  abort();
}

static void check_alignment(size_t align, rt_caller c) {
  if (RT_UNLIKELY(!is_pow2(align)))
    rt_die_alloc(c, "invalid-allocation-alignment", 0,
                 "invalid allocation alignment: %ld, alignment must be a power of two",
                 (long)align);
}

/* operator new once its first try failed: the new-handler, until it gives
 * up (bad_alloc) or memory is found. */
static __attribute__((noinline)) void *new_retry(size_t n, size_t align, rt_caller c) {
  for (;;) {
    rt_new_handler h = _ZSt15get_new_handlerv ? _ZSt15get_new_handlerv() : NULL;
    if (!h)
      fail_bad_alloc();
    h();
    void *p = rt_alloc(n, align, 0, c);
    if (p)
      return p;
  }
}

/* Inline in each operator: a constant alignment folds its checks, and the
 * C library's path (rt_alloc.h) is then a countdown and one call. */
static inline __attribute__((always_inline)) void *new_throwing(size_t n, size_t align,
                                                               rt_caller c) {
  check_alignment(align, c);
  void *p = rt_alloc(n, align, 0, c);
  return RT_LIKELY(p != NULL) ? p : new_retry(n, align, c);
}

/* The nothrow forms do not run the new-handler: a handler may throw, and
 * a nothrow operator must not; failure is simply NULL. */
static inline __attribute__((always_inline)) void *new_nothrow(size_t n, size_t align,
                                                              rt_caller c) {
  check_alignment(align, c);
  return rt_alloc(n, align, 0, c);
}

/* new[] forms are functions of their own, not aliases of their scalar
 * twins, so that frame #0 of a text profile's stack names the operator the
 * program called (rt_frames.c).  GCC would merge the identical bodies. */
#if defined(__GNUC__) && !defined(__clang__)
#define NO_MERGE __attribute__((no_icf))
#else
#define NO_MERGE
#endif

RT_EXPORT void *_Znwm(size_t n) {
  return new_throwing(n, RT_NEW_ALIGN, RT_CALLER());
}
RT_EXPORT NO_MERGE void *_Znam(size_t n) {
  return new_throwing(n, RT_NEW_ALIGN, RT_CALLER());
}

RT_EXPORT void *_ZnwmRKSt9nothrow_t(size_t n, const void *tag) {
  (void)tag;
  return new_nothrow(n, RT_NEW_ALIGN, RT_CALLER());
}
RT_EXPORT NO_MERGE void *_ZnamRKSt9nothrow_t(size_t n, const void *tag) {
  (void)tag;
  return new_nothrow(n, RT_NEW_ALIGN, RT_CALLER());
}

RT_EXPORT void *_ZnwmSt11align_val_t(size_t n, size_t align) {
  return new_throwing(n, align, RT_CALLER());
}
RT_EXPORT NO_MERGE void *_ZnamSt11align_val_t(size_t n, size_t align) {
  return new_throwing(n, align, RT_CALLER());
}

RT_EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t align,
                                                    const void *tag) {
  (void)tag;
  return new_nothrow(n, align, RT_CALLER());
}
RT_EXPORT NO_MERGE void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t align,
                                                             const void *tag) {
  (void)tag;
  return new_nothrow(n, align, RT_CALLER());
}

/* Every delete form releases the block the same way: sizes and alignments
 * are implied by the block itself. */
RT_EXPORT void _ZdlPv(void *p) { rt_free(p); }
RT_EXPORT void _ZdaPv(void *p) RT_ALIAS(_ZdlPv);
RT_EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *tag) {
  (void)tag;
  rt_free(p);
}
RT_EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *tag)
    RT_ALIAS(_ZdlPvRKSt9nothrow_t);
RT_EXPORT void _ZdlPvm(void *p, size_t n) {
  (void)n;
  rt_free(p);
}
RT_EXPORT void _ZdaPvm(void *p, size_t n) RT_ALIAS(_ZdlPvm);
RT_EXPORT void _ZdlPvSt11align_val_t(void *p, size_t align) {
  (void)align;
  rt_free(p);
}
RT_EXPORT void _ZdaPvSt11align_val_t(void *p, size_t align)
    RT_ALIAS(_ZdlPvSt11align_val_t);
RT_EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t align,
                                                    const void *tag) {
  (void)align;
  (void)tag;
  rt_free(p);
}
RT_EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t align,
                                                    const void *tag)
    RT_ALIAS(_ZdlPvSt11align_val_tRKSt9nothrow_t);
RT_EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t align) {
  (void)n;
  (void)align;
  rt_free(p);
}
RT_EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t align)
    RT_ALIAS(_ZdlPvmSt11align_val_t);
