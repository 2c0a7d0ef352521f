"""test_rt_large_remap.py - realloc of a large block to a large size
resizes its mapping (remap_large=1, the default; rt_large_resize) instead
of copying it into a new one, and the profile cannot tell.

The program: progs/large_realloc.c.  Four threads at once each allocate
256 KiB, grow the block by realloc 12 times by 256 KiB (to 3.25 MiB), then
shrink it 4 times by 512 KiB, storing each new 8-byte word once and loading
every word the block kept once after each realloc (which checks the
contents survived: the program exits 1 if not).  So a block of n bytes
gets n/8 accesses, whatever the runtime does with it:

  @first   4 blocks of 256 KiB
  @grow    48 blocks of 2..13 x 256 KiB (90 x 256 KiB per thread)
  @shrink  16 blocks of 11, 9, 7, 5 x 256 KiB (32 x 256 KiB per thread)

Each site's AllocCount, TotalSize and TotalAccessCount must be exactly
that with the option on and off; the statistics line (atexit=1) must
count all 64 reallocs as resized with it on and none with it off.  The
last two cases cover the blocks sampling leaves unrecorded (resized
without a stack) and the sampled path: contents preserved, the same
resize counts.
"""
import re

import harness
import rt_common

B = 256 << 10
THREADS = 4
EXPECTED = {
    "first": (THREADS, THREADS * B, THREADS * B // 8),
    "grow": (THREADS * 12, THREADS * 90 * B, THREADS * 90 * B // 8),
    "shrink": (THREADS * 4, THREADS * 32 * B, THREADS * 32 * B // 8),
}
RESIZED = re.compile(r"Stats: large blocks resized by realloc \(remap_large\): (\d+)")


def resized(stderr):
    counts = [int(m.group(1)) for m in RESIZED.finditer(stderr.decode())]
    assert len(counts) == 1, stderr
    return counts[0]


class LargeRemap(rt_common.MarkedProgram):
    PROG = "large_realloc.c"
    EXPECTED = EXPECTED

    def profile(self, options):
        sites, r = harness.profile_sites(self.scratch, self.src,
                                         env={"MEMPROF_OPTIONS": "atexit=1:" + options})
        rt_common.assert_sites(self, sites, self.marks, self.EXPECTED)
        self.assertEqual(r.stdout.decode(), "failed 0\n")
        return resized(r.stderr)

    def test_resized_in_place_or_moved(self):
        self.assertEqual(self.profile("remap_large=1"), THREADS * 16)

    def test_copied_with_the_option_off(self):
        self.assertEqual(self.profile("remap_large=0"), 0)

    def run_sampled(self, options):
        exe = harness.compile_program(self.scratch, self.src, out="sampled")
        r, _ = harness.run_program(self.scratch, exe,
                                   env={"MEMPROF_OPTIONS": "atexit=1:" + options})
        self.assertEqual(r.stdout.decode(), "failed 0\n")
        return resized(r.stderr)

    def test_unrecorded_blocks(self):
        # R = 2^31-1: the blocks are (all but surely) unrecorded, and ours
        # (unsampled_to_libc=0), so every realloc resizes an unrecorded block.
        opts = "sample_interval=2147483647:unsampled_to_libc=0"
        self.assertEqual(self.run_sampled(opts + ":remap_large=1"), THREADS * 16)
        self.assertEqual(self.run_sampled(opts + ":remap_large=0"), 0)

    def test_sampled_blocks(self):
        # R = 1 byte: every block is recorded, the path of sampling's draw.
        self.assertEqual(self.run_sampled("sample_interval=1:remap_large=1"), THREADS * 16)
        self.assertEqual(self.run_sampled("sample_interval=1:remap_large=0"), 0)


if __name__ == "__main__":
    harness.main()
