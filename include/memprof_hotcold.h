/* memprof_hotcold.h - the C API of libmemprof-hotcold beyond the allocation
 * functions it defines (the malloc family, every replaceable operator
 * new/delete and the __hot_cold_t forms clang emits with
 * -fmemory-profile-use=P -mllvm -optimize-hot-cold-new).
 *
 * A program needs none of these to benefit from the library; they let it
 * (or a test) look at where its memory went.  docs/hotcold.md is the
 * normative description. */
#ifndef MEMPROF_HOTCOLD_H
#define MEMPROF_HOTCOLD_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if `p` points into a block the cold arena served, else 0. */
int memprof_hotcold_is_cold(const void *p);

/* Write the statistics (docs/hotcold.md, "Statistics") to file descriptor
 * `fd` now.  Returns 0, or -1 if a write failed. */
int memprof_hotcold_write_stats(int fd);

/* Do now what the idle thread does when the cold arena has been idle:
 * release its unused pages and, if the `advise` option is on, advise the
 * rest MADV_COLD. */
void memprof_hotcold_idle(void);

/* mallctl() of the library's jemalloc (docs: jemalloc(3)), e.g. to read
 * "stats.arenas.<i>.small.nmalloc" of the cold arena. */
int memprof_hotcold_mallctl(const char *name, void *oldp, size_t *oldlenp,
                            void *newp, size_t newlen);

/* The cold arena's jemalloc index, or -1 while it does not exist. */
int memprof_hotcold_cold_arena(void);

#ifdef __cplusplus
}
#endif

#endif
