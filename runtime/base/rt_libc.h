/* rt_libc.h - the C library's byte and string functions as the runtime
 * calls them (rt_libc.c). */
#ifndef MEMPROF_RT_LIBC_H
#define MEMPROF_RT_LIBC_H

#include "rt_internal.h"

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
/* Switch to the C library's definitions; `ours` holds the runtime's own
 * (the counting interceptors, entry/), which the loader's answers are
 * compared with: start/rt_lifecycle.c passes them, from above. */
RT_HIDDEN void rt_libc_resolve(const rt_libc_fns *ours);
/* The definition of `name` after the runtime's in the loader's order (the
 * C library's), or NULL if there is none besides `ours`. */
RT_HIDDEN void *rt_next_definition(const char *name, void *ours);
/* The definition of `name` the process would call without this copy: the
 * first in the loader's order, or, when that is ours, the next one; NULL
 * if there is none besides ours. */
RT_HIDDEN void *rt_serving_definition(const char *name, void *ours);
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
