/* rt_heap_layout.c - the allocator's address layout and shared state: one
 * reservation holding a 4 GiB region per size class, the per-slot state
 * words and out-of-line metadata, the per-class central records and the
 * per-thread record, reserved on first use (rt_heap_priv.h has the
 * design). */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/mman.h>

#include "rt_alloc.h"
#include "rt_heap.h"
#include "rt_heap_priv.h"
#include "rt_size_class.h"
#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_lock.h"
#include "runtime/base/rt_state.h"
#include "runtime/base/rt_sys.h"
#include "runtime/record/rt_shadow.h"

__thread tcache rt_tc __attribute__((tls_model("initial-exec")));

uintptr_t heap_base, heap_end;
class_rec classes[NCLASS];
block_meta *xmeta_of_class[NCLASS];
central centrals[NCLASS];
int heap_ready;
rt_mutex heap_init_mu = RT_MUTEX_INIT;

/* An odd number of pages and of cache lines: the classes' first slots
 * spread over the page numbers' low bits and over the lines of a page.
 * 88 classes take at most 7 MiB of their 4 GiB. */
#define STAGGER (17 * 4096 + 47 * 64)

/* Where class c's slots start past its region's boundary: c * STAGGER,
 * down to a multiple of the largest power of two that divides the class
 * size, which is the largest alignment its slots give (rt_class_for_aligned). */
static uint64_t stagger_of(int c) {
  uint64_t grain = class_size[c] & -class_size[c];
  return (uint64_t)c * STAGGER & ~(grain - 1);
}

/* Slots of class c past its stagger, at most MAX_SLOTS (a batch link's
 * reach, rt_heap_priv.h). */
static uint64_t slots_of(int c) {
  uint64_t skip = rt_flags.stagger_classes ? stagger_of(c) : 0;
  uint64_t n = (REGION_SIZE - skip) / class_size[c];
  return n < MAX_SLOTS ? n : MAX_SLOTS;
}

/* Reserves the regions and their metadata (never touched until used) and
 * places each class in its region. */
static void reserve(void) {
  uintptr_t base = (uintptr_t)rt_mmap_anon((NCLASS + 1) * REGION_SIZE, 1);
  uint64_t meta_total = 0;
  for (int c = 0; c < NCLASS; c++)
    meta_total += slots_of(c) * (sizeof(uint32_t) + sizeof(block_meta));
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
    uint64_t n = slots_of(c);
    classes[c].start = heap_base + (uint64_t)c * REGION_SIZE + skip;
    classes[c].recip = class_recip[c];
    classes[c].size = class_size[c];
    classes[c].cap = tc_cap[c];
    classes[c].max_slots = n;
    xmeta_of_class[c] = (block_meta *)meta;
    meta += n * sizeof(block_meta);
    classes[c].state = (uint32_t *)meta;
    meta += n * sizeof(uint32_t);
    centrals[c].free_head = NO_SLOT;
  }
}

void rt_heap_whole_cells(void) { rt_size_classes_whole_cells(); }

void rt_heap_init(void) {
  rt_init_core(); /* the options, which set the layout */
  if (__atomic_load_n(&rt_forwarding, __ATOMIC_ACQUIRE))
    return; /* no heap: rt_heap.c forwards */
  rt_mutex_lock(&heap_init_mu);
  if (!heap_ready) {
    /* fine classes only where no code counts (rt_size_class.h) */
    rt_size_classes_init(rt_flags.fine_classes && !rt_counting_load(), rt_flags.fill_classes);
    reserve();
    __atomic_store_n(&heap_ready, 1, __ATOMIC_RELEASE);
  }
  rt_mutex_unlock(&heap_init_mu);
}
