/* rt_alloc.h - the allocation core as the API's files (rt_malloc.c,
 * rt_new_delete.c) call it: rt_alloc and rt_free.
 *
 * With sampling and unsampled_to_libc (rt_heap_libc.c) a block that is not
 * recorded is the C library's, and the path to it is inline here: such a
 * call costs the entry point, the sampling countdown or a range check, and
 * the C library's own call.  Everything else is rt_heap.c's.
 *
 * rt_alloc: `size` bytes aligned to `align` (a power of two; 0 means the
 * default 16), the shadow cells of a recorded block cleared; zeroed if
 * `zero`.  Returns NULL when the memory cannot be had; it never sets errno
 * and never reports: the caller applies the API's semantics.
 *
 * rt_free: records the block's MIB (if it was recorded) and releases it.
 * NULL, foreign pointers, interior pointers and double frees of our
 * blocks are ignored; with unsampled_to_libc a pointer that is not ours
 * goes to the C library's free.
 *
 * The core runs the sanitizer hooks itself: rt_alloc calls the malloc
 * hooks after allocating, rt_free calls the free hooks before recording
 * (so entry points must not call them again). */
#ifndef MEMPROF_RT_ALLOC_H
#define MEMPROF_RT_ALLOC_H

#include "rt_heap.h"
#include "runtime/base/rt_sys.h"
#include "runtime/record/rt_sample.h"

/* ---- the C library's allocator (rt_heap_libc.c) ------------------------ */

typedef struct libc_heap_fns {
  void *(*malloc)(size_t);
  void (*free)(void *);
  void *(*calloc)(size_t, size_t);
  void *(*realloc)(void *, size_t);
  void *(*memalign)(size_t, size_t);
  size_t (*usable)(void *);
} libc_heap_fns;
RT_HIDDEN extern libc_heap_fns libc_heap;
/* The C library's tuning and inspection calls (NULL where it has none):
 * mallopt and malloc_trim act on its heap, mallinfo reads it. */
struct mallinfo;
struct mallinfo2;
typedef struct libc_tune_fns {
  int (*mallopt)(int, int);
  int (*trim)(size_t);
  struct mallinfo (*mallinfo)(void);
  struct mallinfo2 (*mallinfo2)(void);
} libc_tune_fns;
RT_HIDDEN extern libc_tune_fns libc_tune;
/* Set once libc_heap is filled in, and the heap and the core are up. */
RT_HIDDEN extern int libc_heap_on;
/* The heap's reservation (rt_heap_layout.c): class blocks lie inside. */
RT_HIDDEN extern uintptr_t heap_base, heap_end;
static inline int in_heap(uintptr_t p) { return p >= heap_base && p < heap_end; }

static inline int libc_heap_serves(void) {
  return __atomic_load_n(&libc_heap_on, __ATOMIC_ACQUIRE);
}

/* Set while this thread is inside the C library's allocator.  A signal
 * handler that interrupted it there must not enter it again (glibc's
 * malloc takes locks and is not reentrant): its allocations come from the
 * profiler's heap, its frees of the C library's blocks wait in a
 * per-thread list until the interrupted call has returned. */
typedef struct libc_thread {
  int busy;
  uint32_t n_deferred; /* frees waiting (rt_heap_libc.c) */
} libc_thread;
RT_HIDDEN extern __thread libc_thread libc_tls __attribute__((tls_model("initial-exec")));
RT_HIDDEN void libc_defer_free(void *p);
RT_HIDDEN void libc_drain_deferred(void);

static inline void libc_enter(void) {
  libc_tls.busy = 1;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void libc_leave(void) {
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  libc_tls.busy = 0;
  if (RT_UNLIKELY(__atomic_load_n(&libc_tls.n_deferred, __ATOMIC_ACQUIRE)))
    libc_drain_deferred();
}

/* The C library's free of p, or later if this thread is inside it. */
static inline void libc_free(void *p) {
  if (RT_UNLIKELY(libc_tls.busy)) {
    libc_defer_free(p);
    return;
  }
  libc_enter();
  libc_heap.free(p);
  libc_leave();
}

/* ---- the profiler's heap (rt_heap.c) ----------------------------------- */

/* rt_alloc but for the C library's blocks: a recorded block, or any block
 * while the C library serves none. */
RT_HIDDEN void *rt_alloc_own(size_t size, size_t align, int zero, rt_caller c);
/* A recorded block, the sampling draw made (the C library serves). */
RT_HIDDEN void *rt_alloc_recorded(size_t size, size_t align, int zero, rt_caller c);
/* rt_free of a block of ours, of nothing, or of a C-library block that
 * starts on a page (looked up among our large blocks first). */
RT_HIDDEN void rt_free_own(void *p);

static inline void *rt_alloc(size_t size, size_t align, int zero, rt_caller c) {
  if (RT_LIKELY(libc_heap_serves()) && !libc_tls.busy && size <= RT_MAX_ALLOC_SIZE &&
      !(align & (align - 1))) {
    if (RT_UNLIKELY(rt_sample_take(size)))
      return rt_alloc_recorded(size, align ? align : 16, zero, c);
    libc_enter();
    /* the C library aligns to 16 */
    void *p = align > 16 ? libc_heap.memalign(align, size)
              : zero     ? libc_heap.calloc(1, size)
                         : libc_heap.malloc(size);
    libc_leave();
    if (p)
      rt_malloc_hooks(p, size);
    return p;
  }
  return rt_alloc_own(size, align, zero, c);
}

static inline void rt_free(void *ptr) {
  uintptr_t p = (uintptr_t)ptr;
  /* Outside the reservation and not on a page (where our large blocks
   * start): the C library's. */
  if (RT_LIKELY(libc_heap_serves()) && !in_heap(p) && (p & (RT_PAGE - 1))) {
    rt_free_hooks(ptr);
    libc_free(ptr);
    return;
  }
  rt_free_own(ptr);
}

/* Forwarding (rt_forwarding): the serving allocator's functions, installed
 * once by start-up (rt_heap_forward_install, rt_heap.h); a block of `size`
 * bytes aligned to `align` (cleared if `zero`) from it, and a block given
 * back to it (rt_heap_libc.c). */
RT_HIDDEN extern libc_heap_fns fwd_heap;
RT_HIDDEN void *rt_forward_alloc(size_t size, size_t align, int zero);
RT_HIDDEN void *rt_forward_realloc(void *p, size_t n);
RT_HIDDEN void rt_forward_free(void *p);

/* With unsampled_to_libc: 1 if p is a block the C library serves. */
RT_HIDDEN int rt_is_libc_block(const void *p);
/* realloc of such a block to n > 0 bytes: the C library's realloc (in
 * place when it can) when the new block is not sampled, else a recorded
 * block of ours with the bytes copied and the old one freed; NULL leaves
 * the old block valid. */
RT_HIDDEN void *rt_realloc_libc(void *old, size_t n, rt_caller c);
/* realloc of an unrecorded small block of ours to n bytes, 0 < n <= 1 KiB,
 * that sampling leaves unrecorded: the new block, or NULL when the general
 * path must do it (nothing drawn or counted then). */
RT_HIDDEN void *rt_realloc_own(void *old, size_t n);
/* realloc of a large block of ours to a large size n (remap_large): the
 * old block's death recorded, the new block (recorded or not, as the draw
 * says) made of its mapping by rt_large_resize, no byte copied.  Returns
 * 1 with the new block in *out (NULL: no memory, old still valid), 0 when
 * it does not apply (the caller moves the block). */
RT_HIDDEN int rt_realloc_large(void *old, size_t n, rt_caller c, void **out);

#endif
