/* error.h - the one error convention of the tool's libraries (symbolizer/
 * and profdata/).
 *
 * Functions that can fail return int: 0 on success, -1 on failure after
 * writing a one-line, human-readable reason into the caller's mp_err.  The
 * message says what is wrong ("truncated MIB section: needs 152 bytes at
 * offset 0x1f8, file has 16"); the CLI prefixes it with the file name.
 * Libraries never exit: only a program's main decides how it ends.
 * Running out of memory is the one failure that is not returned (every
 * allocation would need a path back): mp_xmalloc and friends call the
 * handler main installed with mp_set_oom_handler, which must not return;
 * without one, they print and abort.
 */
#ifndef MEMPROF_ERROR_H
#define MEMPROF_ERROR_H

#include <stddef.h>

typedef struct mp_err {
  char msg[1024];
} mp_err;

/* Format into e->msg (if e is not NULL); always returns -1. */
int mp_fail(mp_err *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Prefix e->msg with "<what>: ". */
void mp_err_prefix(mp_err *e, const char *what);

/* What happens when an allocation of n bytes fails (must not return). */
typedef void (*mp_oom_fn)(size_t n);
void mp_set_oom_handler(mp_oom_fn fn);

void *mp_xmalloc(size_t n);
void *mp_xcalloc(size_t n, size_t size);
void *mp_xrealloc(void *p, size_t n);
/* n bytes starting on a multiple of `align` (a power of two, at least
 * sizeof(void *)); free() releases them. */
void *mp_xaligned_alloc(size_t align, size_t n);
char *mp_xstrndup(const char *s, size_t n);

/* Grow a dynamic array so it holds at least `need` elements. */
#define MP_VEC_RESERVE(ptr, cap, need)                                  \
  do {                                                                  \
    if ((need) > (cap)) {                                               \
      size_t mp_nc_ = (cap) ? (cap) * 2 : 8;                            \
      while (mp_nc_ < (need)) mp_nc_ *= 2;                              \
      (ptr) = mp_xrealloc((ptr), mp_nc_ * sizeof(*(ptr)));              \
      (cap) = mp_nc_;                                                   \
    }                                                                   \
  } while (0)

#endif
