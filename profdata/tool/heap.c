/* heap.c - the process heap for one run of the tool (heap.h).
 *
 * Small pages only: transparent huge pages, with a fallback for hosts slow
 * to back them, measured slower than small pages throughout (the fallback
 * often came too late), and needed machinery of their own.
 */
#include "heap.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

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


/* In some guests a page fault costs far more than a page populated by
 * one madvise does, and the tool's heap grows with its inputs
 * until their contexts repeat, plus the inputs read whole, up to three at
 * a time (io.c, main.c).  Twice the inputs' bytes plus the largest
 * input, up to 16 times the largest and PREFILL_MAX, are faulted in up
 * front as one block freed
 * back to the heap (M_TRIM_THRESHOLD keeps it there), from which the run
 * then allocates; past that the heap grows as before. */
#define PREFILL_PER_INPUT_BYTE 2
#define PREFILL_MIN (1u << 20)
#define PREFILL_MAX (48u << 20)
/* Many inputs of one program repeat their contexts: the heap then follows
 * the output, not the inputs' sum, and so does the prefill. */
#define PREFILL_PER_LARGEST_BYTE 16

void mp_heap_prefill(uint64_t input_bytes, uint64_t largest_input) {
  uint64_t want = input_bytes * PREFILL_PER_INPUT_BYTE + largest_input;
  if (want > largest_input * PREFILL_PER_LARGEST_BYTE)
    want = largest_input * PREFILL_PER_LARGEST_BYTE;
  if (want < PREFILL_MIN) return;
  size_t bytes = want < PREFILL_MAX ? (size_t)want : PREFILL_MAX;
  char *p = malloc(bytes);
  if (!p) return;
  uintptr_t lo = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
  uintptr_t hi = ((uintptr_t)p + bytes) & ~(uintptr_t)4095;
  if (hi > lo) madvise((void *)lo, hi - lo, 23 /* MADV_POPULATE_WRITE */);
  free(p);
}
