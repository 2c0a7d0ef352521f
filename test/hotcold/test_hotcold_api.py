"""libmemprof-hotcold's entry points, called directly, against the static
archive and the shared object:

* progs/variants.cc: every __hot_cold_t and size-returning form (placement
  by hint, alignment, NULL from nothrow forms, new-handler then
  std::bad_alloc from the others) and every delete form, free() and
  realloc(p, 0) giving each block back (jemalloc's own counters);
* progs/malloc_family.c: the C API's contracts, glibc's internal blocks
  going through the library, a cold block freed in another thread;
* progs/idle.c: short decay and the idle thread releasing freed cold
  pages and advising the rest MADV_COLD (seen in /proc/self/smaps);
* the options: stats_path, help, unknown names and bad values.
"""
import os
import re

import harness
import hc_common as hc


def prog(name):
    return os.path.join(hc.PROGS, name)


@hc.needs_library
class EntryPoints(harness.ProfTest):
    def run_checks(self, src, kind, label):
        exe = hc.build(self.scratch, [prog(src)], f"{label}.{kind}", kind)
        r, _ = harness.run_program(self.scratch, exe, check=False)
        out = r.stdout.decode()
        self.assertEqual(re.findall(r"^FAIL .*$", out, re.M), [])
        m = re.search(rf"^{label}: (\d+) checks, (\d+) failures$", out, re.M)
        self.assertIsNotNone(m, out[-2000:] + r.stderr.decode()[-2000:])
        self.assertEqual((r.returncode, int(m.group(2))), (0, 0))
        return int(m.group(1))

    def test_variants_static(self):
        self.run_checks("variants.cc", "static", "variants")

    def test_variants_shared(self):
        self.run_checks("variants.cc", "shared", "variants")

    def test_malloc_family_static(self):
        self.run_checks("malloc_family.c", "static", "malloc_family")

    def test_malloc_family_shared(self):
        self.run_checks("malloc_family.c", "shared", "malloc_family")


@hc.needs_library
class ColdPages(harness.ProfTest):
    """64 cold blocks of 128 KiB written, every other one freed (4 MiB
    live, 4 MiB free), then 600 ms of sleep."""
    LIVE_KB = 4096
    SLACK_KB = 512  # the arena's metadata and slab headers

    def run_idle(self, options):
        exe = hc.build(self.scratch, [prog("idle.c")], "idle", "static")
        r, _ = harness.run_program(self.scratch, exe, args=["600"],
                                   env={"MEMPROF_HOTCOLD_OPTIONS": options + ":stats=1"})
        w = hc.words(r.stdout.decode())
        self.assertEqual(w["cold"], 1)
        return w, hc.parse_stats(r.stderr.decode())["cold_arena"]

    def assert_live_only(self, rss):
        self.assertGreaterEqual(rss, self.LIVE_KB)
        self.assertLess(rss, self.LIVE_KB + self.SLACK_KB)

    def test_no_decay_no_idle_keeps_freed_pages(self):
        w, arena = self.run_idle("idle_ms=0:cold_decay_ms=-1")
        self.assertGreaterEqual(w["rss_kb"], 2 * self.LIVE_KB)
        self.assertEqual(arena["idle_rounds"], 0)

    def test_zero_decay_releases_at_free(self):
        w, arena = self.run_idle("idle_ms=0:cold_decay_ms=0")
        self.assert_live_only(w["rss_kb"])
        self.assertEqual(w["referenced_kb"], w["rss_kb"])

    def test_idle_thread_releases_freed_pages(self):
        w, arena = self.run_idle("idle_ms=100:cold_decay_ms=-1:advise=0")
        self.assert_live_only(w["rss_kb"])
        self.assertEqual(w["referenced_kb"], w["rss_kb"])
        self.assertGreaterEqual(arena["idle_rounds"], 1)

    def test_idle_thread_advises_cold(self):
        # MADV_COLD deactivates the pages and clears their referenced bits;
        # the kernel may leave a few (16 pages seen under ctest -j2, one run
        # in four), against all of them without the advice (the test above).
        w, arena = self.run_idle("idle_ms=100:cold_decay_ms=-1")
        self.assert_live_only(w["rss_kb"])
        self.assertLess(w["referenced_kb"], self.LIVE_KB // 16)
        self.assertEqual(arena["live_bytes"], self.LIVE_KB * 1024)


@hc.needs_library
class Options(harness.ProfTest):
    def idle_exe(self):
        return hc.build(self.scratch, [prog("idle.c")], "idle", "shared")

    def test_stats_path_writes_path_dot_pid(self):
        exe = self.idle_exe()
        base = self.scratch.path("hc-stats")
        r, _ = harness.run_program(self.scratch, exe, args=["0"],
                                   env={"MEMPROF_HOTCOLD_OPTIONS": f"stats_path={base}"})
        self.assertNotIn("memprof-hotcold:", r.stderr.decode())
        files = [f for f in os.listdir(self.scratch.dir) if f.startswith("hc-stats.")]
        self.assertEqual(len(files), 1)
        with open(self.scratch.path(files[0])) as f:
            st = hc.parse_stats(f.read())
        self.assertEqual(files[0], f"hc-stats.{st['pid']}")
        self.assertEqual((st["hint"][1]["allocs"], st["hint"][1]["bytes"]), (64, 64 << 17))
        self.assertEqual(st["cold_arena"]["allocs"], 64)
        self.assertEqual(st["cold_arena"]["frees"], 32)

    def test_help_lists_every_option(self):
        r, _ = harness.run_program(self.scratch, self.idle_exe(), args=["0"],
                                   env={"MEMPROF_HOTCOLD_OPTIONS": "help=1"})
        listed = re.findall(r"^  (\w+): ", r.stderr.decode(), re.M)
        self.assertEqual(listed, ["cold_arena", "cold_decay_ms", "idle_ms", "advise",
                                  "stats", "stats_path", "cold_reserve_mb", "site_file",
                                  "site_lifetimes"])

    def test_unknown_and_bad_values_are_reported_and_ignored(self):
        r, _ = harness.run_program(
            self.scratch, self.idle_exe(), args=["0"],
            env={"MEMPROF_HOTCOLD_OPTIONS": "nosuch=1,cold_arena=7 help=0 stats=yes"})
        err = r.stderr.decode()
        self.assertIn("memprof-hotcold: nosuch: unknown option", err)
        self.assertIn("memprof-hotcold: cold_arena: bad value", err)
        self.assertNotIn("  cold_arena: ", err)  # help=0 lists nothing
        # cold_arena kept its default (on); stats=yes after them still applied.
        self.assertEqual(hc.parse_stats(err)["cold_arena"]["state"], "on")


if __name__ == "__main__":
    harness.main()
