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
 * the development guest a fresh 2 MiB page took 0.2 ms or 4.5-12 ms, while
 * the same memory in 4 KiB pages (which come from recently freed, still
 * backed memory) cost about 0.8 ms per 2 MiB either way.  Which kind a
 * fault gets is not known in advance: each CPU keeps a few recently freed
 * huge pages of its own, so the first faults of a run are often fast when
 * later ones are not, and a probe on another CPU sees another pool.  So
 * the run itself is watched: at each checkpoint (between inputs), the
 * kernel time spent since the last one is compared with the memory the
 * heap gained, and a rate only slow huge pages explain turns the rest of
 * the heap to small pages.
 *
 * The first input is where slow huge pages hurt most: it brings most of a
 * merge's memory before any checkpoint can judge.  So the heap's first
 * SMALL_FIRST bytes are small pages from the start.  Measured on 10-input
 * merges each run right after llvm-profdata (four sets of 40 rounds),
 * that took the median from 0.200, 0.226, 0.212 and 0.202 of
 * llvm-profdata's time to 0.182, 0.189, 0.178 and 0.190, and costs 2-3 ms
 * when huge pages would have come fast.
 */
#include "heap.h"

#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

/* Larger than a merge of big raw profiles peaks at (about 40 MB for 200
 * profiles of 10k contexts), smaller than the mmap threshold below so that
 * it comes from the brk heap. */
#define HUGE_HEAP (56u << 20)
#define HUGE_PAGE ((uintptr_t)2 << 20)
/* Kernel time per MiB of new anonymous memory above which huge pages are
 * taken to come slowly: fast ones cost about 0.1 ms per MiB, slow ones
 * 2.3-6 (see above); the allowance per step covers its other kernel work
 * (mapping and unmapping inputs, about a millisecond). */
#define SLOW_US_PER_MB 1000
#define OTHER_KERNEL_US 2000
/* Steps that gained less than this say too little: they are judged
 * together with the steps after them. */
#define MIN_GAIN ((size_t)4 << 20)
#define SMALL_FIRST ((size_t)12 << 20)

static struct {
  uintptr_t lo, hi;            /* the madvised range, huge-page aligned */
  int small;                   /* the rest of the heap went to small pages */
  int64_t us_per_mb, other_us; /* the threshold */
  int64_t last_sys_us;         /* at the last judged checkpoint; -1 before */
  size_t last_anon;
  int64_t steps;               /* since that checkpoint */
  size_t small_first;          /* small pages at the heap's start */
} heap = {0, 0, 0, SLOW_US_PER_MB, OTHER_KERNEL_US, -1, 0, 0, SMALL_FIRST};

static uintptr_t huge_up(uintptr_t a) {
  return (a + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
}

static void advise_huge(void *start, size_t len) {
  uintptr_t a = huge_up((uintptr_t)start);
  uintptr_t e = ((uintptr_t)start + len) & ~(HUGE_PAGE - 1);
  if (e > a && madvise((void *)a, e - a, MADV_HUGEPAGE) == 0) {
    heap.lo = a;
    heap.hi = e;
  }
}

/* The first huge page of the madvised range above the heap's top (its top
 * chunk is all free above it). */
static uintptr_t free_from(void) {
  struct mallinfo2 mi = mallinfo2();
  uintptr_t from = huge_up((uintptr_t)sbrk(0) - mi.keepcost);
  return from < heap.lo ? heap.lo : from;
}

/* The next `len` bytes the heap will grow into (at most the rest of the
 * madvised range) to small pages. */
static void next_to_small_pages(size_t len) {
  uintptr_t from = free_from();
  if (!len || from >= heap.hi) return;
  if (len > heap.hi - from) len = heap.hi - from;
  madvise((void *)from, len, MADV_NOHUGEPAGE);
}

static void rest_to_small_pages(void) {
  next_to_small_pages(SIZE_MAX);
  heap.small = 1;
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
  next_to_small_pages(heap.small_first);
}

/* Kernel time of the whole process so far, in microseconds. */
static int64_t sys_us(void) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return -1;
  return (int64_t)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec;
}

/* Resident anonymous memory (resident minus file-backed), or 0. */
static size_t anon_bytes(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long size, resident = 0, shared = 0;
  int ok = f && fscanf(f, "%lu %lu %lu", &size, &resident, &shared) == 3;
  if (f) fclose(f);
  return ok && resident > shared
             ? (size_t)(resident - shared) * (size_t)sysconf(_SC_PAGESIZE)
             : 0;
}

void mp_heap_checkpoint(void) {
  if (!heap.hi || heap.small) return;
  int64_t sys = sys_us();
  size_t anon = anon_bytes();
  if (sys < 0 || !anon) return;
  if (heap.last_sys_us >= 0) {
    heap.steps++;
    if (anon < heap.last_anon + MIN_GAIN) return;
    int64_t mb = (int64_t)((anon - heap.last_anon) >> 20);
    int64_t allowed = heap.other_us * heap.steps + heap.us_per_mb * mb;
    if (sys - heap.last_sys_us > allowed) {
      rest_to_small_pages();
      return;
    }
  }
  heap.last_sys_us = sys;
  heap.last_anon = anon;
  heap.steps = 0;
}

void mp_heap_set_small_first(size_t bytes) { heap.small_first = bytes; }

void mp_heap_set_slow_rate(int64_t us_per_mb, int64_t other_us) {
  heap.us_per_mb = us_per_mb;
  heap.other_us = other_us;
}
