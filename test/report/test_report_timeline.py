"""`memprof-profdata report` and `show` with a timeline beside the raw
profile (docs/memprof-profdata.md, "Timelines"): progs/phases.c is profiled
once; timelines with known values are written for its raw profile with the
test writer (test/lib/timeline_file.py), naming its contexts by the stack
ids the raw profile gives each block size.  Checked exactly: the summary's
peak and live-at-exit lines, the live-at-peak and live-at-exit tables
(bytes, % and blocks per context, with the report's stacks), the YAML
comments of `show` (which llvm-profdata-22 still reads), DHAT's tg, te,
gb, gbk, eb and ebk per program point (and dh_view.js showing them), two merged processes (a peak each,
exit summed), times from the process's start (the file's StartMs; the raw
clock counts from the whole second the runtime started in, and a start in
the second before is negative), the graph's layers and
legend being the same contexts, the largest at any point, and refusals of damaged and mismatched timelines (the file
and offset named; explicit: an error, found beside: a warning and the
report without it).  The HTML graph is checked in headless Chromium
(skipped, visibly, without it).  End to end, the program run with
MEMPROF_OPTIONS=timeline=1 gives the report its exact peak (hold_a's 4
blocks and leak_c's 2: 41400 bytes) and leaks (leak_c's 1400 bytes)."""
import html
import json
import os
import re
import shutil
import unittest

import harness
import report_common as rc
import timeline_file as tf

PHASES = os.path.join(rc.HERE, "progs", "phases.c")


def timeline(ids, pid=42, peak_t=40, end=250):
    """A timeline of progs/phases.c's shape with round numbers: leak_c's
    blocks live from the start, hold_a's at the peak, hold_b's later."""
    a, b, c = ids[10000], ids[3000], ids[700]
    return {"pid": pid, "raw_bytes": 0, "interval_ms": 10, "end_ms": end, "top_n": 16,
            "start_ms": 10,
            "peak": {"t_ms": peak_t, "ctx": [(a, 40000, 4), (c, 1400, 2)]},
            "exit": {"ctx": [(c, 1400, 2)]},
            "census": [{"t_ms": 10, "other_bytes": 0, "ctx": [(c, 1400, 2)]},
                       {"t_ms": 50, "other_bytes": 100, "ctx": [(a, 40000, 4), (c, 1400, 2)]},
                       {"t_ms": 150, "other_bytes": 0, "ctx": [(b, 9000, 3), (c, 1400, 2)]}]}


def page_data(page):
    """The JSON data of an HTML report."""
    with open(page) as f:
        return json.loads(re.search(r'<script id="data" type="application/json">(.*?)</script>',
                                    f.read(), re.S).group(1))


def legend_of(dom):
    """The labels of the graph's legend, in order."""
    legend = re.search(r'<div class="tllegend">(.*?)</div>', dom, re.S).group(1)
    return [html.unescape(t) for t in re.findall(r"<span>([^<]*)</span>", legend)]


def section(text, title):
    """The rows of the table under the line starting with `title`:
    (bytes, percent, blocks, first frame's function)."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l.startswith(title))
    rows = []
    for l in lines[start + 2:]:
        m = re.match(r"\s+\d+\s+(\d+)\s+([\d.]+%)\s+(\d+)$", l)
        if m:
            rows.append([int(m.group(1)), m.group(2), int(m.group(3)), None])
        elif rows and rows[-1][3] is None and l.strip():
            rows[-1][3] = l.split()[0]
        elif not l.strip():
            break
    return [tuple(r) for r in rows]


class Timeline(harness.ProfTest):
    @classmethod
    def setUpClass(cls):
        cls.shared = harness.Scratch("report-timeline")
        s = cls.shared
        cls.exe = harness.compile_program(s, PHASES, out="phases", opt="-O1")
        _, raws = harness.run_program(s, cls.exe, env=rc.FP_ONLY)
        cls.raw = raws[0]
        prof = harness.read_raw(cls.raw)[0]
        cls.ids = {m["TotalSize"] // m["AllocCount"]: sid for sid, m in prof["mibs"].items()}
        assert sorted(cls.ids) == [700, 3000, 10000], cls.ids
        cls.tl = cls.raw + ".timeline"
        tf.write(cls.tl, timeline(cls.ids))

    @classmethod
    def tearDownClass(cls):
        cls.shared.cleanup()

    def report(self, *args, raw=None, check=True):
        return rc.report(raw or self.raw, f"--profiled-binary={self.exe}", *args, check=check)

    # ---- text -------------------------------------------------------------

    def test_summary_lines(self):
        out = self.report().stdout
        # times from the start (10 ms on the raw clock): peak 40, end 250
        self.assertIn("  peak live heap         40.43 KiB (41400) in 6 blocks at 30 ms of 240 ms\n", out)
        self.assertIn("  live at exit           1.37 KiB (1400) in 2 blocks\n", out)

    def test_times_from_the_start(self):
        # a run of 1.74 s whose clock second began 972 ms before it
        t = timeline(self.ids, peak_t=990, end=2712)
        for c, at in zip(t["census"], (972, 985, 1500)):
            c["t_ms"] = at
        t["start_ms"] = 972
        other = self.scratch.path("late.tl")
        tf.write(other, t)
        out = self.report(f"--timeline={other}").stdout
        self.assertIn("  peak live heap         40.43 KiB (41400) in 6 blocks at 18 ms of 1.74 s\n", out)
        self.assertIn("Live at the peak: 41400 bytes in 6 blocks at 18 ms (pid 42, %s)" % other, out)
        page = self.scratch.path("late.html")
        self.report(f"--timeline={other}", "--format=html", "-o", page)
        p = page_data(page)["tl"]["procs"][0]
        self.assertEqual((p["t"][0], p["peak"][0], p["end"]), (0, 18, 1740))
        # a process that started 28 ms before its clock's second
        t["start_ms"] = -28
        tf.write(other, t)
        out = self.report(f"--timeline={other}").stdout
        self.assertIn("  peak live heap         40.43 KiB (41400) in 6 blocks at 1.02 s of 2.74 s\n", out)
        self.report(f"--timeline={other}", "--format=html", "-o", page)
        p = page_data(page)["tl"]["procs"][0]
        self.assertEqual((p["t"][0], p["peak"][0], p["end"]), (1000, 1018, 2740))

    def test_live_at_peak_table(self):
        out = self.report().stdout
        self.assertIn("Live at the peak: 41400 bytes in 6 blocks at 30 ms (pid 42, %s)" % self.tl, out)
        self.assertEqual(section(out, "Live at the peak"),
                         [(40000, "96.6%", 4, "hold_a"), (1400, "3.4%", 2, "leak_c")])
        # the same stacks as the top-contexts table prints
        self.assertIn("      hold_a  %s:23:" % PHASES, out)

    def test_live_at_exit_table(self):
        out = self.report().stdout
        self.assertIn("Live at exit (never freed): 1400 bytes in 2 blocks\n", out)
        self.assertEqual(section(out, "Live at exit"), [(1400, "100.0%", 2, "leak_c")])

    def test_top_limits_rows(self):
        out = self.report("--top=1").stdout
        self.assertEqual(section(out, "Live at the peak"), [(40000, "96.6%", 4, "hold_a")])
        self.assertIn("  ... 1 more contexts", out)

    def test_explicit_and_none(self):
        other = self.scratch.path("elsewhere.tl")
        t = timeline(self.ids, pid=7, peak_t=45)
        tf.write(other, t)
        out = self.report(f"--timeline={other}").stdout
        self.assertIn("at 35 ms (pid 7, %s)" % other, out)
        out = self.report("--no-timeline").stdout
        self.assertNotIn("Live at the peak", out)
        self.assertNotIn("peak live heap", out)

    def test_without_timeline_unchanged(self):
        raw = self.scratch.path("alone.profraw")
        shutil.copy(self.raw, raw)
        plain = self.report(raw=raw).stdout
        self.assertEqual(plain, self.report("--no-timeline").stdout)
        self.assertNotIn("Live at", plain)

    # ---- a timeline among the inputs (memprof.profraw.* names it too) ------

    def test_timeline_among_inputs_left_out(self):
        r = self.report(self.tl)  # the raw input and its own timeline
        self.assertEqual(r.stderr, "")
        self.assertEqual(r.stdout, self.report().stdout)
        out = self.scratch.path("both.memprofdata")
        r = harness.memprof_profdata("merge", self.raw, self.tl,
                                     f"--profiled-binary={self.exe}", "-o", out)
        self.assertEqual(r.stderr, "")
        alone = self.scratch.path("alone.memprofdata")
        harness.memprof_profdata("merge", self.raw, f"--profiled-binary={self.exe}",
                                 "-o", alone)
        with open(out, "rb") as a, open(alone, "rb") as b:
            self.assertEqual(a.read(), b.read())

    def test_lone_timeline_named(self):
        lone = self.scratch.path("lone.timeline")
        shutil.copy(self.tl, lone)
        r = self.report("--no-timeline", lone)
        self.assertEqual(r.stderr,
                         f"memprof-profdata: warning: {lone}: a timeline, not a profile: "
                         "left out (report and show read a timeline beside its raw "
                         "profile, or given with --timeline=FILE)\n")
        self.assertEqual(r.stdout, self.report("--no-timeline").stdout)
        r = harness.memprof_profdata("merge", lone, "-o", self.scratch.path("x"),
                                     check=False)
        self.assertEqual(r.returncode, 1)
        self.assertTrue(r.stderr.endswith(
            "memprof-profdata: error: no profile among the inputs (only timelines)\n"),
            r.stderr)
        self.assertFalse(os.path.exists(self.scratch.path("x")))

    # ---- show -------------------------------------------------------------

    def test_show_comments_and_llvm_reads_it(self):
        out = rc.harness.memprof_profdata("show", self.raw, f"--profiled-binary={self.exe}").stdout
        self.assertTrue(out.startswith("---\n# peak live heap         40.43 KiB (41400) in 6 blocks"), out[:200])
        self.assertIn("# Live at exit (never freed): 1400 bytes in 2 blocks\n", out)
        yaml = self.scratch.write("show.yaml", out)
        harness.run(["llvm-profdata-22", "merge", yaml, "-o", self.scratch.path("show.memprofdata")])

    # ---- DHAT -------------------------------------------------------------

    def test_dhat_fields(self):
        d = json.loads(self.report("--format=dhat").stdout)
        self.assertEqual(d["tg"], 40)
        self.assertEqual(d["pid"], 42)
        self.assertGreaterEqual(d["te"], 250)
        got = {d["ftbl"][pp["fs"][0]].split(" ")[0]: (pp["gb"], pp["gbk"], pp["eb"], pp["ebk"])
               for pp in d["pps"]}
        self.assertEqual(got, {"hold_a": (40000, 4, 0, 0), "hold_b": (0, 0, 0, 0),
                               "leak_c": (1400, 2, 1400, 2)})

    @unittest.skipUnless(rc.dh_view_js() and rc.chromium(),
                         "valgrind's dh_view.js or chromium is not installed")
    def test_dhat_in_dh_view(self):
        page = rc.dh_view_page(self.scratch, self.report("--format=dhat").stdout)
        r = rc.chromium_run(["--dump-dom", "file://" + page])
        self.assertEqual(rc.console_lines(r.stderr), [])
        text = html.unescape(re.sub(r"<[^>]+>", "", r.stdout))
        self.assertRegex(text, r"t-gmax: 40 ms \(\d+(\.\d+)?% of program duration\)")
        self.assertIn("At t-gmax: 41,400 bytes (100%) in 6 blocks (100%)", text)
        self.assertIn("At t-end:  1,400 bytes (100%) in 2 blocks (100%)", text)
        self.assertIn("At t-gmax: 40,000 bytes (96.62%) in 4 blocks (66.67%)", text)

    def test_dhat_without_timeline_zero(self):
        d = json.loads(self.report("--format=dhat", "--no-timeline").stdout)
        self.assertEqual(d["tg"], 0)
        self.assertEqual({(pp["gb"], pp["gbk"], pp["eb"], pp["ebk"]) for pp in d["pps"]}, {(0, 0, 0, 0)})

    # ---- several processes ----------------------------------------------

    def test_two_processes(self):
        _, raws = harness.run_program(self.scratch, self.exe, env=rc.FP_ONLY)
        second = raws[0]
        t = timeline(self.ids, pid=43, peak_t=55, end=260)
        t["peak"]["ctx"] = [(self.ids[10000], 30000, 3), (self.ids[700], 1400, 2)]
        tf.write(second + ".timeline", t)
        out = self.report(second).stdout
        self.assertIn("  peak per process       (2 processes; peaks of different processes are not added)\n", out)
        self.assertIn("    pid 42               40.43 KiB (41400) in 6 blocks at 30 ms of 240 ms\n", out)
        self.assertIn("    pid 43               30.66 KiB (31400) in 5 blocks at 45 ms of 250 ms\n", out)
        self.assertIn("  live at exit           2.73 KiB (2800) in 4 blocks (summed over the processes)\n", out)
        self.assertEqual(section(out, "Live at exit"), [(2800, "100.0%", 4, "leak_c")])
        peaks = [l for l in out.splitlines() if l.startswith("Live at the peak")]
        self.assertEqual(len(peaks), 2)
        r = self.report(second, "--format=dhat")
        d = json.loads(r.stdout)
        self.assertEqual(d["tg"], 0)
        self.assertIn("several processes' timelines", r.stderr)
        leak = [pp for pp in d["pps"] if d["ftbl"][pp["fs"][0]].startswith("leak_c")][0]
        self.assertEqual((leak["gb"], leak["eb"], leak["ebk"]), (0, 2800, 4))

    def test_one_of_two_inputs(self):
        raw = self.scratch.path("alone.profraw")
        shutil.copy(self.raw, raw)
        out = self.report(raw).stdout
        self.assertIn("  peak live heap         40.43 KiB (41400) in 6 blocks at 30 ms of 240 ms\n", out)
        self.assertIn("  timelines              1 of the 2 raw inputs have one: the others' memory "
                      "over time is unknown\n", out)

    def test_timeline_count_must_match(self):
        r = self.report(f"--timeline={self.tl}", f"--timeline={self.tl}", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("2 --timeline files for 1 raw input", r.stderr)

    # ---- bad timelines ----------------------------------------------------

    def damaged(self, name, data):
        """A copy of the raw profile with `data` as its timeline."""
        raw = self.scratch.path(name)
        shutil.copy(self.raw, raw)
        with open(raw + ".timeline", "wb") as f:
            f.write(data)
        return raw

    def expect_refused(self, raw, pattern):
        """Found beside: a warning and the report without it; given
        explicitly: an error naming the file and the offset."""
        r = self.report(raw=raw)
        self.assertRegex(r.stderr, r"memprof-profdata: warning: " + re.escape(raw + ".timeline") +
                         ": " + pattern + ": the report leaves the timeline out")
        self.assertIn("Top 3 of 3 contexts", r.stdout)
        self.assertNotIn("Live at", r.stdout)
        r = self.report(f"--timeline={raw}.timeline", raw=raw, check=False)
        self.assertEqual(r.returncode, 1)
        self.assertRegex(r.stderr, r"memprof-profdata: error: " + re.escape(raw + ".timeline") + ": " + pattern)
        self.assertEqual(r.stdout, "")

    def test_truncated(self):
        data = tf.encode(timeline(self.ids))
        cut = data[:len(data) * 2 // 3]
        with self.assertRaises(tf.TimelineError) as e:
            tf.decode(cut)
        self.expect_refused(self.damaged("cut.profraw", cut),
                            r"timeline at offset 0x%x: .+" % e.exception.offset)

    def test_not_a_timeline(self):
        self.expect_refused(self.damaged("junk.profraw", b"not a timeline at all\n"),
                            r"timeline at offset 0x0: .*\(bad magic\)")

    def test_other_raw_size(self):
        t = timeline(self.ids)
        t["raw_bytes"] = os.path.getsize(self.raw) + 8
        at = len(tf.MAGIC) + 2 + len(tf.uv(t["pid"]))  # magic, version, flags, pid
        raw = self.damaged("size.profraw", tf.encode(t))
        size = os.path.getsize(self.raw)
        self.expect_refused(raw, r"timeline at offset 0x%x: written for a raw profile of %d bytes, "
                                 r"the raw profile beside it has %d" % (at, size + 8, size))

    def test_unknown_stack_id(self):
        t = timeline(self.ids)
        bogus = max(self.ids.values()) + 1000
        t["exit"]["ctx"].append((bogus, 8, 1))
        raw = self.damaged("other.profraw", tf.encode(t))
        self.expect_refused(raw, r"stack id 0x%016x \(live at exit\) is not in the raw profile %s: "
                                 r"the timeline belongs to another run" % (bogus, re.escape(raw)))

    # ---- HTML -------------------------------------------------------------

    def test_long_run_thinned(self):
        """5000 censuses (at odd ms; the peak at an even one): the page's
        graph keeps 1500 points evenly, plus the peak, which falls between
        two kept censuses, and both ends."""
        a, c = self.ids[10000], self.ids[700]
        t = timeline(self.ids, peak_t=2504, end=12000)
        t["start_ms"] = 1
        t["census"] = [{"t_ms": 1 + 2 * i, "other_bytes": 0, "ctx": [(a, 10000 * (1 + i % 3), 1 + i % 3), (c, 1400, 2)]}
                       for i in range(5000)]
        raw = self.damaged("long.profraw", tf.encode(t))
        page = self.scratch.path("long.html")
        r = self.report("--format=html", "-o", page, raw=raw)
        self.assertEqual(r.stderr, "")
        p = page_data(page)["tl"]["procs"][0]
        # times from the start, at 1 ms
        self.assertEqual(len(p["t"]), 1501)
        self.assertEqual(p["t"][0], 0)
        self.assertEqual(p["t"][-1], 11999)
        self.assertEqual(p["t"], sorted(p["t"]))
        k = p["t"].index(2503)
        self.assertEqual(p["total"][k], 41400)
        self.assertEqual(p["series"][0][k], 40000)

    def test_graph_chooses_by_the_peak_too(self):
        """hold_a holds 96.6% of the peak but is in no census (it lived
        between two): the graph still draws it, first, and its legend
        lists what it draws."""
        a, b, c = self.ids[10000], self.ids[3000], self.ids[700]
        t = timeline(self.ids)
        t["census"] = [{"t_ms": 10, "other_bytes": 0, "ctx": [(c, 1400, 2)]},
                       {"t_ms": 150, "other_bytes": 0, "ctx": [(b, 9000, 3), (c, 1400, 2)]}]
        raw = self.damaged("between.profraw", tf.encode(t))
        page = self.scratch.path("between.html")
        self.report("--format=html", "-o", page, raw=raw)
        d = page_data(page)["tl"]
        self.assertEqual([d["ctx"][g][0].split(" ")[0] for g in d["graph"]], ["hold_a", "hold_b", "leak_c"])
        p = d["procs"][0]
        self.assertEqual(p["series"][0][p["t"].index(30)], 40000)
        if not rc.chromium():
            self.skipTest("chromium is not installed (the page's data checked)")
        dom = rc.chromium_run(["--dump-dom", "file://" + page]).stdout
        graph = re.search(r'<svg[^>]*id="tlgraph0".*?</svg>', dom, re.S).group(0)
        titles = [html.unescape(t) for t in re.findall(r"<polygon[^>]*><title>([^<]*)</title>", graph)]
        self.assertEqual([t.split(" ")[0] for t in titles], ["hold_a", "hold_b", "leak_c", "other"])
        self.assertEqual(legend_of(dom), titles)

    @unittest.skipUnless(rc.chromium(), "chromium is not installed")
    def test_html_graph_renders(self):
        page = self.scratch.path("report.html")
        self.report("--format=html", "-o", page)
        r = rc.chromium_run(["--dump-dom", "file://" + page])
        self.assertEqual(rc.console_lines(r.stderr), [])
        dom = r.stdout
        self.assertRegex(dom, r'<body data-rendered="\d+"')
        graph = re.search(r'<svg[^>]*id="tlgraph0".*?</svg>', dom, re.S).group(0)
        layers = re.findall(r'<polygon points="([^"]*)"[^>]*><title>([^<]*)</title>', graph)
        # hold_a, hold_b and leak_c (largest at any census first), then the rest
        self.assertEqual([t.split(" ")[0] for _, t in layers], ["hold_a", "hold_b", "leak_c", "other"])
        # points: censuses at 10, 50, 150 ms, the peak at 40 ms, exit at 250:
        # each layer's outline has them twice (top, then bottom)
        self.assertEqual([len(p.split()) for p, _ in layers], [10] * 4)
        self.assertIn("peak 40.43 KiB at 30 ms", graph)
        # time runs from the start (10 ms on the raw clock) to the end
        self.assertEqual(re.findall(r">([\d.]+ ms)</text>", graph), ["0 ms", "120 ms", "240 ms"])
        self.assertEqual(legend_of(dom), [t for _, t in layers][:-1] + ["other contexts"])
        table = re.search(r'<table class="live" id="atpeak0">.*?</table>', dom, re.S).group(0)
        cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>.*?</td>", table)]
        self.assertEqual(cells[:4], ["1", "40,000", "96.6%", "4"])
        self.assertTrue(cells[4].startswith("hold_a (phases.c:23:"), cells[4])
        exit_table = re.search(r'<table class="live" id="atexit">.*?</table>', dom, re.S).group(0)
        self.assertIn("<td class=\"n\">1,400</td>", exit_table)
        self.assertIn("peak live heap", dom)
        shot = self.scratch.path("shot.png")
        rc.chromium_run(["--screenshot=" + shot, "--window-size=1200,900", "file://" + page])
        self.assertGreater(os.path.getsize(shot), 10000)


class EndToEnd(harness.ProfTest):
    """progs/phases.c run with our runtime writing its timeline."""

    def test_runtime_timeline_reported(self):
        exe = harness.compile_program(self.scratch, PHASES, out="phases", opt="-O1")
        env = dict(rc.FP_ONLY)
        env["MEMPROF_OPTIONS"] += ":timeline=1:timeline_interval_ms=5"
        _, raws = harness.run_program(self.scratch, exe, env=env)
        raws = [r for r in raws if not r.endswith(".timeline")]
        self.assertEqual(len(raws), 1)
        self.assertTrue(os.path.exists(raws[0] + ".timeline"))
        t = tf.read(raws[0] + ".timeline")
        out = rc.report(raws[0], f"--profiled-binary={exe}").stdout
        start = t["start_ms"]  # the process's start, before its first census
        self.assertEqual(t["start_from"], 1)
        self.assertLessEqual(start, t["census"][0]["t_ms"])
        self.assertLess(t["end_ms"] - start, 1000)
        self.assertRegex(out, r"  peak live heap         40.43 KiB \(41400\) in 6 blocks at %d ms of %d ms\n"
                         % (t["peak"]["t_ms"] - start, t["end_ms"] - start))
        self.assertIn("  live at exit           1.37 KiB (1400) in 2 blocks\n", out)
        self.assertEqual(section(out, "Live at the peak"),
                         [(40000, "96.6%", 4, "hold_a"), (1400, "3.4%", 2, "leak_c")])
        self.assertEqual(section(out, "Live at exit"), [(1400, "100.0%", 2, "leak_c")])
        d = json.loads(rc.report(raws[0], f"--profiled-binary={exe}", "--format=dhat").stdout)
        got = {d["ftbl"][pp["fs"][0]].split(" ")[0]: (pp["gb"], pp["gbk"], pp["eb"], pp["ebk"])
               for pp in d["pps"]}
        self.assertEqual(got, {"hold_a": (40000, 4, 0, 0), "hold_b": (0, 0, 0, 0),
                               "leak_c": (1400, 2, 1400, 2)})
        self.assertEqual(d["tg"], t["peak"]["t_ms"])
        if not rc.chromium():
            self.skipTest("chromium is not installed (text and DHAT checked)")
        page = self.scratch.path("report.html")
        rc.report(raws[0], f"--profiled-binary={exe}", "--format=html", "-o", page)
        r = rc.chromium_run(["--dump-dom", "file://" + page])
        self.assertEqual(rc.console_lines(r.stderr), [])
        graph = re.search(r'<svg[^>]*id="tlgraph0".*?</svg>', r.stdout, re.S).group(0)
        titles = re.findall(r"<polygon[^>]*><title>([^<]*)</title>", graph)
        self.assertEqual(titles[0].split(" ")[0], "hold_a")
        self.assertEqual(titles[-1], "other contexts")
        self.assertIn("peak 40.43 KiB at", graph)


if __name__ == "__main__":
    harness.main()
