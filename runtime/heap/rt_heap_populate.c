/* rt_heap_populate.c - faulting in a growing class's next slots ahead of
 * the program (populate_heap).
 *
 * Every fresh page costs a fault of its own, several microseconds in a
 * guest, and an allocation-heavy program faults in its heap, the heap's
 * metadata and its shadow page by page.  A class that has handed out
 * POPULATE_FROM bytes keeps the next POPULATE_WINDOW bytes of slots, with
 * their state words and shadow, faulted in by one MADV_POPULATE_WRITE,
 * topped up once half of it is used.  From POPULATE_BG_FROM on, small
 * classes' windows are populated as well, by the background thread alone:
 * taken by the program's thread, such small windows cost more in pages
 * never used than the faults they save.  Populating never changes memory
 * contents (kernels without it return EINVAL: nothing is lost but the
 * speed).
 *
 * A window the program will only reach later is populated by the
 * background thread (background_thread=1, rt_background.c), whose faults
 * then cost the program no wall time while a CPU is free.  Slots a take
 * hands out at once, a background thread that is not running and a class
 * whose last request is still pending are populated by the taking thread.
 */
#include "rt_heap.h"
#include "rt_heap_priv.h"
#include "rt_size_class.h"
#include "runtime/base/rt_background.h"
#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_sys.h"
#include "runtime/record/rt_shadow.h"

#define POPULATE_FROM (2u << 20)
#define POPULATE_BG_FROM (256u << 10)
#define POPULATE_WINDOW (256u << 10)

/* Under c's lock: hands [from, to) to the background thread; 0 if it must
 * be done here.  One request per class at a time: the lock orders the
 * writers, and prefault_to is the handshake with the one reader. */
static int post_prefault(central *ce, uint64_t from, uint64_t to) {
  if (!rt_bg_running() ||
      __atomic_load_n(&ce->prefault_to, __ATOMIC_ACQUIRE))
    return 0;
  ce->prefault_from = from;
  __atomic_store_n(&ce->prefault_to, to, __ATOMIC_RELEASE);
  return 1;
}

/* Below POPULATE_FROM windows are the background thread's alone, and only
 * of slots not handed out yet. */
void rt_populate_plan(int c, uint64_t first, uint64_t *from, uint64_t *to) {
  central *ce = &centrals[c];
  uint64_t window = POPULATE_WINDOW / class_size[c];
  uint64_t used = ce->bump * class_size[c];
  int bg_only = used < POPULATE_FROM;
  *from = *to = 0;
  if (!rt_flags.populate_heap ||
      used < (c < SMALL_CLASSES ? POPULATE_BG_FROM : POPULATE_FROM) ||
      ce->populated >= ce->bump + window / 2)
    return;
  uint64_t lo = first > ce->populated ? first : ce->populated;
  uint64_t max = classes[c].max_slots;
  uint64_t hi = ce->bump + window < max ? ce->bump + window : max;
  if (bg_only && lo < ce->bump)
    lo = ce->bump;
  if (hi <= lo)
    return;
  if (lo >= ce->bump && post_prefault(ce, lo, hi)) {
    ce->populated = hi;
    return;
  }
  if (bg_only)
    return;
  *from = lo;
  *to = hi;
  ce->populated = hi;
}

/* Outside the lock: a thread that takes these slots meanwhile faults
 * them in itself, which is all the kernel needs to get right. */
void rt_populate_slots(int c, uint64_t from, uint64_t to) {
  uintptr_t lo = slot_addr(c, from), hi = slot_addr(c, to);
  rt_populate(lo, hi);
  rt_populate((uintptr_t)&classes[c].state[from], (uintptr_t)&classes[c].state[to]);
  rt_shadow_populate(lo, hi - lo);
}

/* On the background thread, at every tick: raw syscalls and globals only. */
void rt_heap_prefault(void) {
  if (!__atomic_load_n(&heap_ready, __ATOMIC_ACQUIRE))
    return;
  for (int c = 0; c < NCLASS; c++) {
    central *ce = &centrals[c];
    uint64_t to = __atomic_load_n(&ce->prefault_to, __ATOMIC_ACQUIRE);
    if (to) {
      rt_populate_slots(c, ce->prefault_from, to);
      __atomic_store_n(&ce->prefault_to, 0, __ATOMIC_RELEASE);
    }
  }
}
