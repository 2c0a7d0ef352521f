/* rt_heap_priv.h - what the allocator's files share, and no one else.
 *
 * The allocator is split by concern, each file calling only those below
 * it in this list:
 *   rt_heap.c          the core API: rt_alloc, rt_free, usable size,
 *                      live-block walks, fork, statistics
 *   rt_heap_tcache.c   per-thread caches of free slots and the registry of
 *                      threads (the fast paths are inline, below)
 *   rt_heap_nested.c   calls made by a signal handler that interrupted its
 *                      own thread inside the allocator
 *   rt_heap_central.c  per-class central free lists under per-class locks
 *   rt_heap_populate.c faulting in a growing class's next slots ahead
 *   rt_heap_libc.c     the C library's allocator, home of the blocks
 *                      sampling leaves unrecorded (unsampled_to_libc)
 *   rt_heap_layout.c   the reservation, its slots and metadata, the shared
 *                      state and its lazy initialisation
 * with the size classes in rt_size_class.c.
 *
 * Layout (like sanitizer's SizeClassAllocator64): one NORESERVE reservation
 * split into 4 GiB regions, one per size class.  Every whole-cell class
 * size is a multiple of 64 and such a class's slots start 64-aligned, so
 * each slot is a run of whole 64-byte shadow cells and a block owns its
 * slot's cells alone: counts read at free are exact.  The fine classes
 * (16 .. 224 bytes, rt_size_class.h) share cells and serve only while no
 * code counts.  Slot 0 of class c sits a stagger
 * of its own past its region's 4 GiB boundary (stagger_classes): a
 * program's first and longest-lived blocks of every class would otherwise
 * share their address bits below 2^32, and with them the cache sets (which
 * the bits below the page give) and TLB sets (the page number's low bits),
 * as would their shadow cells; lua5.4's interpreter fetched its bytecode
 * from such blocks much slower than from glibc's.
 *
 * Within its slot a block starts SLOT_LEAD (32) bytes in when that still
 * fits the slot and the alignment allows, else at the slot's start: LLVM's
 * runtime puts user data 32 bytes into each 64-aligned chunk (after its
 * header), and programs then see the same cache-line split of their
 * objects under both runtimes (for C++ tree nodes it keeps key and value
 * in one line).  The cell count is the same either way.  (Every block at
 * its slot's start, metadata in the slot's last 8 bytes, was tried on
 * jsoncpp: its lookups read one line fewer per node, but its writer then
 * missed on each value's second line, and the program's own code got no
 * faster.)
 *
 * Each slot's state word (live flag, size, cpu) sits out of line in a
 * parallel array, so foreign pointers can be checked without touching
 * them.  The price is one line more per free, a miss when blocks are
 * freed in an order unlike their allocation's (perl freeing a large hash
 * in hash order); finishing each free one call later, its word
 * prefetched, removed that miss but helped no other program measured.  A
 * live block's stack ref and allocation time sit in its slot's lead when
 * it has one (most small blocks: the line the program uses anyway, and no
 * page of metadata), else in the slot's last 8 bytes when the block
 * leaves them free (blocks of 33-56 bytes: their free then touches no
 * line of metadata), else, for a block that fills its slot, in a second
 * parallel array (such blocks of up to 128 bytes take twin classes of
 * their own while the fine classes serve, rt_size_class.h, so that its
 * pages in use hold only theirs).  The runtime's own stores are not
 * instrumented, so none of this is counted as an access.
 *
 * Locking: per-thread caches of free slot indices (initial-exec TLS) serve
 * most malloc/free calls without locks; they refill/drain in batches from a
 * per-class central free list under a per-class mutex.  Blocks larger than
 * the biggest class (or with page-exceeding alignment) are rt_large.c's.
 *
 * What a call reads: the unrecorded small blocks of a sampled run take a
 * fast path (rt_heap.c) that touches the thread's first cache line (state,
 * busy flag, statistics), its bin, the class's record (class_rec: slot 0,
 * size, reciprocal, capacity and state words in one line) and the slot's
 * state word; the tables they are copied from are read by the slow paths.
 */
#ifndef MEMPROF_RT_HEAP_PRIV_H
#define MEMPROF_RT_HEAP_PRIV_H

#include "rt_alloc.h"
#include "rt_size_class.h"
#include "runtime/base/rt_lock.h"

#define REGION_SHIFT 32
#define REGION_SIZE (1ULL << REGION_SHIFT)
#define MAX_USER_SIZE (1ULL << 40)
#define NO_SLOT 0xFFFFFFFFu
/* A slot index plus one fits this many bits (the central lists' batch
 * links, rt_heap_central.c): the 16- and 32-byte classes use only the
 * first 2^27 - 2 slots of their region (2 and 4 GiB). */
#define BATCH_NEXT_BITS 27
#define MAX_SLOTS ((1ULL << BATCH_NEXT_BITS) - 2)

/* What malloc and free read of class c, in one cache line: where its
 * slots start, their state words, how many slots its region holds, and
 * its size class's size, reciprocal and thread-cache capacity (copied
 * from rt_size_class.c's tables when the heap is reserved; none of it is
 * written after). */
typedef struct class_rec {
  uintptr_t start; /* slot 0 */
  uint32_t *state;
  uint64_t recip;
  uint64_t max_slots;
  uint32_t size;
  uint32_t cap;
} __attribute__((aligned(64))) class_rec;
RT_HIDDEN extern class_rec classes[NCLASS];

/* ---- one block ------------------------------------------------------------
 * 4 bytes per slot, plus 8 for a block that fills its slot: the only
 * per-block overhead besides rounding (it keeps peak RSS at or below
 * LLVM's even for tiny blocks).  A slot's state word packs RT_LIVE_BIT |
 * DIRTY_BIT | LEAD_BIT | alloc cpu (11 bits) | requested size (18 bits). */
typedef struct block_meta {
  uint32_t stack; /* ref, see rt_stack_intern */
  uint32_t alloc_ts;
} __attribute__((may_alias)) block_meta;
typedef uint32_t __attribute__((may_alias)) slot_word;
_Static_assert(sizeof(block_meta) <= 32, "block metadata fits the lead");
_Static_assert(sizeof(block_meta) == SLOT_TAIL_META, "the twins' rule (rt_size_class.h)");
#define DIRTY_BIT 0x40000000u /* handed out before: calloc must clear it */
#define LEAD_BIT 0x20000000u  /* the block starts SLOT_LEAD bytes into its slot */
#define SIZE_MASK 0x3FFFFu    /* class sizes are <= 2^17 */
#define CPU_SHIFT 18
#define CPU_MASK 0x7FFu
#define CPU_NONE 0x7FFu /* cpu -1 (before init); larger ids saturate below */
/* A block sampling left unrecorded (rt_sample.h): it has no cpu, and its
 * metadata is neither written nor read (free need not fetch it). */
#define CPU_UNSAMPLED 0x7FEu
#define SLOT_LEAD 32u

static inline uint32_t pack_cpu(uint32_t cpu) {
  return cpu == 0xFFFFFFFFu ? CPU_NONE : cpu < CPU_UNSAMPLED ? cpu : CPU_UNSAMPLED - 1;
}
static inline int unsampled_state(uint32_t st) {
  return ((st >> CPU_SHIFT) & CPU_MASK) == CPU_UNSAMPLED;
}
static inline uint32_t unpack_cpu(uint32_t st) {
  uint32_t c = (st >> CPU_SHIFT) & CPU_MASK;
  return c == CPU_NONE ? 0xFFFFFFFFu : c;
}

/* LEAD_BIT for a block of n bytes, alignment align, in class c: 0 when the
 * lead would not fit or would break alignment.  The block must start
 * inside its slot: a block of 0 bytes 32 bytes into a 32-byte slot would
 * start where the next slot's block does, and its free free that one. */
static inline uint32_t lead_bit(int c, uint64_t n, size_t align) {
  return align <= SLOT_LEAD && classes[c].size > SLOT_LEAD && n + SLOT_LEAD <= classes[c].size
             ? LEAD_BIT
             : 0;
}

static inline uint32_t lead_of(uint32_t st) { return st & LEAD_BIT ? SLOT_LEAD : 0; }

/* The state word of a live block sampling left unrecorded, of `size`
 * bytes with lead bit `lead`. */
static inline uint32_t unrecorded_word(uint32_t lead, uint64_t size) {
  return RT_LIVE_BIT | DIRTY_BIT | lead | CPU_UNSAMPLED << CPU_SHIFT | (uint32_t)size;
}

/* ---- the shared state (rt_heap_layout.c) ---------------------------------- */

/* One class's central free list (rt_heap_central.c) and its population
 * front (rt_heap_populate.c), both under mu. */
typedef struct central {
  rt_mutex mu;
  uint32_t free_head; /* holder of the first batch (see rt_heap_central.c) */
  uint64_t bump;      /* first never-used slot (at most classes[c].max_slots) */
  uint64_t populated; /* slots below this are faulted in (or being) */
  uint64_t prefault_from, prefault_to; /* slots the ticker is to populate; to 0: none */
  char pad[64 - 40];
} central;
_Static_assert(sizeof(central) == 64, "one central record per cache line");

typedef unsigned __int128 class_mask;

typedef struct tc_bin {
  uint32_t n;
  uint32_t slot[TC_MAX];
} tc_bin;

typedef struct heap_counters {
  uint64_t mallocs, frees, bytes_alloc, bytes_freed;
  uint64_t reallocs, bytes_realloc; /* realloc of a live block to n > 0 */
} heap_counters;

/* A free a signal handler could not make at once (rt_heap_nested.c). */
#define DEFER_MAX 64
#define DEFER_DONE UINT32_MAX /* cls of an entry already given back */
typedef struct deferred_free {
  uint32_t cls, slot;
} deferred_free;

/* Everything the allocator keeps per thread, in one initial-exec TLS
 * block: the cache, its place in the registry, and the state of the
 * signal-handler path. */
typedef struct tcache {
  /* what every call reads and writes, in one cache line */
  int state; /* TC_FRESH, TC_REGISTERED or TC_EXITING */
  int busy;  /* in a take, a give or the thread's (un)registration */
  uint32_t n_deferred;
  heap_counters cnt; /* this thread's share of the statistics */
  class_mask held; /* bit c: this thread holds (or is taking) central c's lock */
  tc_bin bin[NCLASS];
  deferred_free deferred[DEFER_MAX];
  struct tcache *next, **pprev; /* registry of live thread caches */
} __attribute__((aligned(64))) tcache;
_Static_assert(__builtin_offsetof(tcache, held) == 64, "the fields every call uses fill line 0");
_Static_assert(NCLASS <= 128, "one bit of tcache.held per class");
enum { TC_FRESH, TC_REGISTERED, TC_EXITING };

RT_HIDDEN extern __thread tcache rt_tc __attribute__((tls_model("initial-exec")));

RT_HIDDEN extern block_meta *xmeta_of_class[NCLASS]; /* blocks that fill their slot */
RT_HIDDEN extern central centrals[NCLASS];
RT_HIDDEN extern int heap_ready;
RT_HIDDEN extern rt_mutex heap_init_mu;

/* Reserves the heap on first use; 0 if there is none (rt_forwarding). */
RT_HIDDEN void rt_heap_init(void);
static inline int heap_ensure(void) {
  if (RT_LIKELY(__atomic_load_n(&heap_ready, __ATOMIC_ACQUIRE)))
    return 1;
  rt_heap_init();
  return __atomic_load_n(&heap_ready, __ATOMIC_ACQUIRE);
}

static inline uintptr_t slot_addr(int c, uint64_t s) {
  return classes[c].start + s * classes[c].size;
}

/* Stack and allocation time of the block in slot s, whose state is st:
 * in the lead, else in the slot's last 8 bytes when the block leaves them
 * free, else out of line. */
static inline block_meta *meta_of(int c, uint32_t s, uint32_t st) {
  if (st & LEAD_BIT)
    return (block_meta *)slot_addr(c, s);
  if ((st & SIZE_MASK) + sizeof(block_meta) <= class_size[c])
    return (block_meta *)(slot_addr(c, s) + class_size[c] - sizeof(block_meta));
  return &xmeta_of_class[c][s];
}

/* ---- central free lists (rt_heap_central.c) ------------------------------- */

/* Up to `want` slots of class c, freed ones in descending order; 0 also
 * when this thread may not wait for the lock and it is taken. */
RT_HIDDEN uint32_t rt_central_take(int c, uint32_t *out, uint32_t want);
/* Gives slots[0..n) back to class c; 0 if not done (the lock may not be
 * waited for). */
RT_HIDDEN int rt_central_put(int c, const uint32_t *slots, uint32_t n);
RT_HIDDEN void rt_central_fork_prepare(void);
RT_HIDDEN void rt_central_fork_parent(void);
RT_HIDDEN void rt_central_fork_child(void);

/* ---- populating (rt_heap_populate.c) -------------------------------------- */

/* Under c's lock, after a take whose never-used slots start at `first`:
 * plans the class's next window; leaves in [*from, *to) what the taking
 * thread is to populate once the lock is released (rt_populate_slots). */
RT_HIDDEN void rt_populate_plan(int c, uint64_t first, uint64_t *from, uint64_t *to);
RT_HIDDEN void rt_populate_slots(int c, uint64_t from, uint64_t to);

/* ---- signal handlers (rt_heap_nested.c) ------------------------------------
 * A thread is busy while its code is inside a take or a give: a signal
 * handler that interrupts it there finds busy set and takes the nested
 * path, which leaves the thread cache alone. */
RT_HIDDEN uint32_t rt_nested_take(int *cls, size_t align);
RT_HIDDEN void rt_nested_give(int c, uint32_t s);
/* Slot s of class c, given back when this thread leaves the allocator. */
RT_HIDDEN void rt_defer_give(int c, uint32_t s);
RT_HIDDEN void rt_drain_deferred(void);

static inline void enter_busy(void) {
  rt_tc.busy = 1;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline void leave_busy(void) {
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  rt_tc.busy = 0;
  if (RT_UNLIKELY(__atomic_load_n(&rt_tc.n_deferred, __ATOMIC_ACQUIRE)))
    rt_drain_deferred();
}

/* ---- thread caches (rt_heap_tcache.c) ------------------------------------- */

/* The slow halves of slot_take and slot_give, called busy. */
RT_HIDDEN uint32_t rt_tcache_take_slow(int c);
RT_HIDDEN void rt_tcache_give_slow(int c, uint32_t s);
RT_HIDDEN void rt_tcache_thread_start(void);
RT_HIDDEN void rt_tcache_sum(heap_counters *sum);
RT_HIDDEN void rt_tcache_count_shared(int is_free, uint64_t size);
RT_HIDDEN void rt_tcache_count_shared_realloc(uint64_t size);
RT_HIDDEN void rt_tcache_fork_prepare(void);
RT_HIDDEN void rt_tcache_fork_parent(void);
RT_HIDDEN void rt_tcache_fork_child(void);

/* A slot of class *cls (a nested call may give a larger class whose size
 * keeps `align`; *cls is updated), or NO_SLOT. */
static inline uint32_t slot_take(int *cls, size_t align) {
  if (RT_UNLIKELY(rt_tc.busy))
    return rt_nested_take(cls, align);
  uint32_t s;
  enter_busy();
  tc_bin *b = &rt_tc.bin[*cls];
  if (RT_LIKELY(rt_tc.state == TC_REGISTERED && b->n))
    s = b->slot[--b->n];
  else
    s = rt_tcache_take_slow(*cls);
  leave_busy();
  return s;
}

static inline void slot_give(int c, uint32_t s) {
  if (RT_UNLIKELY(rt_tc.busy)) {
    rt_nested_give(c, s);
    return;
  }
  enter_busy();
  tc_bin *b = &rt_tc.bin[c];
  if (RT_LIKELY(rt_tc.state == TC_REGISTERED && b->n < classes[c].cap))
    b->slot[b->n++] = s;
  else
    rt_tcache_give_slow(c, s);
  leave_busy();
}

/* count_event for a thread whose cache is registered (the fast paths,
 * rt_heap.c, have checked). */
static inline void count_registered(int is_free, uint64_t size) {
  heap_counters *c = &rt_tc.cnt;
  if (is_free)
    c->frees++, c->bytes_freed += size;
  else
    c->mallocs++, c->bytes_alloc += size;
}

/* Counts one malloc or free in this thread's statistics. */
static inline void count_event(int is_free, uint64_t size) {
  if (RT_UNLIKELY(rt_tc.state != TC_REGISTERED)) {
    rt_tcache_count_shared(is_free, size);
    return;
  }
  count_registered(is_free, size);
}

/* Counts one realloc of a live block to `size` > 0 bytes. */
static inline void count_realloc(uint64_t size) {
  if (RT_UNLIKELY(rt_tc.state != TC_REGISTERED)) {
    rt_tcache_count_shared_realloc(size);
    return;
  }
  rt_tc.cnt.reallocs++;
  rt_tc.cnt.bytes_realloc += size;
}

#endif
