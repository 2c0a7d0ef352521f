/* rt_ialloc.h - the runtime's own memory (rt_ialloc.c). */
#ifndef MEMPROF_RT_IALLOC_H
#define MEMPROF_RT_IALLOC_H

#include "rt_internal.h"

/* Runtime-internal memory (histograms, MIB entries, thread starts): never
 * profiled, never enumerated.  The caller passes the size back to free. */
RT_HIDDEN void *rt_ialloc(size_t n);
RT_HIDDEN void rt_ifree(void *p, size_t n);
/* Zeroed, 16-aligned, at most 64 KiB, never freed (NULL on failure). */
RT_HIDDEN void *rt_ialloc_perm(size_t n);
RT_HIDDEN void rt_ialloc_perm_init(void); /* by init: reserve the region */
/* A permanent block as a nonzero u32 ("ref"), and back: blocks are
 * RT_PERM_ALIGN-aligned offsets into one region (set up by init). */
#define RT_PERM_ALIGN 16
RT_HIDDEN extern char *rt_perm_base;
static inline uint32_t rt_perm_ref(const void *p) {
  return (uint32_t)(((const char *)p - rt_perm_base) / RT_PERM_ALIGN);
}
static inline void *rt_perm_at(uint32_t ref) {
  return rt_perm_base + (uint64_t)ref * RT_PERM_ALIGN;
}
RT_HIDDEN void rt_ialloc_fork_prepare(void);
RT_HIDDEN void rt_ialloc_fork_parent(void);
RT_HIDDEN void rt_ialloc_fork_child(void);

#endif
