/* heap.c - the process heap for one run of the tool (heap.h).
 *
 * A merge touches every byte it allocates once or twice, so with 4 KiB
 * pages a quarter of a one-input merge went to page faults (one per page,
 * thousands of them).  Backing the heap with 2 MiB pages turns those into
 * a handful.  The kernel gives huge pages only to ranges madvised for them
 * (transparent_hugepage "madvise" mode, the common default), and the heap
 * grows with brk in small steps, so the heap is grown once up front and
 * that range is madvised; it stays in the heap because it is never
 * trimmed.  Untouched parts cost address space only.  Where the kernel
 * refuses, nothing changes but the speed.
 *
 * Huge pages are not always cheap.  In a virtual machine whose host takes
 * back the guest's free 2 MiB blocks (free page reporting, ballooning), a
 * huge page the host no longer backs costs it 512 faults of its own: on
 * the development guest a fresh 2 MiB page took 0.2 ms in one phase and
 * 4.5-12 ms in another, while the same memory in 4 KiB pages (which come
 * from recently freed, still backed memory) cost about 0.8 ms per 2 MiB in
 * both.  So while the first input is opened and keyed, a helper thread
 * faults in the heap it is about to fill, one huge page at a time and
 * timed (mp_heap_warm_start), and the first slow page turns the rest of
 * the heap to small pages for the rest of the run.
 */
#include "heap.h"

#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "helper.h"

/* Larger than a merge of big raw profiles peaks at (about 40 MB for 200
 * profiles of 10k contexts), smaller than the mmap threshold below so that
 * it comes from the brk heap. */
#define HUGE_HEAP (56u << 20)
#define HUGE_PAGE ((uintptr_t)2 << 20)
/* A huge page that takes longer than this to fault in is one the host has
 * to back first (fast ones took 0.12-0.64 ms, slow ones 4.5 ms or more). */
#define SLOW_HUGE_NS 1500000
static int64_t slow_huge_ns = SLOW_HUGE_NS;

static struct {
  uintptr_t lo, hi;    /* the madvised range, huge-page aligned */
  uintptr_t populated; /* [lo, populated) is faulted in */
  int stopped; /* no more warming: huge pages came slowly (the rest of the
                  heap is small pages now) or the kernel cannot populate */
  pthread_t warmer;
  int warming;
} heap;

static void advise_huge(void *start, size_t len) {
  uintptr_t a = ((uintptr_t)start + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
  uintptr_t e = ((uintptr_t)start + len) & ~(HUGE_PAGE - 1);
  if (e > a && madvise((void *)a, e - a, MADV_HUGEPAGE) == 0) {
    heap.lo = heap.populated = a;
    heap.hi = e;
  }
}

void mp_heap_setup(void) {
  /* Reading a file allocates a few MB and frees them afterwards; keep that
   * memory in the heap for the next file instead of unmapping it and
   * faulting fresh zeroed pages in again. */
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_TOP_PAD, 8 << 20);
  /* The thread that prepares the next input allocates from the same
   * (huge-page) heap rather than from an arena of its own; it makes a few
   * large allocations per file, so the shared lock costs nothing. */
  mallopt(M_ARENA_MAX, 1);
  void *p = malloc(HUGE_HEAP);
  if (!p) return;
  advise_huge(p, HUGE_HEAP);
  free(p);
}

/* The end of the heap's used part: its top chunk is all free above it. */
static uintptr_t heap_top(void) {
  struct mallinfo2 mi = mallinfo2();
  return (uintptr_t)sbrk(0) - mi.keepcost;
}

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Fault in the huge page at heap.populated; 0 if that was slow (the rest
 * of the heap is then small pages) or could not be done. */
static int populate_one(void) {
  int64_t t0 = now_ns();
  if (madvise((void *)heap.populated, HUGE_PAGE, MADV_POPULATE_WRITE) != 0)
    return 0; /* a kernel without MADV_POPULATE_WRITE: faults as they come */
  int slow = now_ns() - t0 > slow_huge_ns;
  heap.populated += HUGE_PAGE;
  if (slow && heap.populated < heap.hi)
    madvise((void *)heap.populated, heap.hi - heap.populated,
            MADV_NOHUGEPAGE);
  return !slow;
}

/* Fault in the huge pages of the next `bytes` of heap while they come
 * fast; at the first slow one the rest of the heap goes to small pages. */
static void warm(size_t bytes) {
  if (!heap.hi || heap.stopped) return;
  uintptr_t top = heap_top();
  /* A top below the range is the small-page start of the heap; one far
   * below or past it is not glibc's heap (a sanitizer's malloc). */
  if (top < heap.lo - HUGE_PAGE || top >= heap.hi) return;
  uintptr_t want = heap.hi - top > bytes ? top + bytes : heap.hi;
  if (heap.populated < top)
    heap.populated = top & ~(HUGE_PAGE - 1); /* below: faulted by use */
  while (heap.populated < want)
    if (!populate_one()) {
      heap.stopped = 1;
      break;
    }
}

static void *warm_thread(void *arg) {
  warm((size_t)(uintptr_t)arg);
  return NULL;
}

void mp_heap_warm_start(size_t bytes) {
  if (!heap.hi || heap.warming || !bytes) return;
  heap.warming = mp_helper_start(&heap.warmer, warm_thread,
                                 (void *)(uintptr_t)bytes) == 0;
}

void mp_heap_warm_finish(void) {
  if (!heap.warming) return;
  pthread_join(heap.warmer, NULL);
  heap.warming = 0;
}

void mp_heap_set_slow_ns(int64_t ns) { slow_huge_ns = ns; }
