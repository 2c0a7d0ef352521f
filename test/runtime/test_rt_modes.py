"""test_rt_modes.py - the allocation API under every instrumentation mode.

 - histogram mode (-mllvm -memprof-histogram, inline and with callbacks):
   exact per-granule histogram, saturation at 255;
 - callbacks mode (-mllvm -memprof-use-callbacks) gives the numbers of the
   inline mode for the whole malloc family;
 - threads: blocks allocated on one thread and freed on another, blocks
   allocated by main and written/freed by a thread.
Each is checked against LLVM 22's runtime too where it agrees.  The programs:
progs/histogram.c, progs/malloc_family.c, progs/cross_thread.c.
"""
import harness
import rt_common
import test_rt_malloc


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
    PROG = "histogram.c"
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
    PROG = test_rt_malloc.MallocFamily.PROG
    EXPECTED = test_rt_malloc.MallocFamily.EXPECTED
    LLVM22 = test_rt_malloc.MallocFamily.LLVM22

    def test_ours(self):
        self.check_run(cflags=rt_common.CALLBACKS)

    def test_llvm22_reference(self):
        self.check_run("llvm", cflags=rt_common.CALLBACKS)


class Threads(rt_common.MarkedProgram):
    PROG = "cross_thread.c"
    EXPECTED = THREADS_EXPECTED

    def test_ours(self):
        self.check_run()

    def test_llvm22_reference(self):
        self.check_run("llvm")

if __name__ == "__main__":
    harness.main()
