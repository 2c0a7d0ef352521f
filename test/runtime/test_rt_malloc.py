"""test_rt_malloc.py - the C allocation API of the runtime (rt_malloc.c).

Every malloc-family entry point, realloc chains, aligned allocation,
strdup/strndup, free_sized/free_aligned_sized and a large block live at
exit: each site's AllocCount, TotalSize and TotalAccessCount must equal what
the program does to the block (int stores/loads count 1 each; library
functions count ceil(bytes/8)).  The same program linked with LLVM 22's
runtime gives the same numbers except where marked (progs/malloc_family.c,
progs/realloc_growth.c).  A third program (progs/malloc_semantics.c) checks
the API semantics (errno, alignment rules, overflow) against our runtime.
"""
import harness
import rt_common


# marker -> (AllocCount, TotalSize, TotalAccessCount), from the program text.
EXPECTED = {
    "malloc": (1, 40, 3 * 10 + 10),
    "calloc": (1, 40, 2 * 10),          # calloc's zeroing is not counted
    "chain0": (1, 24, 6),
    "chain1": (1, 72, 18),              # realloc's copy is not counted
    "chain2": (1, 8, 2),
    "realloc_null": (1, 40, 20),
    "reallocarray": (1, 40, 10),
    "memalign": (1, 40, 20),
    "aligned_alloc": (1, 200, 50),
    "posix_memalign": (1, 104, 26),
    "valloc": (1, 104, 26),
    "pvalloc": (1, 4096, 1),            # pvalloc records the page-rounded size
    # 24 char stores + strdup's read of 24 bytes (3) + strndup's 10 (2)
    "dup_src": (1, 24, 24 + 3 + 2),
    "strdup": (1, 24, 3),               # strlen(d): 24 bytes -> 3
    "strndup": (1, 11, 1),
    "free_sized": (1, 48, 12),
    "free_aligned_sized": (1, 128, 18),
    "big_live": (1, 1 << 20, 6),        # live at exit
    "small_live": (1, 40, 10),          # live at exit
}

# LLVM 22 omits live secondary-allocator blocks without alignment padding
# from the exit dump (spec 5.3): a leaked 1 MiB malloc is missing.
# Its strndup interceptor has no frame pointer, so the recorded stack skips
# the caller (malloc, strndup, __libc_start_call_main): the site is lost.
LLVM22_MISSING = {"big_live", "strndup"}


class MallocFamily(rt_common.ThreeRuntimes):
    PROG = "malloc_family.c"
    EXPECTED = EXPECTED
    LLVM22 = {name: None for name in LLVM22_MISSING}

    def test_c_driver_links_without_libstdcxx(self):
        exe = harness.compile_program(self.scratch, self.src)
        r = harness.run(["readelf", "-d", exe])
        needed = [l for l in r.stdout.splitlines() if "(NEEDED)" in l]
        self.assertTrue(needed)
        self.assertFalse([l for l in needed if "stdc++" in l], needed)
        r, raws = harness.run_program(self.scratch, exe)
        self.assertEqual(len(raws), 1)


GROW_EXPECTED = {
    # 100 blocks of 8, 16, ... 800 bytes; one store into each (the copies
    # realloc makes are not counted) and 100 loads from the last one
    "grow": (100, 8 * 5050, 100 + 100),
    "big_calloc": (1, 1 << 20, 2),
    "big_realloc": (1, 3 << 20, 3 + 1),
    "big_memalign_live": (1, 1 << 20, 1),
}


class ReallocGrowth(rt_common.MarkedProgram):
    """A realloc chain merged into one site, and secondary-sized blocks:
    calloc zeroing, realloc preserving data, a live aligned 1 MiB block."""
    PROG = "realloc_growth.c"
    EXPECTED = GROW_EXPECTED
    # LLVM 22 reads one shadow cell past a block's end (spec 3.5): the
    # page-aligned 1 MiB block ends on a 64-byte boundary and the cell
    # after it may hold a stale count left by an earlier (freed) block,
    # depending on where its mmap lands: LLVM reports 2 or (like us, and
    # always when run alone) 1.
    LLVM22 = {"big_memalign_live": [(1, 1 << 20, 2), (1, 1 << 20, 1)]}

    def test_ours(self):
        self.check_run()

    def test_llvm22_reference(self):
        self.check_run("llvm")


SEMANTICS_OUT = """\
calloc_overflow 1 1
reallocarray_overflow 1 1
malloc_huge 1 1
aligned_alloc_bad 1 1
aligned_alloc_4096 1 100
posix_memalign_bad 1 1 1
posix_memalign_small 1
posix_memalign_64k 0 1
posix_memalign_huge 1
memalign_round_up 1
valloc 1
pvalloc 1 4096
pvalloc0 4096
malloc0 1
realloc_grow abc 4000
realloc_shrink ab 2
realloc_zero 1
calloc_zero 1
usable_null 0
mallinfo 0 0
mallopt 1 0
malloc_trim 0
strndup hello 6
strdup_empty 0 1
"""


class MallocSemantics(harness.ProfTest):
    def test_api_semantics(self):
        exe = harness.compile_program(self.scratch, rt_common.prog("malloc_semantics.c"),
                                      out="sem",
                                      cflags=["-Wno-deprecated-declarations"])
        r, _ = harness.run_program(self.scratch, exe)
        self.assertEqual(r.stdout.decode(), SEMANTICS_OUT)


if __name__ == "__main__":
    harness.main()
