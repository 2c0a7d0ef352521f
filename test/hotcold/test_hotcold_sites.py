"""libmemprof-hotcold's call-site file (site_file=PATH, site_lifetimes=1):
progs/sites.cc makes known hinted allocations at three call sites, the
cold one from 4 threads at once; the file must say exactly those counts
and bytes per site, its lifetimes must cover the 100 ms the cold blocks
were kept and count the blocks still live at exit, and each site's
address, symbolized in the binary (llvm-symbolizer-22), must be the
function that makes the call.  No file without the option.
"""
import glob
import os

import harness
import hc_common as hc

COLD_BYTES = 1000 * 32 * (1 + 2 + 3 + 4)  # 4 threads x 1000 of (t+1) x 32


@hc.needs_library
class SiteFile(harness.ProfTest):
    def run_sites(self, kind, options):
        exe = hc.build(self.scratch, [os.path.join(hc.PROGS, "sites.cc")],
                       f"sites.{kind}", kind, cflags=["-pthread", "-fno-optimize-sibling-calls"])
        base = self.scratch.path("counts")
        env = {"MEMPROF_HOTCOLD_OPTIONS": f"site_file={base}:idle_ms=0" + options}
        r, _ = harness.run_program(self.scratch, exe, env=env)
        self.assertEqual(r.stderr.decode(), "")
        files = glob.glob(base + ".*")
        self.assertEqual(files, [f"{base}.{self.pid_of(files)}"])
        with open(files[0]) as f:
            return exe, hc.parse_site_file(f.read())

    def pid_of(self, files):
        self.assertEqual(len(files), 1, files)
        return files[0].rsplit(".", 1)[1]

    def by_function(self, exe, parsed):
        return {hc.symbolize(exe, s["address"] - 1): s for s in parsed["sites"]}

    def check_counts(self, exe, parsed):
        h = parsed["header"]
        self.assertEqual((h["modules"], h["sites"], h["dropped_allocs"],
                          h["dropped_bytes"]), (1, 3, 0, 0))
        (m,) = parsed["modules"]
        self.assertEqual(m["path"], os.path.realpath(exe))
        self.assertEqual(m["build_id"], harness.gnu_build_id(exe))
        sites = self.by_function(exe, parsed)
        self.assertEqual(sorted(sites), ["aligned_site", "cold_site", "warm_site"])
        want = {"cold_site": (1, 4000, COLD_BYTES, 0, 0),
                "aligned_site": (0, 5, 320, 0, 0),
                "warm_site": (128, 0, 0, 10, 1000)}
        for name, w in want.items():
            s = sites[name]
            self.assertEqual((s["hint"], s["cold_allocs"], s["cold_bytes"],
                              s["other_allocs"], s["other_bytes"]), w, name)
        self.assertEqual(parsed["total"], {"cold_allocs": 4005,
                                           "cold_bytes": COLD_BYTES + 320,
                                           "other_allocs": 10, "other_bytes": 1000})
        return sites

    def check_lifetimes(self, sites):
        cold, aligned, warm = (sites[k] for k in ("cold_site", "aligned_site", "warm_site"))
        self.assertEqual((cold["freed"], cold["live"]), (4000, 0))
        self.assertEqual((aligned["freed"], aligned["live"]), (5, 0))
        self.assertEqual((warm["freed"], warm["live"]), (7, 3))
        # the cold blocks lived the 100 ms their thread slept, at least
        self.assertGreaterEqual(cold["lifetime_min_ns"], 100_000_000)
        self.assertLess(cold["lifetime_max_ns"], 60_000_000_000)
        self.assertGreaterEqual(cold["lifetime_total_ns"], 4000 * cold["lifetime_min_ns"])
        self.assertLessEqual(cold["lifetime_total_ns"], 4000 * cold["lifetime_max_ns"])
        # aligned blocks were freed at once: far under the cold ones
        self.assertLess(aligned["lifetime_max_ns"], cold["lifetime_min_ns"])

    def test_counts_and_lifetimes_static(self):
        exe, parsed = self.run_sites("static", ":site_lifetimes=1")
        self.assertEqual(parsed["header"]["lifetimes"], 1)
        self.check_lifetimes(self.check_counts(exe, parsed))

    def test_counts_and_lifetimes_shared(self):
        exe, parsed = self.run_sites("shared", ":site_lifetimes=1")
        self.check_lifetimes(self.check_counts(exe, parsed))

    def test_counts_without_lifetimes(self):
        exe, parsed = self.run_sites("static", "")
        self.assertEqual(parsed["header"]["lifetimes"], 0)
        for s in self.check_counts(exe, parsed).values():
            self.assertNotIn("freed", s)

    def test_nothing_written_unless_asked(self):
        exe = hc.build(self.scratch, [os.path.join(hc.PROGS, "sites.cc")],
                       "sites", "static", cflags=["-pthread", "-fno-optimize-sibling-calls"])
        before = sorted(os.listdir(self.scratch.dir))
        r, _ = harness.run_program(self.scratch, exe,
                                   env={"MEMPROF_HOTCOLD_OPTIONS": "site_lifetimes=1"})
        self.assertEqual(r.stderr.decode(), "")
        self.assertEqual(sorted(os.listdir(self.scratch.dir)), before)


if __name__ == "__main__":
    harness.main()
