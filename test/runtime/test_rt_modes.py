"""test_rt_modes.py - the allocation API under every instrumentation mode.

 - histogram mode (-mllvm -memprof-histogram, inline and with callbacks):
   exact per-granule histogram, saturation at 255;
 - callbacks mode (-mllvm -memprof-use-callbacks) gives the numbers of the
   inline mode for the whole malloc family;
 - threads: blocks allocated on one thread and freed on another, blocks
   allocated by main and written/freed by a thread.
Each is checked against LLVM 22's runtime too where it agrees.
"""
import harness
import rt_common
import test_rt_malloc

HIST = r"""
#include <stdlib.h>
#include <string.h>
static void *(*volatile p_memset)(void *, int, size_t) = memset;
__attribute__((noinline)) static void st(volatile int *p, int i, int k) {
  for (int r = 0; r < k; r++)
    p[i] = r;
}
int main(void) {
  int *p = malloc(40); // @hist40
  st(p, 0, 300);
  st(p, 2, 7);
  st(p, 6, 1);
  st(p, 8, 2);
  st(p, 9, 4);
  free(p);
  char *q = malloc(104); // @hist104
  for (int i = 0; i < 104; i++)
    q[i] = (char)i;
  st((int *)q, 25, 250);
  free(q);
  int *live = malloc(24); // @hist_live
  st(live, 1, 9);
  st(live, 5, 3);
  char *m = malloc(104); // @hist_memset_libc
  p_memset(m, 1, 104);
  free(m);
  char *n = malloc(104); // @hist_memset_intrinsic
  memset(n, 1, 104);
  free(n);
  return 0;
}
"""

# marker -> (TotalSize, histogram); TotalAccessCount = sum(histogram).
HIST_EXPECTED = {
    # granule 0: 300 stores saturate at 255; ints 8 and 9 share granule 4
    "hist40": (40, [255, 7, 0, 1, 2 + 4]),
    # 8 char stores per granule, plus 250 int stores at byte 100 (granule
    # 12): 8 + 250 saturates at 255
    "hist104": (104, [8] * 12 + [255]),
    "hist_live": (24, [9, 0, 3]),
    # range accesses (libc interceptor, compiler intrinsic) count one per
    # 8-byte granule in histogram mode
    "hist_memset_libc": (104, [1] * 13),
    "hist_memset_intrinsic": (104, [1] * 13),
}

# LLVM 22 counts ranges with the default-mode increment even in histogram
# mode (spec 3.6): the 13 increments of a 104-byte range land on the first
# granule of each 64-byte block.  Its blocks start at p % 64 == 32, so the
# increments for p .. p+24 (4) land on the header granule at p - 32, those
# for p+32 .. p+88 (8) on granule 4 and the one for p+96 on granule 12.
LLVM22_HIST_DIFF = {
    "hist_memset_libc": (104, [0, 0, 0, 0, 8] + [0] * 7 + [1], 9),
    "hist_memset_intrinsic": (104, [0, 0, 0, 0, 8] + [0] * 7 + [1], 9),
}

THREADS = r"""
#include <pthread.h>
#include <stdlib.h>
__attribute__((noinline)) static void st(volatile int *p, int n, int k) {
  for (int r = 0; r < k; r++)
    for (int i = 0; i < n; i++)
      p[i] = i;
}
static int *from_thread[4];
static int *from_main[4];
static void *worker(void *arg) {
  long t = (long)arg;
  int *mine = malloc(40); // @thread_alloc
  st(mine, 10, 2);
  from_thread[t] = mine;
  st(from_main[t], 18, 1);
  free(from_main[t]);
  int *local = malloc(104); // @thread_local
  st(local, 26, 1);
  free(local);
  return 0;
}
int main(void) {
  pthread_t th[4];
  for (long t = 0; t < 4; t++) {
    from_main[t] = malloc(72); // @main_alloc
    st(from_main[t], 18, 2);
  }
  for (long t = 0; t < 4; t++)
    pthread_create(&th[t], 0, worker, (void *)t);
  for (int t = 0; t < 4; t++)
    pthread_join(th[t], 0);
  for (int t = 0; t < 4; t++) {
    st(from_thread[t], 10, 1);
    free(from_thread[t]);
  }
  return 0;
}
"""

# marker -> (AllocCount, TotalSize, TotalAccessCount), 4 threads.
THREADS_EXPECTED = {
    "thread_alloc": (4, 4 * 40, 4 * (20 + 10)),   # freed by main
    "main_alloc": (4, 4 * 72, 4 * (36 + 18)),     # freed by the threads
    "thread_local": (4, 4 * 104, 4 * 26),
}


HIST_FLAGS = ["-mllvm", "-memprof-histogram"]


def hist_sites(size_hist):
    """marker -> (size, histogram[, total]): the total defaults to the sum."""
    return {n: (1, v[0], v[2] if len(v) > 2 else sum(v[1]), v[1])
            for n, v in size_hist.items()}


class Histogram(rt_common.MarkedProgram):
    PROG = HIST
    SRC_NAME = "hist.c"
    EXPECTED = hist_sites(HIST_EXPECTED)
    LLVM22 = hist_sites(LLVM22_HIST_DIFF)

    def test_ours_inline(self):
        self.check_run(cflags=HIST_FLAGS)

    def test_ours_callbacks(self):
        self.check_run(cflags=HIST_FLAGS + rt_common.CALLBACKS)

    def test_llvm22_reference(self):
        self.check_run("llvm", cflags=HIST_FLAGS)

    def test_llvm22_reference_callbacks(self):
        self.check_run("llvm", cflags=HIST_FLAGS + rt_common.CALLBACKS)


class Callbacks(rt_common.MarkedProgram):
    """-memprof-use-callbacks: the malloc-family program of test_rt_malloc
    gives exactly the inline numbers."""
    PROG = test_rt_malloc.PROG
    EXPECTED = test_rt_malloc.MallocFamily.EXPECTED
    LLVM22 = test_rt_malloc.MallocFamily.LLVM22

    def test_ours(self):
        self.check_run(cflags=rt_common.CALLBACKS)

    def test_llvm22_reference(self):
        self.check_run("llvm", cflags=rt_common.CALLBACKS)


class Threads(rt_common.MarkedProgram):
    PROG = THREADS
    SRC_NAME = "threads.c"
    EXPECTED = THREADS_EXPECTED

    def test_ours(self):
        self.check_run()

    def test_llvm22_reference(self):
        self.check_run("llvm")

if __name__ == "__main__":
    harness.main()
