"""test_rt_heap_layout.py - rt_heap.c's page and free-list handling.

Populating ahead (progs/populate_ahead.c): a class that has handed out 2 MiB of slots keeps the next
256 KiB of slots (and their shadow) populated by madvise, so the program
does not fault page by page.  mincore() shows which pages are resident: the
slots just past the highest block handed out must be (the ticker thread
may do it up to a tick later: the program polls for up to 2 s), the slots
2 MiB further must not (the window is bounded), and a class that handed
out a few KiB gets nothing ahead (small programs pay no memory for it).
Classes over 1 KiB are populated the same way (sqlite's 4.5 KiB pages):
2.25 MiB of 4200-byte blocks leave the slots 128 KiB past the highest
resident.
Without the populating step the first check fails: nothing ever touched
those pages.

The ticker populates the windows that are not needed at once
(test_prefault_is_not_the_programs, progs/prefault.c): a thread that allocates 3 MiB more of
one class, pausing every 16 KiB for 1 ms of small allocations (so that the
ticker keeps up, and stays awake: it sleeps below 256 timestamps a ms),
takes at most a tenth of the minor faults of those pages itself (its own
RUSAGE_THREAD count).  Populated by the allocating thread, as before, its
count is at least the ~860 pages of slots, shadow and state words.

Never-used slots are handed out in address order (test_fresh_slots_in_
address_order), and so are freed ones, whatever order they were freed in
(test_freed_slots_come_back_in_address_order, progs/reuse_order.c): 1024
blocks of the 64-byte class freed in a shuffled order come back, all of
them once, each refill of the thread cache (16 slots) in ascending order,
so fewer than 1/8 of the new blocks sit below the one before them (77 of
1024; handed out in the order they were freed, 521).

Each class's slots start at an offset of their own past the region's 4 GiB
boundary (test_classes_are_staggered, progs/class_offsets.c): the lowest
blocks of the 192-, 384- and 1152-byte classes, less their 32-byte lead,
sit more than 64 KiB past it, at a multiple of 64 bytes, different for
each class, and every block of a class on one grid; with
stagger_classes=0 (test_stagger_classes_off) on the boundary's grid,
within their first 8 slots.
(Blocks aligned beyond 64 bytes keep their alignment: test_rt_malloc.)

Central free lists hold batches of up to 16 slots, listed in one of them
(test_freed_slots_come_back_once, progs/central_batches.c): 96 blocks of the 4 KiB class (its
thread caches refill 8 slots at a time, so none is left unused) freed by a
thread that then exits (its cache drains 8 at a time, then flushes the
rest as one batch) must all come back, once each, to 96 allocations of
another thread (whose refills of 8 split that batch).

Free-list words live in freed blocks: a program that writes to blocks after
freeing them (a use-after-free bug) must not make the allocator hand out
memory outside the class or the same block twice.  The second program
overwrites the link word of 256 freed blocks with an index past every slot,
then allocates 256 blocks again: each must be a distinct live block of the
requested size (malloc_usable_size is 0 for memory that is not a block):
progs/overwritten_links.c.
"""
import harness
import rt_common


class HeapLayout(harness.ProfTest):
    def test_fresh_slots_in_address_order(self):
        # Successive allocations of never-used slots come in address order, one
        # slot apart, as from glibc's top chunk (programs walk their data in the
        # order they built it; a descending order cost jsoncpp ~100 ms).  Three
        # sizes of three classes interleaved, 1000 of each: each size's blocks must
        # ascend slot after slot (slots of 128, 64 and 192 bytes).
        exe = harness.compile_program(self.scratch, rt_common.prog("fresh_order.c"),
                                      out="order", opt="-O1")
        r, _ = harness.run_program(self.scratch, exe)
        self.assertEqual(r.stdout.decode().split(), ["0", "0", "0"])

    def test_freed_slots_come_back_in_address_order(self):
        exe = harness.compile_program(self.scratch, rt_common.prog("reuse_order.c"),
                                      out="reuse_order", opt="-O1")
        r, _ = harness.run_program(self.scratch, exe)
        words = r.stdout.decode().split()
        self.assertEqual(words[0::2], ["descents", "reused", "dup"])
        descents, reused, dup = map(int, words[1::2])
        self.assertEqual((reused, dup), (1024, 0))
        self.assertLess(descents, 1024 // 8, r.stdout.decode())

    def class_phases(self, options):
        """{class size: (set of (address - lead) mod class size, lowest
        block's offset past its region's 4 GiB boundary)} of
        progs/class_offsets.c's blocks."""
        exe = harness.compile_program(self.scratch, rt_common.prog("class_offsets.c"),
                                      out="class_offsets", opt="-O1")
        r, _ = harness.run_program(self.scratch, exe, env={"MEMPROF_OPTIONS": options})
        phases = {}
        for line in r.stdout.decode().splitlines():
            size, *addrs = map(int, line.split())
            cls = {150: 192, 350: 384, 1100: 1152}[size]
            lead = 32 if size + 32 <= cls else 0
            phases[cls] = ({(a - lead) % cls for a in addrs}, min(addrs) - lead)
        return phases

    def test_classes_are_staggered(self):
        # slot 0 of each class sits past the boundary by a multiple of 64
        # bytes of its own (the class's index times an odd number of pages
        # and lines, kept to the alignment its size gives), far beyond the
        # few slots the program's first blocks of the class take
        phases = self.class_phases("")
        for cls, (got, lowest) in phases.items():
            with self.subTest(cls=cls):
                self.assertEqual(len(got), 1, got)
                self.assertEqual(lowest % 64, 0)
                self.assertGreater(lowest, 64 << 10)
        self.assertEqual(len({lowest for _, lowest in phases.values()}), 3, phases)

    def test_stagger_classes_off(self):
        phases = self.class_phases("stagger_classes=0")
        self.assertEqual({cls: got for cls, (got, _) in phases.items()},
                         {192: {0}, 384: {0}, 1152: {0}})
        for cls, (_, lowest) in phases.items():
            self.assertLess(lowest, 8 * cls)

    def populated_ahead(self, options):
        exe = harness.compile_program(self.scratch, rt_common.prog("populate_ahead.c"),
                                      opt="-O1")
        r, _ = harness.run_program(self.scratch, exe, env={"MEMPROF_OPTIONS": options})
        return dict(line.split() for line in r.stdout.decode().splitlines())

    def test_populate_heap_off(self):
        got = self.populated_ahead("populate_heap=0")
        self.assertEqual(got["slots_ahead_128k"], "0")
        self.assertEqual(got["shadow_ahead_128k"], "0")

    def test_growing_class_is_populated_ahead(self):
        got = self.populated_ahead("")
        self.assertEqual(got, {
            "slots_ahead_128k": "1",
            "pages_ahead_128k": "1",
            "shadow_ahead_128k": "1",
            "slots_ahead_2m": "0",
            "shadow_ahead_2m": "0",
            "few_ahead_16k": "0",
        })

    def test_prefault_is_not_the_programs(self):
        # 3 MiB past the 2 MiB from which the 1 KiB class is populated: the main
        # thread's own minor faults meanwhile, and the pages of slots it took.
        exe = harness.compile_program(self.scratch, rt_common.prog("prefault.c"),
                                      out="prefault", opt="-O1")
        r, _ = harness.run_program(self.scratch, exe,
                                   env={"MEMPROF_OPTIONS": "background_thread=1"})
        faults, pages = map(int, r.stdout.decode().split())
        self.assertEqual(pages, 768)
        self.assertLess(faults, pages // 10, r.stdout.decode())

    def test_freed_slots_come_back_once(self):
        exe = harness.compile_program(self.scratch, rt_common.prog("central_batches.c"),
                                      out="reuse", opt="-O1",
                                      ldflags=["-lpthread"])
        r, _ = harness.run_program(self.scratch, exe)
        self.assertEqual(r.stdout.decode().split(), ["reused", "96", "dup", "0"])

    def test_overwritten_free_links_do_not_escape(self):
        exe = harness.compile_program(self.scratch, rt_common.prog("overwritten_links.c"),
                                      out="uaf", opt="-O1")
        r, _ = harness.run_program(self.scratch, exe)
        self.assertEqual(r.stdout.decode().split(), ["wrong", "0", "dup", "0"])


if __name__ == "__main__":
    harness.main()
