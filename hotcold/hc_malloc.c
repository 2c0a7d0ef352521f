/* hc_malloc.c - the C allocation API of the program, on the library's
 * jemalloc.  Defining the whole family here (rather than leaving it to
 * glibc, or to a libjemalloc.so that the dynamic linker might place after
 * glibc) makes the library the one owner of every block in the process, so
 * free() and every delete form accept every block whichever API made it;
 * and free() can send a cold block straight back to the cold arena.
 *
 * Blocks a program allocates here are never hinted: their counts are the
 * "unhinted" line of the statistics (when stats are on). */
#include <errno.h>
#include <stdlib.h>
#include <malloc.h>

#include "hc_internal.h"

HC_EXPORT void *malloc(size_t n) { return hc_note_plain(mphc_malloc(n), n); }

HC_EXPORT void free(void *p) {
  hc_note_free(p);
  if (HC_UNLIKELY(hc_is_cold(p)))
    hc_cold_free(p, 0, 0);
  else
    mphc_free(p);
}

HC_EXPORT void *calloc(size_t k, size_t n) {
  /* A product that overflows fails: nothing is counted then. */
  return hc_note_plain(mphc_calloc(k, n), k * n);
}

static void *realloc_block(void *p, size_t n) {
  if (HC_UNLIKELY(hc_is_cold(p)))
    return hc_cold_realloc(p, n);
  return mphc_realloc(p, n);
}

/* site_lifetimes: a hinted block keeps its birth when it moves; realloc
 * to 0 bytes frees it; a failed realloc leaves it where it was.  Its
 * record is out of the table while the block changes hands. */
HC_EXPORT void *realloc(void *p, size_t n) {
  if (!p)
    return hc_note_plain(mphc_realloc(p, n), n);
  if (HC_LIKELY(!hc_opt.site_lifetimes))
    return realloc_block(p, n);
  struct hc_live *rec = hc_site_take(p);
  void *q = realloc_block(p, n);
  hc_site_put(rec, q ? q : n ? p : NULL);
  return q;
}

HC_EXPORT int posix_memalign(void **out, size_t align, size_t n) {
  int rc = mphc_posix_memalign(out, align, n);
  if (rc == 0)
    hc_note_plain(*out, n);
  return rc;
}

HC_EXPORT void *aligned_alloc(size_t align, size_t n) {
  return hc_note_plain(mphc_aligned_alloc(align, n), n);
}

HC_EXPORT void *memalign(size_t align, size_t n) {
  return hc_note_plain(mphc_memalign(align, n), n);
}

HC_EXPORT void *valloc(size_t n) { return hc_note_plain(mphc_valloc(n), n); }

/* glibc's pvalloc (jemalloc has none): page-aligned, size rounded up to
 * whole pages, a page for 0. */
HC_EXPORT void *pvalloc(size_t n) {
  const size_t page = 4096;
  size_t rounded = (n + page - 1) & ~(page - 1);
  if (rounded < n) {
    errno = ENOMEM;
    return NULL;
  }
  return hc_note_plain(mphc_memalign(page, rounded ? rounded : page), n);
}

HC_EXPORT size_t malloc_usable_size(void *p) {
  return p ? mphc_malloc_usable_size(p) : 0;
}
