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
 */
#include "heap.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

/* Larger than a merge of big raw profiles peaks at (about 40 MB for 200
 * profiles of 10k contexts), smaller than the mmap threshold below so that
 * it comes from the brk heap. */
#define HUGE_HEAP (56u << 20)
#define HUGE_PAGE ((uintptr_t)2 << 20)

static void advise_huge(void *start, size_t len) {
  uintptr_t a = ((uintptr_t)start + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
  uintptr_t e = ((uintptr_t)start + len) & ~(HUGE_PAGE - 1);
  if (e > a) madvise((void *)a, e - a, MADV_HUGEPAGE); /* a hint only */
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
