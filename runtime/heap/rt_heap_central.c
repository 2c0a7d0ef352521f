/* rt_heap_central.c - each size class's central free list: the slots
 * thread caches give back, kept in batches under a per-class lock, and the
 * class's never-used slots (its bump front).  Thread caches refill and
 * drain here in halves of their capacity; a signal handler's call only
 * tries the lock (lock_central).
 */
#include "rt_heap_priv.h"
#include "rt_size_class.h"
#include "runtime/base/rt_lock.h"
#include "runtime/base/rt_state.h"
#include "runtime/record/rt_mibtable.h"

/* The held bit is set before the lock is taken and cleared after it is
 * released, so a signal handler on this thread never waits for a lock its
 * own interrupted code may hold.  Plain read-modify-writes suffice: a
 * handler that runs in between restores every bit it sets. */
static inline void hold_central(int c) {
  rt_tc.held |= (class_mask)1 << c;
  rt_locks_enter();
}

static inline void release_central(int c) {
  rt_locks_leave();
  rt_tc.held &= ~((class_mask)1 << c);
}

/* Takes central c's lock; 0 when this thread must not wait for it and it
 * is taken.  A thread that already holds a runtime lock when it gets here
 * is a signal handler that interrupted the holder: were it to wait, the
 * holder could not run, and a handler on the thread it waits for may be
 * waiting for the lock this one's code holds (two threads flushing their
 * caches, each interrupted in a different class: the stress test
 * signal_spawn hung so, rarely).  Such a call only tries. */
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

/* A central list is a stack of batches of up to BATCH_MAX free slots,
 * each written into the first words of one of them, its holder: word 0
 * packs the next batch's holder plus one (0: none) under the batch's size
 * minus one, words 1.. name its other slots.  A take reads one line per
 * batch where a list linked through every slot cost a cold line per slot
 * (on which a take spent most of its time).  The words
 * sit in freed blocks, which a program with a use-after-free bug may
 * overwrite: a word that names no slot handed out before, or a live block,
 * is dropped (that slot, or the rest of the list, is leaked) instead of
 * giving out memory outside the class or twice.  A batch fills at most
 * its holder: 16 words in a slot of 64 bytes or more, 4 in a 16-byte one
 * (the fine classes, rt_size_class.h). */
#define BATCH_MAX 16u /* 16 words: a 64-byte slot */
_Static_assert(BATCH_MAX * sizeof(slot_word) <= 64, "a batch fits a 64-byte slot");
_Static_assert(BATCH_MAX <= (1u << (32 - BATCH_NEXT_BITS)), "sizes fit");

static inline uint32_t batch_max(int c) {
  uint32_t fit = class_size[c] / (uint32_t)sizeof(slot_word);
  return fit < BATCH_MAX ? fit : BATCH_MAX;
}

static inline slot_word *batch_words(int c, uint32_t holder) {
  return (slot_word *)slot_addr(c, holder);
}

static inline uint32_t batch_word0(uint32_t next, uint32_t n) {
  return ((next + 1) & ((1u << BATCH_NEXT_BITS) - 1)) | (n - 1) << BATCH_NEXT_BITS;
}

/* c's lock held. */
static inline int free_slot_ok(int c, uint32_t s) {
  return s < centrals[c].bump &&
         !(__atomic_load_n(&classes[c].state[s], __ATOMIC_RELAXED) & RT_LIVE_BIT);
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
    if (n > batch_max(c))
      n = 1;
    for (; n > 1 && got < want; n--)
      if (w[n - 1] != h && free_slot_ok(c, w[n - 1])) {
        /* A list linked through every slot brought each block's first
         * line in, one miss after another; without it the program would
         * meet them one by one, so they are fetched here, all at once. */
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
  uint32_t most = batch_max(c);
  while (n) {
    uint32_t k = n < most ? n : most;
    slot_word *w = batch_words(c, slots[0]);
    __atomic_fetch_or(&classes[c].state[slots[0]], DIRTY_BIT, __ATOMIC_RELAXED);
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
 * allocations get ascending addresses, as from glibc's top chunk (handed
 * out descending in runs of a refill, a program's tree walks run backwards
 * through memory, measurably slower in its own code).  Freed slots are listed
 * highest first too, whatever order they were freed in: a program that
 * frees its data in an order of its own (a garbage collector's sweep, a
 * container's teardown) would otherwise get the next data it builds
 * scattered backwards over the freed slots, and walk it that way. */
uint32_t rt_central_take(int c, uint32_t *out, uint32_t want) {
  central *ce = &centrals[c];
  uint32_t got, freed;
  uint64_t first, fresh, from, to;
  if (!lock_central(c))
    return 0;
  got = freed = take_free(c, out, want);
  first = ce->bump;
  fresh = classes[c].max_slots - first;
  if (fresh > want - got)
    fresh = want - got;
  for (uint64_t i = fresh; i > 0; i--)
    out[got++] = (uint32_t)(first + i - 1);
  ce->bump = first + fresh;
  rt_populate_plan(c, first, &from, &to);
  rt_mutex_unlock(&ce->mu);
  release_central(c);
  sort_descending(out, freed);
  if (to > from)
    rt_populate_slots(c, from, to);
  return got;
}

/* 0 if not done: the lock is not to be waited for (lock_central). */
int rt_central_put(int c, const uint32_t *slots, uint32_t n) {
  central *ce = &centrals[c];
  if (!lock_central(c))
    return 0;
  put_free(c, slots, n);
  rt_mutex_unlock(&ce->mu);
  release_central(c);
  return 1;
}

void rt_central_fork_prepare(void) {
  for (int c = 0; c < NCLASS; c++)
    rt_mutex_lock(&centrals[c].mu);
}

void rt_central_fork_parent(void) {
  for (int c = NCLASS - 1; c >= 0; c--)
    rt_mutex_unlock(&centrals[c].mu);
}

/* The child has no background thread yet: pending requests are dropped. */
void rt_central_fork_child(void) {
  for (int c = 0; c < NCLASS; c++) {
    rt_mutex_reset(&centrals[c].mu);
    centrals[c].prefault_to = 0;
  }
}
