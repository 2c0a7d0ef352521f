"""The text report (memprof-profdata report's default): its totals equal
what llvm-profdata-22 reads from the merged profile, contexts are ranked
by each --sort key with demangled names and file:line:col, --by totals
are per function and per file, --base says what grew, what is new and
what is gone, inputs without names are said to be so once and shown by
GUID, an empty profile says it is empty, and bad input gets merge's
message with nothing written."""
import os
import re

import harness
import report_common as rc


def summary_value(text, label):
    m = re.search(r"^  %s\s+(.*)$" % re.escape(label), text, re.M)
    assert m, f"{label!r} not in:\n{text}"
    return m.group(1)


def top_rows(text):
    """(bytes as printed, allocs, [frame lines]) per context row."""
    rows = []
    for line in text.splitlines():
        m = re.match(r"\s+\d+\s+(\S+ \S+)\s+\S+%\s+(\d+)\s", line)
        if m:
            rows.append((m.group(1), int(m.group(2)), []))
        elif rows and line.startswith("      ") and not line.strip().startswith("..."):
            rows[-1][2].append(line.strip())
    return rows


class TextReport(rc.MultiTest):
    def test_summary_totals(self):
        out = rc.report(self.multi.indexed).stdout
        allocs = sum(m["AllocCount"] for m in self.ctx.values())
        size = sum(m["TotalSize"] for m in self.ctx.values())
        never = [m for m in self.ctx.values() if m["TotalAccessCount"] == 0]
        short = [m for m in self.ctx.values() if m["TotalLifetime"] < m["AllocCount"]]
        self.assertEqual(len(self.ctx), 10)
        self.assertEqual(summary_value(out, "contexts"), "10")
        self.assertEqual(summary_value(out, "allocation calls"), "4")
        self.assertEqual(summary_value(out, "allocations"), str(allocs))
        self.assertIn(f"({size})", summary_value(out, "bytes"))
        self.assertTrue(summary_value(out, "never accessed").startswith(
            f"{sum(m['AllocCount'] for m in never)} allocations"))
        self.assertTrue(summary_value(out, "short-lived (< 1 ms)").startswith(
            f"{sum(m['AllocCount'] for m in short)} allocations"))

    def test_same_report_from_raw_input(self):
        from_indexed = rc.report(self.multi.indexed, "--top=0").stdout
        from_raw = rc.report(*self.multi.raws, f"--profiled-binary={self.multi.exe}",
                             "--top=0").stdout
        # the raw profile has every field; the file merged with the full
        # schema too: the same report
        self.assertEqual(from_raw, from_indexed)

    def test_top_contexts_by_each_key(self):
        vals = list(self.ctx.values())
        for key, field in (("bytes", "TotalSize"), ("allocs", "AllocCount")):
            with self.subTest(key=key):
                rows = top_rows(rc.report(self.multi.indexed, f"--sort={key}", "--top=3").stdout)
                self.assertEqual(len(rows), 3)
                best = max(vals, key=lambda m: (m[field], m["TotalSize"]))
                self.assertEqual(rows[0][1], best["AllocCount"])
        rows = top_rows(rc.report(self.multi.indexed, "--sort=lifetime", "--top=1").stdout)
        # the longest-lived: a cold block kept across the sleep
        self.assertEqual(rows[0][1], 1)
        self.assertRegex(rows[0][2][1], r"^(cold_a|cold_b|mid1)")

    def test_names_are_demangled_with_locations(self):
        rows = top_rows(rc.report(self.multi.indexed, "--top=1").stdout)
        frames = rows[0][2]
        self.assertEqual(rows[0][0], "64.00 KiB")
        src = rc.MULTI
        self.assertEqual([f.split("  ")[0] for f in frames],
                         ["mixed_site(unsigned long)", "mid1(unsigned long)", "top_a()", "main"])
        self.assertRegex(frames[0], re.escape(src) + r":22:\d+$")
        self.assertRegex(frames[2], re.escape(src) + r":47:\d+$")

    def test_by_function_and_file(self):
        out = rc.report(self.multi.indexed, "--by=function", "--top=0").stdout
        rows = {m.group(3): (int(m.group(1)), int(m.group(2)))
                for m in re.finditer(r"^\s+\d+\s+\S+ \S+\s+\S+%\s+(\d+)\s+(\d+)\s+\S+ \S+\s+(.+)$",
                                     out, re.M)}
        mixed = [m for s, m in self.ctx.items() if any(
            f[0] == harness.llvm_guid("_Z10mixed_sitem") for f in s)]
        self.assertEqual(rows["mixed_site(unsigned long)"],
                         (sum(m["AllocCount"] for m in mixed), len(mixed)))
        self.assertEqual(rows["main"], (sum(m["AllocCount"] for m in self.ctx.values()), 10))
        out = rc.report(self.multi.indexed, "--by=file").stdout
        self.assertIn(rc.MULTI, out)

    def test_base_diff(self):
        both = self.scratch.path("both.memprofdata")
        # a second run of the same program: every context doubles
        _, raws2 = harness.run_program(self.multi.scratch, self.multi.exe,
                                          env=rc.FP_ONLY)
        harness.memprof_profdata("merge", self.multi.raws[0], raws2[0],
                                 f"--profiled-binary={self.multi.exe}", "-o", both)
        out = rc.report(both, f"--base={self.multi.indexed}").stdout
        self.assertRegex(out, r"contexts\s+10 -> 10: 0 new, 0 gone \(0 B\), 10 grew, 0 shrank")
        # against the demo's profile: all new, all of the demo's gone
        demo = rc.Profiled(self.scratch, rc.HOTCOLD, full_schema=False)
        out = rc.report(self.multi.indexed, f"--base={demo.indexed}").stdout
        self.assertRegex(out, r"contexts\s+2 -> 10: 10 new, 2 gone \(1\.24 MiB\), 0 grew, 0 shrank")

    def test_no_names_said_once(self):
        llvm = self.scratch.path("llvm.prof")
        harness.run(["llvm-profdata-22", "merge", *self.multi.raws,
                     f"--profiled-binary={self.multi.exe}", "-o", llvm])
        r = rc.report(llvm, "--top=1")
        self.assertEqual(r.stdout.count("no function names"), 1)
        self.assertEqual(r.stderr, "")
        guid = "0x%016x" % harness.llvm_guid("_Z10mixed_sitem")
        self.assertIn(guid, r.stdout)
        r = rc.report(llvm, "--format=folded")
        self.assertEqual(r.stderr.count("no function names"), 1)

    def test_uninstrumented_program_has_no_verdicts(self):
        # linked with our runtime but not compiled with -fmemory-profile:
        # lifetimes and sizes, no access at all
        obj, exe = self.scratch.path("u.o"), self.scratch.path("u")
        harness.run(["clang++-22", "-O1", "-g", "-fno-omit-frame-pointer", "-c", rc.MULTI,
                     "-o", obj])
        harness.run(["clang++-22", obj, "-o", exe, "-Wl,--whole-archive",
                     harness.find_built("libmemprof.a"), "-Wl,--no-whole-archive",
                     "-lpthread", "-ldl", "-lm"])
        _, raws = harness.run_program(self.scratch, exe, env=rc.FP_ONLY)
        out = rc.report(*raws, f"--profiled-binary={exe}", "--top=0",
                        "--memprof-ave-lifetime-cold-threshold=1").stdout
        # the runtime's note says so (docs/raw-format.md section 7), and
        # nothing made of access counts is shown: no never-accessed line,
        # no verdict section, no density, accesses or verdict column
        self.assertIn("Note: Not instrumented (preloaded): no access counts; no hot/cold "
                      "verdicts.\n", out)
        body = out.split("\n\n", 1)[1]
        # the summary names the program (whose folder is named for this test)
        self.assertIn(f"\n  program                {exe}\n", body)
        body = body.replace(exe, "")
        for absent in ("never accessed", "clang-22", "density", "accesses", "verdict"):
            self.assertNotIn(absent, body)
        self.assertIn("\n     #        bytes      %     allocs   avg size    avg life\n", out)
        rows = re.findall(r"^\s+\d+\s+\S+ \S+\s+\S+%\s+\d+\s+\S+ \S+\s+\S+ m?s$", out, re.M)
        # the program's 10 contexts, and, the libraries of an uninstrumented
        # program being found by build id, 2 made inside them: libstdc++'s
        # exception pool (named) and printf's stdout buffer
        self.assertEqual(len(rows), 12)
        self.assertRegex(out, r"\n      \[libstdc\+\+ exception pool: allocated by libstdc\+\+ before main"
                              r"[^\n]*\]\n      libstdc\+\+\.so\.6\+0x[0-9a-f]+ +\?\n")
        by_file = rc.report(*raws, f"--profiled-binary={exe}", "--by=file").stdout
        self.assertIn("\n     #        bytes      %     allocs  contexts  file\n", by_file)
        # with access counts, the same thresholds give real verdicts
        out = rc.report(self.multi.indexed, "--top=0",
                        "--memprof-ave-lifetime-cold-threshold=1").stdout
        self.assertNotIn("recorded no access", out)
        verdicts = re.findall(r"^\s+\d+\s+\S+ \S+\s+\S+%.*?  (cold|notcold|hot)\b", out, re.M)
        self.assertEqual(sorted(verdicts), ["cold"] * 3 + ["notcold"] * 7)

    def test_empty_profile(self):
        empty = self.scratch.write("empty.yaml", "---\nHeapProfileRecords:\n...\n")
        r = rc.report(empty)
        self.assertEqual(r.stdout, "The profile is empty: it has no allocation contexts.\n")
        r = rc.report(empty, "--format=pprof", "-o", self.scratch.path("e.pb.gz"))
        self.assertIn("the profile is empty", r.stderr)

    def test_bad_input_is_merges_message(self):
        bad = self.scratch.write("bad.profraw", "garbage")
        out = self.scratch.write("out.txt", "old contents")
        m = harness.memprof_profdata("merge", bad, check=False)
        for fmt in ("text", "html", "pprof"):
            with self.subTest(fmt=fmt):
                r = rc.report(bad, f"--format={fmt}", "-o", out, check=False)
                self.assertEqual(r.returncode, 1)
                self.assertEqual(r.stderr, m.stderr)
                with open(out) as f:
                    self.assertEqual(f.read(), "old contents")
                self.assertEqual([n for n in os.listdir(self.scratch.dir) if ".tmp" in n], [])
        r = rc.report(self.multi.indexed, "--base=" + bad, check=False)
        self.assertEqual((r.returncode, r.stderr), (1, m.stderr))

    def test_bad_options(self):
        for args, msg in ((["--format=xml"], "invalid value 'xml' for --format"),
                          (["--sort=size"], "invalid value 'size' for --sort"),
                          (["--memprof-ave-lifetime-cold-threshold=x"], "invalid value 'x'"),
                          (["--memprof-use-hot-hints=maybe"], "invalid value 'maybe'")):
            with self.subTest(args=args):
                r = rc.report(self.multi.indexed, *args, check=False)
                self.assertEqual(r.returncode, 1)
                self.assertIn(msg, r.stderr)


class Wording(harness.ProfTest):
    """Paths as people write them, and counts with their grammar."""

    def profile(self, prog):
        exe = harness.compile_program(self.scratch, os.path.join(rc.HERE, "progs", prog))
        _, (raw,) = harness.run_program(self.scratch, exe, env=rc.FP_ONLY)
        return raw, f"--profiled-binary={exe}"

    def test_paths_have_no_dot_dot(self):
        raw, binary = self.profile("strings.cc")
        for args in ((), ("--by=file",), ("--format=html",)):
            with self.subTest(args=args):
                out = rc.report(raw, binary, "--top=0", *args).stdout
                self.assertIn("include/c++/", out)
                self.assertNotIn("/../", out)
        # the symbolized profile itself keeps DWARF's path: only reports
        # show the lexical one
        shown = harness.memprof_profdata("show", raw, binary, "--symbolized").stdout
        self.assertIn("/../", shown)

    def test_one_allocation_is_singular(self):
        raw, binary = self.profile("one_untouched.c")
        out = rc.report(raw, binary).stdout
        self.assertEqual(summary_value(out, "never accessed"),
                         "1 allocation, 64 B in 1 context")


if __name__ == "__main__":
    harness.main()
