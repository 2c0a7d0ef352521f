/* hc_new.c - every replaceable operator new/delete, the __hot_cold_t forms
 * and the size-returning forms, in C under their Itanium-mangled names.
 *
 * The __hot_cold_t forms are the ones clang-22 emits with
 * -fmemory-profile-use=P -mllvm -optimize-hot-cold-new (checked against
 * its IR: `declare ptr @_Znwm12__hot_cold_t(i64, i8)` and so on, and
 * `declare { ptr, i64 } @__size_returning_new_hot_cold(i64, i8)`); the
 * hint is the last argument, an 8-bit enum.  clang passes it as a bare
 * i8, so the upper bits of its register are undefined: it is read as an
 * unsigned int and masked.  A hint below 128 is cold (cold arena),
 * anything else goes to the default arenas with unhinted blocks.
 *
 * Failure of a throwing form follows [new.delete.single]: call the
 * new-handler while one is installed and retry, else throw std::bad_alloc
 * (libstdc++ is reached through weak references; without it a failing
 * `new` prints a message and aborts).  Nothrow forms return NULL without
 * running the handler (a handler may throw, and C cannot catch).  An
 * alignment that is not a power of two fails.
 *
 * Deletes release any block of the process (hc_malloc.c): a cold block
 * straight to the cold arena, others with jemalloc's sized free when the
 * size is known. */
#include <stdlib.h>

#include "hc_internal.h"

typedef void (*hc_new_handler)(void);
extern hc_new_handler _ZSt15get_new_handlerv(void) __attribute__((weak));
extern void _ZSt17__throw_bad_allocv(void) __attribute__((weak, noreturn));

/* Neither a hint value (0-255) nor a cold one. */
#define NO_HINT 256U

static int is_pow2(size_t x) { return x && !(x & (x - 1)); }

static int align_flags(size_t align) {
  return align > HC_MIN_ALIGN ? MALLOCX_LG_ALIGN(__builtin_ctzl(align)) : 0;
}

static void __attribute__((noreturn)) fail_bad_alloc(void) {
  if (_ZSt17__throw_bad_allocv)
    _ZSt17__throw_bad_allocv();
  static const char msg[] =
      "memprof-hotcold: operator new failed and std::bad_alloc is not available\n";
  hc_write_all(2, msg, sizeof msg - 1);
  abort();
}

/* A block from the default arenas. */
static void *plain_alloc(size_t n, size_t align) {
  if (align <= HC_MIN_ALIGN)
    return mphc_malloc(n);
  return mphc_mallocx(n ? n : 1, align_flags(align));
}

static void *counted(void *p, const void *ra, unsigned hint, size_t n, int cold) {
  if (hc_opt.stats)
    hc_count_hint(hint, n, cold);
  if (hc_opt.sites)
    hc_site_count(ra, hint, p, n, cold);
  return p;
}

/* What every __hot_cold_t form reaches: NULL on failure.  ra is the
 * form's return address: the call site (site_file). */
static void *hinted_alloc(size_t n, size_t align, unsigned hint, const void *ra) {
  hc_options_init();
  if (hint < HC_COLD_LIMIT && hc_opt.cold_arena) {
    void *p = hc_cold_alloc(n, align);
    if (p)
      return counted(p, ra, hint, n, 1);
  }
  void *p = plain_alloc(n, align);
  return p ? counted(p, ra, hint, n, 0) : NULL;
}

static void *try_alloc(size_t n, size_t align, unsigned hint, const void *ra) {
  if (hint != NO_HINT)
    return hinted_alloc(n, align, hint, ra);
  return hc_note_plain(plain_alloc(n, align), n);
}

static void *new_throwing(size_t n, size_t align, unsigned hint, const void *ra) {
  if (!is_pow2(align))
    fail_bad_alloc();
  for (;;) {
    void *p = try_alloc(n, align, hint, ra);
    if (HC_LIKELY(p != NULL))
      return p;
    hc_new_handler h = _ZSt15get_new_handlerv ? _ZSt15get_new_handlerv() : NULL;
    if (!h)
      fail_bad_alloc();
    h();
  }
}

static void *new_nothrow(size_t n, size_t align, unsigned hint, const void *ra) {
  if (!is_pow2(align))
    return NULL;
  return try_alloc(n, align, hint, ra);
}

#define RA __builtin_return_address(0)

/* ---- the standard forms (new[] is the same function as new) ------------- */

HC_EXPORT void *_Znwm(size_t n) { return new_throwing(n, HC_MIN_ALIGN, NO_HINT, NULL); }
HC_EXPORT void *_Znam(size_t n) HC_ALIAS(_Znwm);

HC_EXPORT void *_ZnwmRKSt9nothrow_t(size_t n, const void *tag) {
  (void)tag;
  return new_nothrow(n, HC_MIN_ALIGN, NO_HINT, NULL);
}
HC_EXPORT void *_ZnamRKSt9nothrow_t(size_t n, const void *tag)
    HC_ALIAS(_ZnwmRKSt9nothrow_t);

HC_EXPORT void *_ZnwmSt11align_val_t(size_t n, size_t align) {
  return new_throwing(n, align, NO_HINT, NULL);
}
HC_EXPORT void *_ZnamSt11align_val_t(size_t n, size_t align)
    HC_ALIAS(_ZnwmSt11align_val_t);

HC_EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t align,
                                                    const void *tag) {
  (void)tag;
  return new_nothrow(n, align, NO_HINT, NULL);
}
HC_EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t align,
                                                    const void *tag)
    HC_ALIAS(_ZnwmSt11align_val_tRKSt9nothrow_t);

/* ---- the __hot_cold_t forms ------------------------------------------------ */

HC_EXPORT void *_Znwm12__hot_cold_t(size_t n, unsigned hint) {
  return new_throwing(n, HC_MIN_ALIGN, hint & 0xff, RA);
}
HC_EXPORT void *_Znam12__hot_cold_t(size_t n, unsigned hint)
    HC_ALIAS(_Znwm12__hot_cold_t);

HC_EXPORT void *_ZnwmRKSt9nothrow_t12__hot_cold_t(size_t n, const void *tag,
                                                   unsigned hint) {
  (void)tag;
  return new_nothrow(n, HC_MIN_ALIGN, hint & 0xff, RA);
}
HC_EXPORT void *_ZnamRKSt9nothrow_t12__hot_cold_t(size_t n, const void *tag,
                                                   unsigned hint)
    HC_ALIAS(_ZnwmRKSt9nothrow_t12__hot_cold_t);

HC_EXPORT void *_ZnwmSt11align_val_t12__hot_cold_t(size_t n, size_t align,
                                                    unsigned hint) {
  return new_throwing(n, align, hint & 0xff, RA);
}
HC_EXPORT void *_ZnamSt11align_val_t12__hot_cold_t(size_t n, size_t align,
                                                    unsigned hint)
    HC_ALIAS(_ZnwmSt11align_val_t12__hot_cold_t);

HC_EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t12__hot_cold_t(
    size_t n, size_t align, const void *tag, unsigned hint) {
  (void)tag;
  return new_nothrow(n, align, hint & 0xff, RA);
}
HC_EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t12__hot_cold_t(
    size_t n, size_t align, const void *tag, unsigned hint)
    HC_ALIAS(_ZnwmSt11align_val_tRKSt9nothrow_t12__hot_cold_t);

/* ---- the size-returning forms ----------------------------------------------
 * tcmalloc's extension (P0901): { block, usable size }, returned in
 * rax:rdx like clang's { ptr, i64 }.  The size is the block's whole size
 * class, which a sized delete of the block may then pass. */
typedef struct hc_sized_ptr {
  void *p;
  size_t n;
} hc_sized_ptr;

static hc_sized_ptr sized_result(void *p, size_t n, size_t align) {
  hc_sized_ptr r = {p, mphc_nallocx(n ? n : 1, align_flags(align))};
  return r;
}

HC_EXPORT hc_sized_ptr __size_returning_new(size_t n) {
  return sized_result(new_throwing(n, HC_MIN_ALIGN, NO_HINT, NULL), n, HC_MIN_ALIGN);
}
HC_EXPORT hc_sized_ptr __size_returning_new_aligned(size_t n, size_t align) {
  return sized_result(new_throwing(n, align, NO_HINT, NULL), n, align);
}
HC_EXPORT hc_sized_ptr __size_returning_new_hot_cold(size_t n, unsigned hint) {
  return sized_result(new_throwing(n, HC_MIN_ALIGN, hint & 0xff, RA), n, HC_MIN_ALIGN);
}
HC_EXPORT hc_sized_ptr __size_returning_new_aligned_hot_cold(size_t n, size_t align,
                                                             unsigned hint) {
  return sized_result(new_throwing(n, align, hint & 0xff, RA), n, align);
}

/* ---- deletes ------------------------------------------------------------------ */

static void release(void *p) {
  if (HC_UNLIKELY(p == NULL))
    return;
  hc_note_free(p);
  if (HC_UNLIKELY(hc_is_cold(p)))
    hc_cold_free(p, 0, 0);
  else
    mphc_free(p);
}

/* n is the size the block was allocated with (or, for a size-returning
 * block, any size up to the one returned), as the standard requires. */
static void release_sized(void *p, size_t n, size_t align) {
  if (HC_UNLIKELY(p == NULL))
    return;
  hc_note_free(p);
  if (HC_UNLIKELY(hc_is_cold(p)))
    hc_cold_free(p, n, align);
  else if (n == 0)
    mphc_free(p);
  else
    mphc_sdallocx(p, n, align_flags(align));
}

HC_EXPORT void _ZdlPv(void *p) { release(p); }
HC_EXPORT void _ZdaPv(void *p) HC_ALIAS(_ZdlPv);
HC_EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *tag) {
  (void)tag;
  release(p);
}
HC_EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *tag)
    HC_ALIAS(_ZdlPvRKSt9nothrow_t);
HC_EXPORT void _ZdlPvm(void *p, size_t n) { release_sized(p, n, HC_MIN_ALIGN); }
HC_EXPORT void _ZdaPvm(void *p, size_t n) HC_ALIAS(_ZdlPvm);
HC_EXPORT void _ZdlPvSt11align_val_t(void *p, size_t align) {
  (void)align;
  release(p);
}
HC_EXPORT void _ZdaPvSt11align_val_t(void *p, size_t align)
    HC_ALIAS(_ZdlPvSt11align_val_t);
HC_EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t align,
                                                    const void *tag) {
  (void)align;
  (void)tag;
  release(p);
}
HC_EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t align,
                                                    const void *tag)
    HC_ALIAS(_ZdlPvSt11align_val_tRKSt9nothrow_t);
HC_EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t align) {
  release_sized(p, n, align);
}
HC_EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t align)
    HC_ALIAS(_ZdlPvmSt11align_val_t);
