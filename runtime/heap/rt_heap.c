/* rt_heap.c - the allocator's core API: rt_alloc, rt_free,
 * rt_usable_size, live-block enumeration, fork handling and allocator
 * statistics, over the size-class heap (rt_heap_priv.h has its design and
 * the files it is split into) and rt_large.c's blocks.
 *
 * The live flag of a block is flipped to 0 by the MIB table under its lock
 * (rt_mib_on_free), which is what makes a concurrent dump see every block
 * exactly once: either live (walked here) or recorded.
 *
 * rt_alloc_own and rt_free_own start with a fast path for the small blocks
 * sampling leaves unrecorded, the bulk of a sampled run's calls, and
 * rt_realloc_own is realloc's (below, "the fast paths"). */
#include "rt_alloc.h"
#include "rt_heap.h"
#include "rt_live_high.h"
#include "rt_heap_priv.h"
#include "rt_size_class.h"
#include "runtime/base/rt_clock.h"
#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_libc.h"
#include "runtime/base/rt_lock.h"
#include "runtime/base/rt_state.h"
#include "runtime/base/rt_sys.h"
#include "runtime/record/rt_mibtable.h"
#include "runtime/record/rt_sample.h"
#include "runtime/record/rt_shadow.h"
#include "runtime/record/rt_stack.h"
#include "runtime/record/rt_timeline.h"

void rt_heap_thread_start(void) {
  heap_ensure();
  rt_tcache_thread_start();
}

/* ---- temporary allocations ---------------------------------------------
 * heaptrack's "temporary": a block freed before its thread allocates
 * again.  Each thread remembers its last recorded block (address and
 * context, so that an address reused by another thread's block is not
 * mistaken for it); the free of that block, with no allocation since,
 * counts one for its context (rt_mib_count_temporary).  Meaningful when
 * every allocation is recorded: under sampling most allocations in
 * between are not seen, and the dump writes no counts (rt_dump.c). */
typedef struct last_block {
  uintptr_t p; /* ~address: the roots census (roots=1) scans each thread's
                  TLS, and the profiler's memory must not keep a block */
  uint32_t stack;
} last_block;
static __thread last_block last_alloc __attribute__((tls_model("initial-exec")));

static inline int take_temporary(uintptr_t p, uint32_t stack) {
  if (last_alloc.p != ~p || last_alloc.stack != stack)
    return 0;
  last_alloc.p = 0;
  return 1;
}

/* ---- public core API --------------------------------------------------- */

/* Index of the slot of class c holding region offset off (< REGION_SIZE). */
static inline uint64_t slot_index(int c, uint64_t off) {
  return (uint64_t)(((unsigned __int128)off * classes[c].recip) >> 64);
}

/* p could be ours: non-null and the heap exists. */
static inline int heap_may_own(uintptr_t p) {
  return p && __atomic_load_n(&heap_ready, __ATOMIC_ACQUIRE);
}

/* State word of the slot of class c holding p, or NULL; *into: p's
 * offset in that slot. */
static inline uint32_t *class_state(uintptr_t p, int *cls, uint32_t *slot,
                                    uint64_t *into) {
  int c = (int)((p - heap_base) >> REGION_SHIFT);
  uint64_t off = p - classes[c].start;
  if (off >= REGION_SIZE)
    return NULL; /* before slot 0 */
  uint64_t i = slot_index(c, off);
  if (i >= __atomic_load_n(&centrals[c].bump, __ATOMIC_RELAXED))
    return NULL;
  *cls = c;
  *slot = (uint32_t)i;
  *into = off - i * classes[c].size;
  uint32_t *w = &classes[c].state[i];
  if (!w)
    __builtin_unreachable(); /* lets callers' NULL checks fold away */
  return w;
}

/* State word of the live class block starting at p (its value in *st),
 * or NULL. */
static inline uint32_t *live_class_state(uintptr_t p, int *cls, uint32_t *slot,
                                         uint32_t *st) {
  uint64_t into;
  uint32_t *w = class_state(p, cls, slot, &into);
  if (!w || into > SLOT_LEAD)
    return NULL;
  *st = __atomic_load_n(w, __ATOMIC_ACQUIRE);
  return *st & RT_LIVE_BIT && into == lead_of(*st) ? w : NULL;
}

/* Class of a block of `size` bytes aligned to `align`, -1 for a large one. */
static inline int class_of(size_t size, size_t align) {
  if (align <= 16 || (align <= 64 && !rt_fine_classes_load()))
    return size <= MAX_CLASS_SIZE ? rt_class_for(size) : -1;
  return rt_class_for_aligned(size, align);
}

/* Where the block of `size` bytes in slot s of class c starts (its lead
 * in *lead), cleared if asked and the slot was handed out before. */
static inline uintptr_t class_block(int c, uint32_t s, size_t size, size_t align,
                                    int zero, uint32_t *lead) {
  *lead = lead_bit(c, size, align);
  uintptr_t p = slot_addr(c, s) + lead_of(*lead);
  if (zero && (classes[c].state[s] & DIRTY_BIT))
    rt_memset((void *)p, 0, size);
  return p;
}

/* A block that is recorded: its stack, time and cpu, its metadata and its
 * shadow cleared.  Out of line, so that the unsampled path keeps a small
 * frame (the captured stack is 3 KiB).  `resize`: 0, or a large block of
 * ours whose death is recorded, whose mapping becomes the new (large)
 * block (rt_realloc_large). */
static __attribute__((noinline)) void *alloc_recorded(size_t size, size_t align, int zero,
                                                      rt_caller caller, uintptr_t resize) {
  rt_captured cap;
  cap.n = 0;
  uint64_t stamp = rt_stamp(); /* read while the stack is walked */
  if (rt_inited)
    rt_stack_unwind(caller, &cap);
  uint32_t ts = rt_stamp_ms(stamp);
  uint32_t cpu = rt_cpu();
  uintptr_t p;
  uint32_t ref;
  int c = class_of(size, align);
  uint32_t s = c >= 0 ? slot_take(&c, align) : NO_SLOT;
  if (s != NO_SLOT) {
    uint32_t lead;
    p = class_block(c, s, size, align, zero, &lead);
    rt_shadow_clear(p, size);
    block_meta *m = meta_of(c, s, lead | (uint32_t)size);
    m->stack = ref = rt_stack_intern(&cap);
    m->alloc_ts = ts;
    __atomic_store_n(&classes[c].state[s],
                     RT_LIVE_BIT | DIRTY_BIT | lead | pack_cpu(cpu) << CPU_SHIFT |
                         (uint32_t)size,
                     __ATOMIC_RELEASE);
  } else {
    ref = rt_stack_intern(&cap);
    p = resize ? rt_large_resize(resize, size, ref, ts, cpu)
               : rt_large_alloc(size, align, ref, ts, cpu);
    if (!p)
      return NULL;
  }
  last_alloc = (last_block){~p, ref};
  count_event(0, size);
  rt_timeline_count(0, size, ref, stamp, ts);
  rt_heap_high_count(0, size, (void *)p);
  rt_malloc_hooks((void *)p, size);
  return (void *)p;
}

void *rt_alloc_recorded(size_t size, size_t align, int zero, rt_caller caller) {
  return alloc_recorded(size, align, zero, caller, 0);
}

static __attribute__((noinline)) void *alloc_own(size_t size, size_t align, int zero,
                                                 rt_caller caller) {
  if (RT_UNLIKELY(!heap_ensure()))
    return rt_forward_alloc(size, align ? align : 16, zero); /* rt_forwarding */
  if (RT_UNLIKELY(!rt_inited))
    rt_init_core();
  if (align == 0)
    align = 16;
  if (size > MAX_USER_SIZE || (align & (align - 1)))
    return NULL;
  /* A block that is not sampled (rt_sample.h) gets no stack, time, cpu,
   * metadata or shadow clear, and its free records nothing: its state word
   * says so (CPU_UNSAMPLED), a large block's stack ref (RT_UNSAMPLED).
   * The check is here rather than in the thread cache's refill branch: the
   * stack walk must be decided before the slot is taken.  Such blocks
   * exist only with sampling on, hence with the timeline off (rt_sample.c):
   * they skip rt_timeline_count. */
  if (rt_sample_take(size))
    return rt_alloc_recorded(size, align, zero, caller);
  uintptr_t p;
  int c = class_of(size, align);
  uint32_t s = c >= 0 ? slot_take(&c, align) : NO_SLOT;
  if (RT_LIKELY(s != NO_SLOT)) {
    uint32_t lead;
    p = class_block(c, s, size, align, zero, &lead);
    __atomic_store_n(&classes[c].state[s], unrecorded_word(lead, size), __ATOMIC_RELEASE);
  } else {
    p = rt_large_alloc(size, align, RT_UNSAMPLED, 0, 0xFFFFFFFFu);
    if (!p)
      return NULL;
  }
  count_event(0, size);
  rt_heap_high_count(0, size, (void *)p);
  rt_malloc_hooks((void *)p, size);
  return (void *)p;
}

/* Outside the heap's reservation, and not on a page (where large blocks
 * of ours start) or no live large block of ours there. */
int rt_is_libc_block(const void *ptr) {
  uintptr_t p = (uintptr_t)ptr;
  rt_block b;
  return p && libc_heap_serves() && !in_heap(p) &&
         ((p & (RT_PAGE - 1)) || !rt_large_find(p, &b));
}

void *rt_realloc_libc(void *old, size_t n, rt_caller caller) {
  if (n > MAX_USER_SIZE)
    return NULL;
  /* In a handler that interrupted the C library's allocator, a block of
   * ours (rt_alloc_own makes the draw); else the draw decides. */
  int busy = libc_tls.busy, recorded = !busy && rt_sample_take(n);
  if (!busy && !recorded) {
    libc_enter();
    void *p = libc_heap.realloc(old, n);
    libc_leave();
    if (p) {
      rt_free_hooks(old);
      rt_malloc_hooks(p, n);
    }
    return p;
  }
  /* Reading the old block's size takes no lock. */
  void *p = recorded ? rt_alloc_recorded(n, 16, 0, caller) : rt_alloc_own(n, 16, 0, caller);
  if (!p)
    return NULL;
  size_t old_n = libc_heap.usable(old);
  rt_memcpy(p, old, old_n < n ? old_n : n);
  rt_free_hooks(old);
  libc_free(old);
  return p;
}

/* Record (if profiling and the block was sampled) and mark dead; 0 if it
 * was not live. */
static int retire(uintptr_t p, uint64_t size, uint32_t stack, uint32_t ts,
                  uint32_t cpu, uint32_t *live, uint64_t stamp) {
  if (stack != RT_UNSAMPLED && __atomic_load_n(&rt_recording, __ATOMIC_ACQUIRE)) {
    if (rt_sample_interval)
      stamp = rt_stamp(); /* not read up front: most blocks are not sampled */
    rt_block b = {p, size, stack, ts, cpu};
    int temporary = take_temporary(p, stack);
    if (!rt_mib_on_free(&b, live, stamp))
      return 0;
    if (temporary)
      rt_mib_count_temporary(stack);
    return 1;
  }
  return rt_claim_live(live);
}

static __attribute__((noinline)) void free_own(void *ptr) {
  uintptr_t p = (uintptr_t)ptr;
  if (!heap_may_own(p)) {
    if (p && __atomic_load_n(&rt_forwarding, __ATOMIC_RELAXED))
      rt_forward_free(ptr);
    return;
  }
  /* read while the block's metadata is fetched, unless sampling (retire) */
  uint64_t stamp = RT_LIKELY(!rt_sample_interval) ? rt_stamp() : 0;
  if (in_heap(p)) {
    int c;
    uint32_t s, st;
    uint32_t *w = live_class_state(p, &c, &s, &st);
    if (!w)
      return;
    rt_free_hooks(ptr);
    uint64_t size = st & SIZE_MASK;
    if (unsampled_state(st)) {
      /* No atomic claim: the only other writer of a live block's word is
       * another free of it (a double free racing this one, which no
       * allocator catches), and a dump skips unsampled blocks, so its
       * exactly-once rule does not concern them.  A double free after
       * this one still sees the bit clear.  No rt_timeline_count: unsampled
       * blocks exist only with the timeline off (rt_alloc). */
      __atomic_store_n(w, st & ~RT_LIVE_BIT, __ATOMIC_RELAXED);
      count_event(1, size);
      rt_heap_high_count(1, size, ptr);
      slot_give(c, s);
      return;
    }
    const block_meta *m = meta_of(c, s, st);
    uint32_t ref = m->stack;
    if (!retire(p, size, ref, m->alloc_ts, unpack_cpu(st), w, stamp))
      return;
    count_event(1, size);
    rt_timeline_count(1, size, ref, stamp, 0);
    rt_heap_high_count(1, size, ptr);
    slot_give(c, s);
    return;
  }
  rt_block b;
  uint32_t *live = rt_large_find(p, &b);
  if (!live) {
    if (libc_heap_serves()) { /* the C library's, on a page (rt_free) */
      rt_free_hooks(ptr);
      libc_free(ptr);
    }
    return;
  }
  rt_free_hooks(ptr);
  if (!retire(p, b.size, b.stack, b.alloc_ts, b.alloc_cpu, live, stamp))
    return;
  count_event(1, b.size);
  rt_timeline_count(1, b.size, b.stack, stamp, 0);
  rt_heap_high_count(1, b.size, ptr);
  rt_large_release(p);
}

/* ---- the fast paths ------------------------------------------------------
 * Under sampling most calls are for blocks left unrecorded.  Those of up
 * to 1 KiB (not zeroed, aligned to at most 16), while no hook is installed
 * and no watcher of the live high is set, go from and to this thread's
 * cache here, reading the thread's first cache line, the class's record,
 * the bin and (free, realloc) the slot's state word.  Everything else
 * goes to the general path (alloc_own, free_own, realloc's in
 * entry/rt_malloc.c), which makes every check again: a draw that
 * records, an empty or full bin, a thread without a cache (its bins empty
 * until the heap is up), a call inside another (a signal handler), a
 * pointer that is not a live unrecorded block's.  Both paths write the
 * same state words and count the same statistics
 * (test_rt_safety.UnrecordedFrees runs a program through each). */

static inline int fast_ok(void) {
  return !__atomic_load_n(&rt_hooks_maybe, __ATOMIC_RELAXED) &&
         !__atomic_load_n(&rt_heap_high_step, __ATOMIC_RELAXED);
}

static inline int tc_idle(void) { return rt_tc.state == TC_REGISTERED && !rt_tc.busy; }

/* live_class_state for a block sampling left unrecorded (its class, slot
 * and word in *cls, *slot and *st), else NULL; written out for the fast
 * paths: bounded by the class record's slot count instead of the central
 * record's bump (a never-used slot's word is zero), and its slot offset
 * checked after the load, it keeps rt_free_own's fast path free of
 * callee-saved registers (built on live_class_state, that path saves and
 * restores two on every free). */
static inline uint32_t *unrecorded_state(uintptr_t p, int *cls, uint32_t *slot, uint32_t *st) {
  int c = (int)((p - heap_base) >> REGION_SHIFT);
  const class_rec *k = &classes[c];
  uint64_t off = p - k->start;
  uint64_t i = slot_index(c, off);
  if (RT_UNLIKELY(off >= REGION_SIZE || i >= k->max_slots))
    return NULL;
  uint32_t *w = &k->state[i];
  *st = __atomic_load_n(w, __ATOMIC_ACQUIRE);
  if (RT_UNLIKELY(!(*st & RT_LIVE_BIT) || !unsampled_state(*st) ||
                  off - i * k->size != lead_of(*st)))
    return NULL;
  *cls = c;
  *slot = (uint32_t)i;
  return w;
}

/* leave_busy without the draining, which the fast paths leave to the
 * functions below, called last (sibling calls, runtime/CMakeLists.txt): no
 * value of theirs lives across a call, and they need no register a call
 * must keep. */
static inline int busy_done(void) {
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  rt_tc.busy = 0;
  return __atomic_load_n(&rt_tc.n_deferred, __ATOMIC_ACQUIRE) != 0;
}

static __attribute__((noinline)) void *drained(void *p) {
  rt_drain_deferred();
  return p;
}

static __attribute__((noinline)) void *alloc_own_busy(size_t size, size_t align, int zero,
                                                      rt_caller caller) {
  leave_busy();
  return alloc_own(size, align, zero, caller);
}

static __attribute__((noinline)) void free_own_busy(void *p) {
  leave_busy();
  free_own(p);
}

void *rt_alloc_own(size_t size, size_t align, int zero, rt_caller caller) {
  int64_t left = rt_sample_left - (int64_t)(size | (size == 0));
  if (RT_LIKELY(left > 0 && size <= 1024 && align <= 16 && !zero && fast_ok() && tc_idle())) {
    int c = rt_class_for(size);
    tc_bin *b = &rt_tc.bin[c];
    enter_busy();
    uint32_t n = b->n;
    if (RT_LIKELY(n)) {
      uint32_t s = b->slot[n - 1];
      b->n = n - 1;
      rt_sample_left = left;
      const class_rec *k = &classes[c];
      uint32_t lead = lead_bit(c, size, 16);
      __atomic_store_n(&k->state[s], unrecorded_word(lead, size), __ATOMIC_RELEASE);
      count_registered(0, size);
      void *p = (void *)(k->start + s * (uint64_t)k->size + lead_of(lead));
      return RT_UNLIKELY(busy_done()) ? drained(p) : p;
    }
    return alloc_own_busy(size, align, zero, caller);
  }
  return alloc_own(size, align, zero, caller);
}

void rt_free_own(void *ptr) {
  uintptr_t p = (uintptr_t)ptr;
  int c;
  uint32_t i, st, *w;
  /* Without sampling every block is recorded: straight to free_own. */
  if (RT_LIKELY(__atomic_load_n(&rt_sample_interval, __ATOMIC_RELAXED) && in_heap(p) &&
                fast_ok() && tc_idle() && (w = unrecorded_state(p, &c, &i, &st)))) {
    tc_bin *b = &rt_tc.bin[c];
    enter_busy();
    uint32_t n = b->n;
    if (RT_LIKELY(n < classes[c].cap)) {
      /* see free_own on the store */
      __atomic_store_n(w, st & ~RT_LIVE_BIT, __ATOMIC_RELAXED);
      b->slot[n] = i;
      b->n = n + 1;
      count_registered(1, st & SIZE_MASK);
      if (RT_UNLIKELY(busy_done()))
        drained(NULL);
      return;
    }
    free_own_busy(ptr);
    return;
  }
  free_own(ptr);
}

/* realloc of an unrecorded small block to n <= 1 KiB bytes whose draw
 * leaves the new block unrecorded too, the fast paths' third: a slot from
 * this thread's bin for n, the bytes copied, the old slot put back in its
 * own bin, in one busy section (the general path's allocation, usable-size
 * lookup, copy and free each check and enter it again).  NULL, nothing
 * drawn or counted, when anything else holds; else the same state words
 * and statistics as the general path. */
void *rt_realloc_own(void *ptr, size_t n) {
  uintptr_t p = (uintptr_t)ptr;
  int64_t left = rt_sample_left - (int64_t)n;
  int c;
  uint32_t i, st, *w;
  if (!(left > 0 && n - 1 < 1024 && __atomic_load_n(&rt_sample_interval, __ATOMIC_RELAXED) &&
        in_heap(p) && fast_ok() && tc_idle() && (w = unrecorded_state(p, &c, &i, &st))))
    return NULL;
  int nc = rt_class_for(n);
  tc_bin *to = &rt_tc.bin[nc], *back = &rt_tc.bin[c];
  enter_busy();
  if (!to->n || back->n >= classes[c].cap) {
    leave_busy();
    return NULL;
  }
  uint32_t s = to->slot[--to->n];
  uint32_t lead = lead_bit(nc, n, 16);
  __atomic_store_n(&classes[nc].state[s], unrecorded_word(lead, n), __ATOMIC_RELEASE);
  void *q = (void *)(slot_addr(nc, s) + lead_of(lead));
  uint64_t old_n = st & SIZE_MASK;
  rt_memcpy(q, ptr, old_n < n ? old_n : n);
  __atomic_store_n(w, st & ~RT_LIVE_BIT, __ATOMIC_RELAXED); /* see free_own */
  back->slot[back->n++] = i;
  rt_sample_left = left;
  count_registered(1, old_n);
  count_registered(0, n);
  count_realloc(n);
  leave_busy();
  return q;
}

/* realloc of a large block into a large one: the old block goes as a free
 * would (hooks, MIB, statistics), then the new one is made of its mapping
 * as an allocation would, recorded or not as its draw says.  Should the
 * mapping not be resized, the old block stays, unrecorded from then on
 * (its death is in the profile already). */
int rt_realloc_large(void *ptr, size_t n, rt_caller caller, void **out) {
  uintptr_t p = (uintptr_t)ptr;
  rt_block b;
  uint32_t *live;
  if (!rt_flags.remap_large || n <= MAX_CLASS_SIZE || n > MAX_USER_SIZE ||
      (p & (RT_PAGE - 1)) || !heap_may_own(p) || in_heap(p) || !(live = rt_large_find(p, &b)))
    return 0;
  int recorded = rt_sample_take(n);
  uint64_t stamp = RT_LIKELY(!rt_sample_interval) ? rt_stamp() : 0;
  rt_free_hooks(ptr);
  *out = NULL;
  if (!retire(p, b.size, b.stack, b.alloc_ts, b.alloc_cpu, live, stamp))
    return 1; /* freed by another thread meanwhile */
  count_event(1, b.size);
  rt_timeline_count(1, b.size, b.stack, stamp, 0);
  if (recorded) {
    *out = alloc_recorded(n, 16, 0, caller, p);
    return 1;
  }
  uintptr_t q = rt_large_resize(p, n, RT_UNSAMPLED, 0, 0xFFFFFFFFu);
  if (q) {
    count_event(0, n);
    rt_malloc_hooks((void *)q, n);
    *out = (void *)q;
  }
  return 1;
}

/* 1 if p starts a live block of ours; its requested size in *size. */
static int live_block(uintptr_t p, uint64_t *size) {
  if (!heap_may_own(p))
    return 0;
  if (in_heap(p)) {
    int c;
    uint32_t s, st;
    if (!live_class_state(p, &c, &s, &st))
      return 0;
    *size = st & SIZE_MASK;
    return 1;
  }
  rt_block b;
  if (!rt_large_find(p, &b))
    return 0;
  *size = b.size;
  return 1;
}

size_t rt_usable_size(const void *ptr) {
  uint64_t n;
  if (live_block((uintptr_t)ptr, &n))
    return n;
  /* no block of ours, class or large: the C library's, if it serves any,
   * or the serving allocator's when forwarding */
  uintptr_t p = (uintptr_t)ptr;
  if (p && __atomic_load_n(&rt_forwarding, __ATOMIC_RELAXED) && fwd_heap.usable)
    return fwd_heap.usable((void *)ptr);
  return p && libc_heap_serves() && !in_heap(p) ? libc_heap.usable((void *)ptr) : 0;
}

/* ---- enumeration, fork, stats ------------------------------------------ */

/* The walk fetches each live block's metadata this many slots ahead: the
 * heap is cold at the exit dump, and each block's lead would cost a miss
 * of its own. */
#define WALK_AHEAD 16

void rt_heap_for_each_live(void (*cb)(const rt_block *, void *), void *ctx) {
  if (!__atomic_load_n(&heap_ready, __ATOMIC_ACQUIRE))
    return;
  for (int c = 0; c < NCLASS; c++) {
    uint64_t n = __atomic_load_n(&centrals[c].bump, __ATOMIC_ACQUIRE);
    const uint32_t *state = classes[c].state;
    for (uint64_t i = 0; i < n; i++) {
      if (i + WALK_AHEAD < n) {
        uint32_t ahead = __atomic_load_n(&state[i + WALK_AHEAD], __ATOMIC_RELAXED);
        if (ahead & RT_LIVE_BIT && !unsampled_state(ahead))
          __builtin_prefetch(meta_of(c, (uint32_t)(i + WALK_AHEAD), ahead));
      }
      uint32_t st = __atomic_load_n(&state[i], __ATOMIC_ACQUIRE);
      if (!(st & RT_LIVE_BIT))
        continue;
      rt_block b = {slot_addr(c, i) + lead_of(st), st & SIZE_MASK, RT_UNSAMPLED, 0,
                    0xFFFFFFFFu};
      if (!unsampled_state(st)) {
        const block_meta *m = meta_of(c, (uint32_t)i, st);
        b.stack = m->stack;
        b.alloc_ts = m->alloc_ts;
        b.alloc_cpu = unpack_cpu(st);
      }
      cb(&b, ctx);
    }
  }
  rt_large_for_each_live(cb, ctx);
}

void rt_heap_fork_prepare(void) {
  rt_mutex_lock(&heap_init_mu);
  rt_tcache_fork_prepare();
  rt_central_fork_prepare();
  rt_large_fork_prepare();
}

void rt_heap_fork_parent(void) {
  rt_large_fork_parent();
  rt_central_fork_parent();
  rt_tcache_fork_parent();
  rt_mutex_unlock(&heap_init_mu);
}

void rt_heap_fork_child(void) {
  rt_tcache_fork_child();
  rt_large_fork_child();
  rt_central_fork_child();
  rt_mutex_reset(&heap_init_mu);
}

void rt_heap_note_realloc(uint64_t n) { count_realloc(n); }

void rt_heap_get_stats(rt_heap_stats *s) {
  heap_counters sum;
  rt_tcache_sum(&sum);
  s->mallocs = sum.mallocs;
  s->frees = sum.frees;
  s->allocated = sum.bytes_alloc;
  s->freed = sum.bytes_freed;
  s->bytes_live = sum.bytes_alloc - sum.bytes_freed;
  s->reallocs = sum.reallocs;
  s->realloced = sum.bytes_realloc;
  s->large_mapped = rt_large_mapped();
  uint64_t mapped = 0;
  if (heap_ready)
    for (int c = 0; c < NCLASS; c++)
      mapped += centrals[c].bump * class_size[c];
  s->heap_mapped = mapped;
}

int rt_heap_owns(const void *ptr) {
  uint64_t n;
  return live_block((uintptr_t)ptr, &n);
}

const void *rt_heap_block_begin(const void *ptr) {
  uintptr_t p = (uintptr_t)ptr;
  if (!heap_may_own(p))
    return NULL;
  if (in_heap(p)) {
    int c;
    uint32_t s;
    uint64_t into;
    uint32_t *w = class_state(p, &c, &s, &into);
    uint32_t st = w ? __atomic_load_n(w, __ATOMIC_ACQUIRE) : 0;
    if (!(st & RT_LIVE_BIT) || into < lead_of(st))
      return NULL;
    return (const void *)(p - into + lead_of(st));
  }
  return (const void *)rt_large_begin(p);
}
