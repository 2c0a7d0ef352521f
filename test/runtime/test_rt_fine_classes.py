"""test_rt_fine_classes.py - the fine size classes (fine_classes,
runtime/heap/rt_size_class.h): the class serving small blocks, read off
the distance between consecutive fresh blocks (progs/fine_classes.c).

Preloaded into a program built without -fmemory-profile, blocks of 8, 24,
40, 100 and 200 bytes take the 16-, 32-, 48-, 112- and 224-byte classes,
and a block of 32 bytes, which fills its slot, the 32-byte class's twin,
in another region than the 24-byte block's (fill_classes; with
fill_classes=0 both share the 32-byte class).  With fine_classes=0, with
lazy_shadow=0 (counting from start-up) and in a program linked with
-fmemory-profile, whole 64-byte cells: 64, 64, 64, 128 and 256, the 24-
and 32-byte blocks in one class.  Once a module built with -fmemory-profile is dlopened (its
constructor calls __memprof_init), 24-byte blocks take 64 again.  Blocks
aligned to 32 and 64 bytes keep their alignment in every setting, and a 0-byte block aligned to 32 bytes stays
inside its 32-byte slot (its lead would have put it where the next
slot's block starts, and its free freed that block).
"""
import harness
import rt_common

CHECKS = ["aligned", "ok", "distinct", "ok"]
FINE = ["8:16", "24:32", "40:48", "100:112", "200:224", "fill:apart"] + CHECKS
WHOLE = ["8:64", "24:64", "40:64", "100:128", "200:256", "fill:shared"] + CHECKS


class FineClasses(harness.ProfTest):
    def plain(self):
        exe = self.scratch.path("plain")
        harness.run(["clang-22", "-O0", "-g", rt_common.prog("fine_classes.c"), "-o", exe,
                     "-ldl"])
        return exe

    def preloaded(self, exe, options, args=()):
        r, raws = harness.run_program(self.scratch, exe, list(args), env={
            "LD_PRELOAD": harness.find_built("libmemprof.so"),
            "MEMPROF_OPTIONS": options})
        self.assertEqual(len(raws), 1)
        return r.stdout.decode().split()

    def test_preloaded_fine(self):
        self.assertEqual(self.preloaded(self.plain(), ""), FINE)

    def test_off(self):
        self.assertEqual(self.preloaded(self.plain(), "fine_classes=0"),
                         WHOLE)

    def test_fill_classes_off(self):
        self.assertEqual(self.preloaded(self.plain(), "fill_classes=0"),
                         FINE[:5] + ["fill:shared"] + CHECKS)

    def test_counting_from_start(self):
        self.assertEqual(self.preloaded(self.plain(), "lazy_shadow=0"),
                         WHOLE)

    def test_instrumented_module_loaded(self):
        dso = self.scratch.path("libfine_dso.so")
        harness.run(["clang-22", "-O0", "-g", "-fmemory-profile", "-shared", "-fPIC",
                     rt_common.prog("fine_classes_dso.c"), "-o", dso])
        self.assertEqual(self.preloaded(self.plain(), "", [dso]),
                         FINE + ["24:64"])

    def test_linked_instrumented(self):
        exe = harness.compile_program(self.scratch, rt_common.prog("fine_classes.c"),
                                      out="linked")
        r, raws = harness.run_program(self.scratch, exe)
        self.assertEqual(len(raws), 1)
        self.assertEqual(r.stdout.decode().split(), WHOLE)


if __name__ == "__main__":
    harness.main()
