"""test_rt_large_pages.py - rt_large.c populates large blocks ahead of the
program, within bounds.

A large block (over 128 KiB) gets its first 256 KiB and their shadow
populated at allocation (populate_large=1, the default); while the ticker
runs (background_thread=1, follow_large=1), it then follows the program: once any probed cell of the second half of the last window has a
non-zero access count, the next window (twice the last, up to 8 MiB) is
populated.

The program: progs/large_pages.c.
test_filling_a_block_is_not_faulted_by_the_program: a thread fills an
8 MiB block front to back in 64 KiB steps, pausing after each for 1 ms of
small allocations (which keeps the ticker awake and gives it its tick).
Its own minor faults over the fill (RUSAGE_THREAD) must stay under a tenth
of the block's 2048 pages; faulting them itself (as glibc's malloc and
LLVM's runtime let it) costs 2048 plus 256 of shadow.

test_untouched_blocks_stay_small: the pages of a block resident by
mincore() are bounded by what the program touched.  A 64 MiB block never
touched: exactly its 64 head pages.  One whose first 1 MiB (256 pages) is
filled, paced as above: the windows reach 256 + 512 + 1024 KiB, 448
pages, never more than twice what was touched plus the head.
"""
import harness
import rt_common


class LargePages(harness.ProfTest):
    def run_prog(self, options):
        exe = harness.compile_program(self.scratch, rt_common.prog("large_pages.c"),
                                      out="large_pages", opt="-O1")
        r, _ = harness.run_program(self.scratch, exe, env={"MEMPROF_OPTIONS": options})
        return {k: int(v) for k, v in
                (line.split() for line in r.stdout.decode().splitlines())}

    def test_filling_a_block_is_not_faulted_by_the_program(self):
        out = self.run_prog("background_thread=1")
        self.assertLess(out["filled"], 2048 // 10, out)

    def test_follow_large_off(self):
        # The program faults in what it fills beyond the head itself.
        out = self.run_prog("background_thread=1:follow_large=0")
        self.assertGreaterEqual(out["filled"], 2048 - 64, out)
        self.assertEqual(out["touched_1m"], 256, out)

    def test_untouched_blocks_stay_small(self):
        out = self.run_prog("background_thread=1")
        self.assertEqual(out["untouched"], 64, out)
        self.assertGreaterEqual(out["touched_1m"], 256, out)
        self.assertLessEqual(out["touched_1m"], 448, out)

    def test_default_populates_the_head_only(self):
        out = self.run_prog("")
        self.assertEqual(out["untouched"], 64, out)
        self.assertEqual(out["touched_1m"], 256, out)

    def test_populate_large_off(self):
        out = self.run_prog("populate_large=0")
        self.assertEqual(out["untouched"], 0, out)
        self.assertEqual(out["touched_1m"], 256, out)


if __name__ == "__main__":
    harness.main()
