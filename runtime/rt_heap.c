/* rt_heap.c - the runtime's own allocator: mp_alloc, mp_free,
 * mp_usable_size, live-block enumeration and allocator statistics.
 *
 * Layout (like sanitizer's SizeClassAllocator64): one NORESERVE reservation
 * split into 4 GiB regions, one per size class.  Every class size is a
 * multiple of 64 and every class's slots start 64-aligned, so each slot is
 * a run of whole 64-byte shadow cells and a block owns its slot's cells
 * alone: counts read at free are exact.  Slot 0 of class c sits c * STAGGER
 * bytes past its region's 4 GiB boundary (stagger_classes): a program's
 * first and longest-lived blocks of every class would otherwise share
 * their address bits below 2^32, and with them the cache sets (which the
 * bits below the page give) and TLB sets (the page number's low bits),
 * as would their shadow cells; the interpreter of lua5.4 ran 1.5x slower
 * fetching its bytecode from such blocks than from glibc's.  Within its slot a block starts
 * SLOT_LEAD (32) bytes in when that still fits the slot and the alignment
 * allows, else at the slot's start: LLVM's runtime puts user data 32 bytes
 * into each 64-aligned chunk (after its header), and programs then see the
 * same cache-line split of their objects under both runtimes (for C++
 * tree nodes it keeps key and value in one line).  The cell count is the
 * same either way.  (Every block at its slot's start, metadata in the
 * slot's last 8 bytes, was measured on jsoncpp: its lookups read one line
 * fewer per node, but its writer then missed on each value's second line,
 * and the program's own code got no faster.)
 * Each slot's state word (live flag, size, cpu) sits out of line in a
 * parallel array, so foreign pointers can be checked without touching
 * them.  A live block's stack ref and allocation time sit in its slot's
 * lead when it has one (most small blocks: the line the program uses
 * anyway, and no page of metadata), else in the slot's last 8 bytes when
 * the block leaves them free (blocks of 33-56 bytes, a fifth of
 * jsoncpp's: its free took 10-15% fewer samples than with them out of
 * line), else, for a block that fills its slot, in a second parallel
 * array.  Free slots on a central list are kept in batches, listed in the
 * first words of one of them (see central free lists).  The
 * runtime's own stores are not instrumented, so none of this is counted
 * as an access.
 *
 * Locking: per-thread caches of free slot indices (initial-exec TLS) serve
 * most malloc/free calls without locks; they refill/drain in batches from a
 * per-class central free list under a per-class mutex.  Blocks larger than
 * the biggest class (or with page-exceeding alignment) are rt_large.c's.
 *
 * The live flag of a block is flipped to 0 by the MIB table under its lock
 * (rt_mib_on_free), which is what makes a concurrent dump see every block
 * exactly once: either live (walked here) or recorded. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/mman.h>

#include "rt_core.h"
#include "rt_lock.h"
#include "rt_size_class.h"

#define REGION_SHIFT 32
#define REGION_SIZE (1ULL << REGION_SHIFT)
#define MAX_USER_SIZE (1ULL << 40)
#define NO_SLOT 0xFFFFFFFFu

/* 4 bytes per slot, plus 8 for a block that fills its slot: the only
 * per-block overhead besides rounding (it keeps peak RSS at or below
 * LLVM's even for tiny blocks).  A slot's state word packs RT_LIVE_BIT |
 * DIRTY_BIT | LEAD_BIT | alloc cpu (11 bits) | requested size (18 bits). */
typedef struct block_meta {
  uint32_t stack; /* ref, see rt_stack_intern */
  uint32_t alloc_ts;
} __attribute__((may_alias)) block_meta;
typedef uint32_t __attribute__((may_alias)) slot_word;
_Static_assert(sizeof(block_meta) <= 32, "block metadata fits the lead");
#define DIRTY_BIT 0x40000000u /* handed out before: calloc must clear it */
#define LEAD_BIT 0x20000000u  /* the block starts SLOT_LEAD bytes into its slot */
#define SIZE_MASK 0x3FFFFu    /* class sizes are <= 2^17 */
#define CPU_SHIFT 18
#define CPU_MASK 0x7FFu
#define CPU_NONE 0x7FFu /* cpu -1 (before init); larger ids saturate below */
#define SLOT_LEAD 32u

static inline uint32_t pack_cpu(uint32_t cpu) {
  return cpu == 0xFFFFFFFFu ? CPU_NONE : cpu < CPU_NONE ? cpu : CPU_NONE - 1;
}
static inline uint32_t unpack_cpu(uint32_t st) {
  uint32_t c = (st >> CPU_SHIFT) & CPU_MASK;
  return c == CPU_NONE ? 0xFFFFFFFFu : c;
}

typedef struct central {
  rt_mutex mu;
  uint32_t free_head; /* holder of the first batch (see batch_words) */
  uint64_t bump; /* first never-used slot */
  uint64_t max_slots;
  uint64_t populated; /* slots below this are faulted in (or being) */
  uint64_t prefault_from, prefault_to; /* slots the ticker is to populate; to 0: none */
  char pad[64 - 48];
} central;

typedef unsigned __int128 class_mask;

typedef struct tc_bin {
  uint32_t n;
  uint32_t slot[TC_MAX];
} tc_bin;
typedef struct heap_counters {
  uint64_t mallocs, frees, bytes_alloc, bytes_freed;
} heap_counters;

/* A free a signal handler could not make at once (see "signal handlers"). */
#define DEFER_MAX 64
#define DEFER_DONE UINT32_MAX /* cls of an entry already given back */
typedef struct deferred_free {
  uint32_t cls, slot;
} deferred_free;

typedef struct tcache {
  tc_bin bin[NCLASS];
  int state; /* 0 fresh, 1 registered for thread exit, 2 thread exiting */
  int busy;  /* in slot_take, slot_give or the thread's (un)registration */
  class_mask held; /* bit c: this thread holds (or is taking) central c's lock */
  uint32_t n_deferred;
  deferred_free deferred[DEFER_MAX];
  heap_counters cnt; /* this thread's share of the statistics */
  struct tcache *next, **pprev; /* registry of live thread caches */
} tcache;
_Static_assert(NCLASS <= 128, "one bit of tcache.held per class");

static uint32_t *state_of_class[NCLASS];
static block_meta *xmeta_of_class[NCLASS]; /* blocks that fill their slot */
static central centrals[NCLASS];
static rt_mutex init_mu = RT_MUTEX_INIT;
static int heap_ready;
static pthread_key_t tc_key;


static __thread tcache tc __attribute__((tls_model("initial-exec")));

/* Statistics: per-thread counters (no shared cache line on the fast path),
 * folded into `retired` when a thread exits. */
static heap_counters retired;
static rt_mutex registry_mu = RT_MUTEX_INIT;
static tcache *registry;

static void counters_add(heap_counters *to, const heap_counters *from) {
  to->mallocs += from->mallocs;
  to->frees += from->frees;
  to->bytes_alloc += from->bytes_alloc;
  to->bytes_freed += from->bytes_freed;
}

static void count_event(int is_free, uint64_t size) {
  heap_counters *c = tc.state == 1 ? &tc.cnt : NULL;
  if (c) {
    if (is_free)
      c->frees++, c->bytes_freed += size;
    else
      c->mallocs++, c->bytes_alloc += size;
    return;
  }
  if (is_free) {
    __atomic_fetch_add(&retired.frees, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&retired.bytes_freed, size, __ATOMIC_RELAXED);
  } else {
    __atomic_fetch_add(&retired.mallocs, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&retired.bytes_alloc, size, __ATOMIC_RELAXED);
  }
}


/* LEAD_BIT for a block of n bytes, alignment align, in class c (see the
 * file comment): 0 when the lead would not fit or would break alignment. */
static inline uint32_t lead_bit(int c, uint64_t n, size_t align) {
  return align <= SLOT_LEAD && n + SLOT_LEAD <= class_size[c] ? LEAD_BIT : 0;
}

static inline uint32_t lead_of(uint32_t st) { return st & LEAD_BIT ? SLOT_LEAD : 0; }

static uintptr_t heap_base, heap_end;
static uintptr_t region_start[NCLASS]; /* slot 0 of each class */

/* An odd number of pages and of cache lines: the classes' first slots
 * spread over the page numbers' low bits and over the lines of a page.
 * 72 classes take at most 5 MiB of their 4 GiB. */
#define STAGGER (17 * 4096 + 47 * 64)

/* Where class c's slots start past its region's boundary: c * STAGGER,
 * down to a multiple of the largest power of two that divides the class
 * size, which is the largest alignment its slots give (rt_class_for_aligned). */
static uint64_t stagger_of(int c) {
  uint64_t grain = class_size[c] & -class_size[c];
  return (uint64_t)c * STAGGER & ~(grain - 1);
}

static inline uintptr_t slot_addr(int c, uint64_t s) {
  return region_start[c] + s * class_size[c];
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

/* ---- lazy initialisation ----------------------------------------------- */

static void tc_thread_exit(void *arg);

static void heap_init(void) {
  mp_init_core(); /* the options, which set the layout */
  rt_mutex_lock(&init_mu);
  if (!heap_ready) {
    rt_size_classes_init();
    uintptr_t base = (uintptr_t)rt_mmap_anon((NCLASS + 1) * REGION_SIZE, 1);
    uint64_t meta_total = 0;
    for (int c = 0; c < NCLASS; c++)
      meta_total += (REGION_SIZE / class_size[c]) * (sizeof(uint32_t) + sizeof(block_meta));
    char *meta = rt_mmap_anon(meta_total, 1);
    if (!base || !meta) {
      rt_report("ERROR: cannot reserve the heap");
      rt_syscall(231, 1, 0, 0);
    }
    /* Each class region and its metadata are touched sparsely: with
     * hugepages every one of them would cost 2 MiB of RSS up front. */
    rt_madvise((void *)base, (NCLASS + 1) * REGION_SIZE, MADV_NOHUGEPAGE);
    rt_madvise(meta, meta_total, MADV_NOHUGEPAGE);
    heap_base = rt_round_up(base, REGION_SIZE);
    heap_end = heap_base + NCLASS * REGION_SIZE;
    for (int c = 0; c < NCLASS; c++) {
      uint64_t skip = rt_flags.stagger_classes ? stagger_of(c) : 0;
      region_start[c] = heap_base + (uint64_t)c * REGION_SIZE + skip;
      uint64_t n = (REGION_SIZE - skip) / class_size[c];
      xmeta_of_class[c] = (block_meta *)meta;
      meta += n * sizeof(block_meta);
      state_of_class[c] = (uint32_t *)meta;
      meta += n * sizeof(uint32_t);
      centrals[c].max_slots = n;
      centrals[c].free_head = NO_SLOT;
    }
    pthread_key_create(&tc_key, tc_thread_exit);
    __atomic_store_n(&heap_ready, 1, __ATOMIC_RELEASE);
  }
  rt_mutex_unlock(&init_mu);
}

static inline void heap_ensure(void) {
  if (MP_UNLIKELY(!__atomic_load_n(&heap_ready, __ATOMIC_ACQUIRE)))
    heap_init();
}

/* ---- central free lists ------------------------------------------------ */

/* The held bit is set before the lock is taken and cleared after it is
 * released, so a signal handler on this thread never waits for a lock its
 * own interrupted code may hold.  Plain read-modify-writes suffice: a
 * handler that runs in between restores every bit it sets. */
static inline void hold_central(int c) {
  tc.held |= (class_mask)1 << c;
  rt_locks_enter();
}

static inline void release_central(int c) {
  rt_locks_leave();
  tc.held &= ~((class_mask)1 << c);
}

/* Takes central c's lock; 0 when this thread must not wait for it and it
 * is taken.  A thread that already holds a runtime lock when it gets here
 * is a signal handler that interrupted the holder: were it to wait, the
 * holder could not run, and a handler on the thread it waits for may be
 * waiting for the lock this one's code holds (two threads flushing their
 * caches, each interrupted in a different class: stress signal_spawn hung
 * so about once in 1700 runs).  Such a call only tries. */
static int lock_central(int c) {
  int may_wait = rt_locks_held == 0;
  hold_central(c);
  if (may_wait)
    rt_mutex_lock(&centrals[c].mu);
  else if (!rt_mutex_trylock(&centrals[c].mu)) {
    release_central(c);
    return 0;
  }
  return 1;
}

/* ---- populating fresh slots ------------------------------------------
 * Every fresh page costs a fault of its own, several microseconds in a
 * guest, and an allocation-heavy program faults in its heap, the heap's
 * metadata and its shadow page by page (jsoncpp: ~50k faults, a third of
 * them ours).  A class that has handed out POPULATE_FROM bytes keeps the
 * next POPULATE_WINDOW bytes of slots, with their state words and shadow,
 * faulted in by one MADV_POPULATE_WRITE, topped up once half of it is used
 * (jsoncpp: 25-35 ms less system time; sqlite, whose 4.5 KiB pages and
 * 1 KiB buffers faulted 7600 pages of slots on its thread: 9923 -> 3674
 * faults, -63 ms paired, faster in 15 of 16, RSS +0.3 MB).  From
 * POPULATE_BG_FROM (256 KiB) on, small classes' windows the ticker can
 * take are populated as well, by it alone: in a guest where a fault costs
 * ~10 us and a populated page ~0.65 us, deep-stack (classes of 0.1-2 MiB
 * each) faulted 3342 pages on its own thread, 1258 with them: -22 ms
 * paired (faster in 30 of 30), for 1.7 MB more peak RSS; jsoncpp -10 ms
 * (12 of 16; the same for its classes over 1 KiB: +11 ms).  Taken by the program's
 * thread, windows below 2 MiB cost deep-stack 3-5 ms in pages never used.
 * Populating never changes memory contents (kernels without it return
 * EINVAL: nothing is lost but the speed).
 *
 * A window the program will only reach later is populated by the ticker
 * thread (rt_background.c), which wakes every millisecond anyway: the page
 * faults then cost the program no wall time while a CPU is free (jsoncpp:
 * 38-78 ms less in four sets of 20-40 paired rounds, about the same CPU
 * time).  Slots a take hands out at once, a ticker that is not running
 * and a class whose last request is still pending are populated by the
 * taking thread, as before. */
#define POPULATE_FROM (2u << 20)
#define POPULATE_BG_FROM (256u << 10)
#define POPULATE_WINDOW (256u << 10)

/* Under c's lock: hands [from, to) to the ticker; 0 if it must be done
 * here.  One request per class at a time: the lock orders the writers,
 * and prefault_to is the handshake with the one reader. */
static int post_prefault(central *ce, uint64_t from, uint64_t to) {
  if (!rt_bg_running() ||
      __atomic_load_n(&ce->prefault_to, __ATOMIC_ACQUIRE))
    return 0;
  ce->prefault_from = from;
  __atomic_store_n(&ce->prefault_to, to, __ATOMIC_RELEASE);
  return 1;
}

/* Under c's lock, after a take whose bumped slots start at `first`: posts
 * the class's next window to the ticker when it can take it, else leaves
 * in [*from, *to) what the taking thread is to populate.  Below
 * POPULATE_FROM windows are the ticker's alone, and only of slots not
 * handed out yet. */
static void plan_populate(int c, uint64_t first, uint64_t *from, uint64_t *to) {
  central *ce = &centrals[c];
  uint64_t window = POPULATE_WINDOW / class_size[c];
  uint64_t used = ce->bump * class_size[c];
  int ticker_only = used < POPULATE_FROM;
  *from = *to = 0;
  if (!rt_flags.populate_heap ||
      used < (c < SMALL_CLASSES ? POPULATE_BG_FROM : POPULATE_FROM) ||
      ce->populated >= ce->bump + window / 2)
    return;
  uint64_t lo = first > ce->populated ? first : ce->populated;
  uint64_t hi = ce->bump + window < ce->max_slots ? ce->bump + window : ce->max_slots;
  if (ticker_only && lo < ce->bump)
    lo = ce->bump;
  if (hi <= lo)
    return;
  if (lo >= ce->bump && post_prefault(ce, lo, hi)) {
    ce->populated = hi;
    return;
  }
  if (ticker_only)
    return;
  *from = lo;
  *to = hi;
  ce->populated = hi;
}

/* Outside the lock: a thread that takes these slots meanwhile faults
 * them in itself, which is all the kernel needs to get right. */
static void populate_slots(int c, uint64_t from, uint64_t to) {
  uintptr_t lo = slot_addr(c, from), hi = slot_addr(c, to);
  rt_populate(lo, hi);
  rt_populate((uintptr_t)&state_of_class[c][from], (uintptr_t)&state_of_class[c][to]);
  rt_shadow_populate(lo, hi - lo);
}

/* On the ticker thread, at every tick: raw syscalls and globals only. */
void rt_heap_prefault(void) {
  if (!__atomic_load_n(&heap_ready, __ATOMIC_ACQUIRE))
    return;
  for (int c = 0; c < NCLASS; c++) {
    central *ce = &centrals[c];
    uint64_t to = __atomic_load_n(&ce->prefault_to, __ATOMIC_ACQUIRE);
    if (to) {
      populate_slots(c, ce->prefault_from, to);
      __atomic_store_n(&ce->prefault_to, 0, __ATOMIC_RELEASE);
    }
  }
}

/* A central list is a stack of batches of up to BATCH_MAX free slots,
 * each written into the first words of one of them, its holder: word 0
 * packs the next batch's holder plus one (0: none) under the batch's size
 * minus one, words 1.. name its other slots.  A take reads one line per
 * batch where a list linked through every slot cost a cold line per slot
 * (sqlite: 86% of central_take's samples were on that load).  The words
 * sit in freed blocks, which a program with a use-after-free bug may
 * overwrite: a word that names no slot handed out before, or a live block,
 * is dropped (that slot, or the rest of the list, is leaked) instead of
 * giving out memory outside the class or twice. */
#define BATCH_MAX 16u      /* 16 words: the smallest slot */
#define BATCH_NEXT_BITS 27 /* a slot index plus one */
_Static_assert(REGION_SIZE / 64 < (1u << BATCH_NEXT_BITS), "slot indices fit");
_Static_assert(BATCH_MAX * sizeof(slot_word) <= 64, "a batch fits the smallest slot");
_Static_assert(BATCH_MAX <= (1u << (32 - BATCH_NEXT_BITS)), "sizes fit");

static inline slot_word *batch_words(int c, uint32_t holder) {
  return (slot_word *)slot_addr(c, holder);
}

static inline uint32_t batch_word0(uint32_t next, uint32_t n) {
  return ((next + 1) & ((1u << BATCH_NEXT_BITS) - 1)) | (n - 1) << BATCH_NEXT_BITS;
}

/* c's lock held. */
static inline int free_slot_ok(int c, uint32_t s) {
  return s < centrals[c].bump &&
         !(__atomic_load_n(&state_of_class[c][s], __ATOMIC_RELAXED) & RT_LIVE_BIT);
}

/* Up to `want` slots off c's list, most recently put first (c's lock
 * held).  A batch taken in part keeps its holder and the slots not taken. */
static uint32_t take_free(int c, uint32_t *out, uint32_t want) {
  central *ce = &centrals[c];
  uint32_t got = 0;
  while (got < want && ce->free_head != NO_SLOT) {
    uint32_t h = ce->free_head;
    slot_word *w = batch_words(c, h);
    uint32_t n = (w[0] >> BATCH_NEXT_BITS) + 1;
    uint32_t next = (w[0] & ((1u << BATCH_NEXT_BITS) - 1)) - 1;
    if (next != NO_SLOT && !free_slot_ok(c, next))
      next = NO_SLOT;
    if (n > BATCH_MAX)
      n = 1;
    for (; n > 1 && got < want; n--)
      if (w[n - 1] != h && free_slot_ok(c, w[n - 1])) {
        /* The walk through every slot's link used to bring each block's
         * first line in, one miss after another; without it the program
         * met them one by one (jsoncpp +38 ms paired), so they are
         * fetched here, all at once. */
        __builtin_prefetch((void *)slot_addr(c, w[n - 1]), 1);
        out[got++] = w[n - 1];
      }
    if (got == want) {
      w[0] = batch_word0(next, n);
      break;
    }
    out[got++] = h;
    ce->free_head = next;
  }
  return got;
}

/* Pushes slots[0..n) as batches (c's lock held); a take gives them back
 * in reverse.  A holder may be a slot never handed out (a thread cache's
 * fresh slots, given back when its thread exits): its words make it dirty,
 * and calloc must then clear it. */
static void put_free(int c, const uint32_t *slots, uint32_t n) {
  central *ce = &centrals[c];
  while (n) {
    uint32_t k = n < BATCH_MAX ? n : BATCH_MAX;
    slot_word *w = batch_words(c, slots[0]);
    __atomic_fetch_or(&state_of_class[c][slots[0]], DIRTY_BIT, __ATOMIC_RELAXED);
    for (uint32_t i = 1; i < k; i++)
      w[i] = slots[i];
    w[0] = batch_word0(ce->free_head, k);
    ce->free_head = slots[0];
    slots += k;
    n -= k;
  }
}

/* Highest first (insertion sort: a refill holds at most TC_MAX / 2). */
static void sort_descending(uint32_t *v, uint32_t n) {
  for (uint32_t i = 1; i < n; i++) {
    uint32_t x = v[i], j = i;
    for (; j > 0 && v[j - 1] < x; j--)
      v[j] = v[j - 1];
    v[j] = x;
  }
}

/* Up to `want` slots of class c; 0 also when the lock is not to be waited
 * for (lock_central).  Never-used slots are listed highest first: the
 * thread cache hands out its last entry first, so a program's successive
 * allocations get ascending addresses, as from glibc's top chunk.  Handed
 * out descending in runs of a refill, jsoncpp's tree walks ran backwards
 * through memory: the whole run took 66 ms longer (paired median of 40
 * rounds), all of it in the program's own code.  Freed slots are listed
 * highest first too, whatever order they were freed in: a program that
 * frees its data in an order of its own (a garbage collector's sweep, a
 * container's teardown) would otherwise get the next data it builds
 * scattered backwards over the freed slots, and walk it that way. */
static uint32_t central_take(int c, uint32_t *out, uint32_t want) {
  central *ce = &centrals[c];
  uint32_t got, freed;
  uint64_t first, fresh, from, to;
  if (!lock_central(c))
    return 0;
  got = freed = take_free(c, out, want);
  first = ce->bump;
  fresh = ce->max_slots - first;
  if (fresh > want - got)
    fresh = want - got;
  for (uint64_t i = fresh; i > 0; i--)
    out[got++] = (uint32_t)(first + i - 1);
  ce->bump = first + fresh;
  plan_populate(c, first, &from, &to);
  rt_mutex_unlock(&ce->mu);
  release_central(c);
  sort_descending(out, freed);
  if (to > from)
    populate_slots(c, from, to);
  return got;
}

/* 0 if not done: the lock is not to be waited for (lock_central). */
static int central_put(int c, const uint32_t *slots, uint32_t n) {
  central *ce = &centrals[c];
  if (!lock_central(c))
    return 0;
  put_free(c, slots, n);
  rt_mutex_unlock(&ce->mu);
  release_central(c);
  return 1;
}

/* ---- signal handlers ----------------------------------------------------
 * malloc and free may run in a signal handler that interrupted its own
 * thread inside the allocator, with the thread cache half updated and
 * maybe a central lock (or the registry lock) held.  Such a call finds the
 * thread busy and takes the nested path: it leaves the thread cache alone,
 * takes a slot from the central list of the class (or, if this thread holds
 * that lock, of a larger class, which holds the block as well), and gives
 * a slot back at once unless this thread holds the class's lock; that free
 * waits in tc.deferred until the interrupted code leaves the allocator.
 * While the interrupted code holds any runtime lock, central locks are
 * only tried (lock_central): a busy class is passed over like a held one,
 * and a give that finds its lock busy is deferred the same way. */
static inline void enter_busy(void) {
  tc.busy = 1;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static void drain_deferred(void);

static inline void leave_busy(void) {
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  tc.busy = 0;
  if (MP_UNLIKELY(__atomic_load_n(&tc.n_deferred, __ATOMIC_ACQUIRE)))
    drain_deferred();
}

/* Handlers that run meanwhile may defer more; each reserves its entry
 * before writing it and runs to completion before this code resumes.  A
 * give that may not wait (lock_central) ends the round: the entries given
 * back are marked, and the next leave_busy goes on. */
static __attribute__((noinline)) void drain_deferred(void) {
  enter_busy();
  for (;;) {
    uint32_t k = __atomic_load_n(&tc.n_deferred, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < k && i < DEFER_MAX; i++) {
      deferred_free *d = &tc.deferred[i];
      if (d->cls == DEFER_DONE)
        continue;
      if (!central_put((int)d->cls, &d->slot, 1))
        goto out;
      d->cls = DEFER_DONE;
    }
    if (__atomic_compare_exchange_n(&tc.n_deferred, &k, 0, 0,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
      break;
  }
out:
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  tc.busy = 0;
}

/* A slot of class *cls, or of a larger class whose size keeps `align`
 * (*cls is updated). */
static __attribute__((noinline)) uint32_t nested_take(int *cls, size_t align) {
  for (int c = *cls; c < NCLASS; c++) {
    uint32_t s;
    if (tc.held >> c & 1 || (align > 64 && class_size[c] & (align - 1)))
      continue;
    if (central_take(c, &s, 1)) {
      *cls = c;
      return s;
    }
  }
  return NO_SLOT;
}

/* Slot s of class c, given back when this thread leaves the allocator. */
static void defer_give(int c, uint32_t s) {
  uint32_t i = __atomic_fetch_add(&tc.n_deferred, 1, __ATOMIC_ACQ_REL);
  if (i < DEFER_MAX)
    tc.deferred[i] = (deferred_free){(uint32_t)c, s};
  /* else the slot is never reused: a storm of handlers freeing while this
   * thread held a lock */
}

static __attribute__((noinline)) void nested_give(int c, uint32_t s) {
  if (tc.held >> c & 1 || !central_put(c, &s, 1))
    defer_give(c, s);
}

/* ---- thread caches ------------------------------------------------------ */

__thread int rt_locks_held __attribute__((tls_model("initial-exec")));

static void tc_register(void) {
  rt_locks_enter();
  rt_mutex_lock(&registry_mu);
  tc.next = registry;
  tc.pprev = &registry;
  if (registry)
    registry->pprev = &tc.next;
  registry = &tc;
  rt_mutex_unlock(&registry_mu);
  rt_locks_leave();
  tc.state = 1;
  pthread_setspecific(tc_key, &tc);
}

static void tc_thread_exit(void *arg) {
  (void)arg;
  if (tc.state != 1)
    return; /* see rt_heap_thread_start */
  enter_busy();
  for (int c = 0; c < NCLASS; c++) {
    central_put(c, tc.bin[c].slot, tc.bin[c].n);
    tc.bin[c].n = 0;
  }
  rt_locks_enter();
  rt_mutex_lock(&registry_mu);
  *tc.pprev = tc.next;
  if (tc.next)
    tc.next->pprev = tc.pprev;
  counters_add(&retired, &tc.cnt);
  rt_mutex_unlock(&registry_mu);
  rt_locks_leave();
  tc.state = 2; /* later frees on this thread bypass the cache */
  leave_busy();
}

/* Threads started through pthread_create register here, first thing.
 * Registering on a thread's first malloc instead could happen after its
 * TSD destructors ran (a signal handler on an exiting thread): the thread
 * would stay in the registry after it is gone, and its TSD slot would
 * outlive it into the next thread glibc builds on the same memory. */
void rt_heap_thread_start(void) {
  heap_ensure();
  if (tc.busy || tc.state != 0)
    return;
  enter_busy();
  tc_register();
  leave_busy();
}

/* A slot of class *cls (a nested call may give a larger class). */
static uint32_t slot_take(int *cls, size_t align) {
  if (MP_UNLIKELY(tc.busy))
    return nested_take(cls, align);
  int c = *cls;
  uint32_t s = NO_SLOT;
  enter_busy();
  if (MP_UNLIKELY(tc.state != 1)) {
    if (tc.state == 2) {
      if (!central_take(c, &s, 1))
        s = NO_SLOT;
      goto out;
    }
    tc_register();
  }
  tc_bin *b = &tc.bin[c];
  if (MP_UNLIKELY(b->n == 0)) {
    b->n = central_take(c, b->slot, tc_cap[c] / 2 ? tc_cap[c] / 2 : 1);
    if (!b->n)
      goto out;
  }
  s = b->slot[--b->n];
out:
  leave_busy();
  return s;
}

static void slot_give(int c, uint32_t s) {
  if (MP_UNLIKELY(tc.busy)) {
    nested_give(c, s);
    return;
  }
  enter_busy();
  if (MP_UNLIKELY(tc.state != 1)) {
    if (tc.state == 2) {
      if (!central_put(c, &s, 1))
        defer_give(c, s);
      goto out;
    }
    tc_register();
  }
  tc_bin *b = &tc.bin[c];
  if (MP_UNLIKELY(b->n == tc_cap[c])) {
    uint32_t half = tc_cap[c] / 2;
    if (!central_put(c, b->slot + b->n - half, half)) {
      defer_give(c, s); /* a handler that may not wait (lock_central) */
      goto out;
    }
    b->n -= half;
  }
  b->slot[b->n++] = s;
out:
  leave_busy();
}

/* ---- public core API --------------------------------------------------- */

static inline int in_heap(uintptr_t p) { return p >= heap_base && p < heap_end; }

/* Index of the slot of class c holding region offset off (< REGION_SIZE). */
static inline uint64_t slot_index(int c, uint64_t off) {
  return (uint64_t)(((unsigned __int128)off * class_recip[c]) >> 64);
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
  uint64_t off = p - region_start[c];
  if (off >= REGION_SIZE)
    return NULL; /* before slot 0 */
  uint64_t i = slot_index(c, off);
  if (i >= __atomic_load_n(&centrals[c].bump, __ATOMIC_RELAXED))
    return NULL;
  *cls = c;
  *slot = (uint32_t)i;
  *into = off - i * class_size[c];
  return &state_of_class[c][i];
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

void *mp_alloc(size_t size, size_t align, int zero, mp_caller caller) {
  heap_ensure();
  if (MP_UNLIKELY(!mp_inited))
    mp_init_core();
  if (align == 0)
    align = 16;
  if (size > MAX_USER_SIZE || (align & (align - 1)))
    return NULL;
  uint64_t stamp = rt_stamp(); /* read while the stack is walked */
  rt_captured cap;
  cap.n = 0;
  if (mp_inited)
    rt_stack_unwind(caller, &cap);
  uint32_t ts = rt_stamp_ms(stamp), cpu = rt_cpu();
  uintptr_t p;
  int c = align <= 64 ? (size <= MAX_CLASS_SIZE ? rt_class_for(size) : -1)
                      : rt_class_for_aligned(size, align);
  uint32_t s = c >= 0 ? slot_take(&c, align) : NO_SLOT;
  if (s != NO_SLOT) {
    uint32_t *w = &state_of_class[c][s];
    uint32_t lead = lead_bit(c, size, align);
    p = slot_addr(c, s) + lead_of(lead);
    rt_shadow_clear(p, size);
    if (zero && (*w & DIRTY_BIT))
      rt_memset((void *)p, 0, size);
    block_meta *m = meta_of(c, s, lead | (uint32_t)size);
    m->stack = rt_stack_intern(&cap);
    m->alloc_ts = ts;
    __atomic_store_n(w,
                     RT_LIVE_BIT | DIRTY_BIT | lead | pack_cpu(cpu) << CPU_SHIFT |
                         (uint32_t)size,
                     __ATOMIC_RELEASE);
  } else {
    p = rt_large_alloc(size, align, rt_stack_intern(&cap), ts, cpu);
    if (!p)
      return NULL;
  }
  count_event(0, size);
  rt_malloc_hooks((void *)p, size);
  return (void *)p;
}

/* Record (if profiling) and mark dead; 0 if it was not live. */
static int retire(uintptr_t p, uint64_t size, uint32_t stack, uint32_t ts,
                  uint32_t cpu, uint32_t *live, uint64_t stamp) {
  if (__atomic_load_n(&rt_recording, __ATOMIC_ACQUIRE)) {
    rt_block b = {p, size, stack, ts, cpu};
    return rt_mib_on_free(&b, live, stamp);
  }
  return rt_claim_live(live);
}

void mp_free(void *ptr) {
  uintptr_t p = (uintptr_t)ptr;
  if (!heap_may_own(p))
    return;
  uint64_t stamp = rt_stamp(); /* read while the block's metadata is fetched */
  if (in_heap(p)) {
    int c;
    uint32_t s, st;
    uint32_t *w = live_class_state(p, &c, &s, &st);
    if (!w)
      return;
    rt_free_hooks(ptr);
    uint64_t size = st & SIZE_MASK;
    const block_meta *m = meta_of(c, s, st);
    if (!retire(p, size, m->stack, m->alloc_ts, unpack_cpu(st), w, stamp))
      return;
    count_event(1, size);
    slot_give(c, s);
    return;
  }
  rt_block b;
  uint32_t *live = rt_large_find(p, &b);
  if (!live)
    return;
  rt_free_hooks(ptr);
  if (!retire(p, b.size, b.stack, b.alloc_ts, b.alloc_cpu, live, stamp))
    return;
  count_event(1, b.size);
  rt_large_release(p);
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

size_t mp_usable_size(const void *ptr) {
  uint64_t n;
  return live_block((uintptr_t)ptr, &n) ? n : 0;
}

/* ---- enumeration, fork, stats ------------------------------------------ */

/* The walk fetches each live block's metadata this many slots ahead: the
 * heap is cold at the exit dump, and each block's lead cost a miss of its
 * own (deep-stack: the walk took ~4 ms, nearly all of it on that load). */
#define WALK_AHEAD 16

void rt_heap_for_each_live(void (*cb)(const rt_block *, void *), void *ctx) {
  if (!__atomic_load_n(&heap_ready, __ATOMIC_ACQUIRE))
    return;
  for (int c = 0; c < NCLASS; c++) {
    uint64_t n = __atomic_load_n(&centrals[c].bump, __ATOMIC_ACQUIRE);
    const uint32_t *state = state_of_class[c];
    for (uint64_t i = 0; i < n; i++) {
      if (i + WALK_AHEAD < n) {
        uint32_t ahead = __atomic_load_n(&state[i + WALK_AHEAD], __ATOMIC_RELAXED);
        if (ahead & RT_LIVE_BIT)
          __builtin_prefetch(meta_of(c, (uint32_t)(i + WALK_AHEAD), ahead));
      }
      uint32_t st = __atomic_load_n(&state[i], __ATOMIC_ACQUIRE);
      if (!(st & RT_LIVE_BIT))
        continue;
      const block_meta *m = meta_of(c, (uint32_t)i, st);
      rt_block b = {slot_addr(c, i) + lead_of(st), st & SIZE_MASK, m->stack,
                    m->alloc_ts, unpack_cpu(st)};
      cb(&b, ctx);
    }
  }
  rt_large_for_each_live(cb, ctx);
}

void rt_heap_fork_prepare(void) {
  rt_mutex_lock(&init_mu);
  rt_mutex_lock(&registry_mu);
  for (int c = 0; c < NCLASS; c++)
    rt_mutex_lock(&centrals[c].mu);
  rt_large_fork_prepare();
}

void rt_heap_fork_parent(void) {
  rt_large_fork_parent();
  for (int c = NCLASS - 1; c >= 0; c--)
    rt_mutex_unlock(&centrals[c].mu);
  rt_mutex_unlock(&registry_mu);
  rt_mutex_unlock(&init_mu);
}

void rt_heap_fork_child(void) {
  rt_mutex_reset(&registry_mu);
  rt_large_fork_child();
  for (int c = 0; c < NCLASS; c++) {
    rt_mutex_reset(&centrals[c].mu);
    centrals[c].prefault_to = 0; /* the child has no ticker yet */
  }
  rt_mutex_reset(&init_mu);
}

void rt_heap_get_stats(rt_heap_stats *s) {
  heap_counters sum;
  rt_mutex_lock(&registry_mu);
  sum = retired;
  for (tcache *t = registry; t; t = t->next)
    counters_add(&sum, &t->cnt);
  rt_mutex_unlock(&registry_mu);
  s->mallocs = sum.mallocs;
  s->frees = sum.frees;
  s->allocated = sum.bytes_alloc;
  s->freed = sum.bytes_freed;
  s->bytes_live = sum.bytes_alloc - sum.bytes_freed;
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
