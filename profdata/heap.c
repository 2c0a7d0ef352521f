/* heap.c - the process heap for one run of the tool (heap.h).
 *
 * Small pages only.  Earlier trees backed the heap with transparent huge
 * pages, watching each input's kernel time to fall back to small pages
 * when the VM host was slow to back them; in the benchmark's order (every
 * merge right after an llvm-profdata-22 run that freed ~100 MB) the first
 * 12 MiB were already small pages and the fallback often came too late.
 * Small pages throughout measured faster there (10 inputs, two sets of 30
 * interleaved rounds: median 58.6 against 67.6 ms and 59.9 against 65.2;
 * 50 inputs: 143.8 against 153.6), with none of the machinery.
 */
#include "heap.h"

#include <malloc.h>

void mp_heap_setup(void) {
  /* Reading a file allocates a few MB and frees them afterwards; keep that
   * memory in the heap for the next file instead of unmapping it and
   * faulting fresh zeroed pages in again. */
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_TOP_PAD, 8 << 20);
  /* The thread that prepares the next input allocates from the same heap
   * rather than from an arena of its own; it makes a few large
   * allocations per file, so the shared lock costs nothing. */
  mallopt(M_ARENA_MAX, 1);
}

