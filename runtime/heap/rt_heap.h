/* rt_heap.h - what the heap offers the rest of the runtime beside the
 * allocation path (rt_alloc.h): live-block walks, fork, statistics,
 * ownership queries (rt_heap.c), large blocks (rt_large.c) and the
 * sanitizer malloc/free hooks (rt_hooks.c). */
#ifndef MEMPROF_RT_HEAP_H
#define MEMPROF_RT_HEAP_H

#include "runtime/record/rt_mibtable.h"

/* The largest block rt_alloc serves (rt_heap.c's limit; LLVM's too). */
#define RT_MAX_ALLOC_SIZE (1ULL << 40)
/* The size requested for a live block of ours, 0 if `p` is not one. */
RT_HIDDEN size_t rt_usable_size(const void *p);
/* Calls cb for every live user block, unsampled ones included (the caller
 * holds the MIB locks, so no block changes state underneath). */
RT_HIDDEN void rt_heap_for_each_live(void (*cb)(const rt_block *, void *),
                                     void *ctx);
/* Register the calling new thread's cache (rt_thread.c's trampoline). */
RT_HIDDEN void rt_heap_thread_start(void);
RT_HIDDEN void rt_heap_fork_prepare(void);
RT_HIDDEN void rt_heap_fork_parent(void);
RT_HIDDEN void rt_heap_fork_child(void);
/* Counting has started (__memprof_init): new blocks take only size
 * classes of whole shadow cells (fine_classes, rt_size_class.h). */
RT_HIDDEN void rt_heap_whole_cells(void);
/* The ticker's share of populating (see rt_heap_populate.c): called at every tick. */
RT_HIDDEN void rt_heap_prefault(void);
typedef struct rt_heap_stats {
  uint64_t allocated, freed, frees, mallocs, bytes_live, heap_mapped, large_mapped;
  uint64_t reallocs, realloced; /* calls, bytes */
} rt_heap_stats;
RT_HIDDEN void rt_heap_get_stats(rt_heap_stats *s);
/* 1 if p is the start of a live block of ours (size 0 included). */
RT_HIDDEN int rt_heap_owns(const void *p);
/* With sampling, hands unrecorded blocks to the C library's allocator from
 * here on (rt_heap_libc.c); called once the loader may be asked. */
/* `ours`: the runtime's own malloc family (entry/rt_malloc.c), which the
 * loader's answers are compared with; start/rt_lifecycle.c passes them. */
struct libc_heap_fns;
struct libc_tune_fns;
/* Forwarding (rt_forwarding): every block from the definitions the process
 * would call without this copy; `ours` as for rt_heap_libc_install.  Once,
 * before the heap is asked for a block. */
RT_HIDDEN void rt_heap_forward_install(const struct libc_heap_fns *ours);
RT_HIDDEN void rt_heap_libc_install(const struct libc_heap_fns *ours,
                                    const struct libc_tune_fns *own_tune);
/* Start of the live block containing p, or NULL. */
RT_HIDDEN const void *rt_heap_block_begin(const void *p);

/* Large blocks (rt_large.c), used by rt_heap.c. */
RT_HIDDEN uintptr_t rt_large_alloc(uint64_t size, size_t align, uint32_t stack,
                                   uint32_t ts, uint32_t cpu);
/* The live large block starting at p: fills *b, returns its state word. */
RT_HIDDEN uint32_t *rt_large_find(uintptr_t p, rt_block *b);
RT_HIDDEN void rt_large_release(uintptr_t p); /* after its death is claimed */
/* The large block at p, its death claimed, as a block of `size` bytes
 * (stack, ts, cpu: as rt_large_alloc's) with p's contents up to the
 * smaller size, by resizing its mapping: its new address, or 0 when the
 * mapping could not be resized (p is then a live unrecorded block, its
 * contents unchanged). */
RT_HIDDEN uintptr_t rt_large_resize(uintptr_t p, uint64_t size, uint32_t stack,
                                    uint32_t ts, uint32_t cpu);
RT_HIDDEN void rt_large_follow(void); /* on the ticker thread, each tick */
RT_HIDDEN uintptr_t rt_large_begin(uintptr_t p);
RT_HIDDEN void rt_large_for_each_live(void (*cb)(const rt_block *, void *), void *ctx);
RT_HIDDEN uint64_t rt_large_mapped(void);
/* Large blocks mapped and unmapped so far (each is one mapping), the
 * bytes unmapped, and the blocks resized (rt_large_resize). */
RT_HIDDEN void rt_large_map_counts(uint64_t *maps, uint64_t *unmaps, uint64_t *unmapped,
                                   uint64_t *remaps);
RT_HIDDEN void rt_large_fork_prepare(void);
RT_HIDDEN void rt_large_fork_parent(void);
RT_HIDDEN void rt_large_fork_child(void);

/* Counts a realloc of a live block to n > 0 bytes (the statistics'
 * "realloced" line), in the calling thread's counters. */
RT_HIDDEN void rt_heap_note_realloc(uint64_t n);
/* Sanitizer malloc/free hooks (rt_hooks.c).  rt_hooks_maybe is 1 until init
 * has seen that the program defines no hook, and again once one is
 * installed. */
RT_HIDDEN extern int rt_hooks_maybe;
RT_HIDDEN void rt_hooks_init(void);
RT_HIDDEN void rt_run_malloc_hooks(const void *p, size_t n);
RT_HIDDEN void rt_run_free_hooks(const void *p);
static inline void rt_malloc_hooks(const void *p, size_t n) {
  if (RT_UNLIKELY(__atomic_load_n(&rt_hooks_maybe, __ATOMIC_RELAXED)))
    rt_run_malloc_hooks(p, n);
}
static inline void rt_free_hooks(const void *p) {
  if (RT_UNLIKELY(__atomic_load_n(&rt_hooks_maybe, __ATOMIC_RELAXED)))
    rt_run_free_hooks(p);
}

#endif
