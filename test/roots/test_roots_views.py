"""Who holds the memory in the report's other formats, on the census of
progs/roots_prog.c (run with "census": one census on demand, one at
exit) whose figures test_roots.py checks against the program's structure
and LeakSanitizer:

* HTML: the page's data ("roots") holds exactly the text report's exit
  census (roots, contexts, leaked and still reachable rows), the page
  renders the same lines in headless Chromium, and the graph of retained
  bytes by root over the two censuses has exact layers; the graph of
  progs/roots_bands_time.c, whose sets of roots sharing blocks change over
  four censuses, has a layer per set, exact per census, in the data and
  as drawn;
* pprof: `go tool pprof` reads the retained and leaked sample types with
  the exact bytes, by function and by root label;
* DHAT: eb/ebk are the blocks live at exit, or with --dhat-at-end=leaked
  the leaked ones, exact per program point, and dh_view.js renders them.
* two runs reported together: a census per process on the page, the
  processes summed in pprof and DHAT.

Consumers that are missing skip their class, visibly."""
import html
import json
import os
import re
import shutil
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "report"))
import harness  # noqa: E402
import report_common as rc  # noqa: E402
import roots_file as rf  # noqa: E402

SRC = harness.prog_path(__file__, "roots_prog.c")

# At exit (test_roots.py's AT_EXIT): root -> (retained bytes, blocks,
# reached bytes, blocks); retained by one root 3914, shared 128, leaked
# 492 of 4534 live bytes.
ROOTS = {
    "cache (app)": (3000, 5, 3000, 5),
    "interior (app)": (400, 1, 400, 1),
    "removed_buf (app)": (250, 1, 250, 1),
    "my_named_root (named)": (200, 1, 200, 1),
    "list_a (app)": (64, 1, 192, 3),
    "list_b (app)": (0, 0, 128, 2),
}
HEAP, SHARED, LEAKED, DIRECT = (4534, 14), (128, 2), (492, 3), (300, 1)
# leaked bytes by allocating function: make_leak's block, make_cycle's two
LEAKED_BY_FUNC = {"make_leak": 300, "make_cycle": 192}


class Census:
    """roots_prog built with our runtime and run once with roots=1
    (timeline=1 too when asked); its raw profile and binary."""

    def __init__(self, scratch, timeline=False):
        self.exe = harness.compile_program(scratch, SRC, out="app",
                                           cflags=["-fno-omit-frame-pointer"],
                                           ldflags=["-lpthread"])
        opts = "roots=1" + (":timeline=1" if timeline else "")
        _, raws = harness.run_program(scratch, self.exe, ["census"],
                                      env={"MEMPROF_OPTIONS": opts})
        self.raw = [r for r in raws if re.search(r"\.profraw\.\d+$", r)][0]

    def report(self, *args, check=True):
        return harness.memprof_profdata("report", self.raw, f"--profiled-binary={self.exe}",
                                        *args, check=check)


def page_data(page):
    with open(page) as f:
        text = f.read()
    m = re.search(r'<script id="data" type="application/json">(.*?)</script>', text, re.S)
    return json.loads(m.group(1))


def exit_section(text):
    return text[text.index("Who holds the memory at exit"):]


class CensusTest(harness.ProfTest):
    @classmethod
    def setUpClass(cls):
        cls.shared = harness.Scratch("roots-views-" + cls.__name__.lower())
        cls.census = Census(cls.shared)

    @classmethod
    def tearDownClass(cls):
        cls.shared.cleanup()


class RootsHtml(CensusTest):
    def setUp(self):
        super().setUp()
        self.page = self.scratch.path("r.html")
        self.census.report("--format=html", "-o", self.page)
        self.d = page_data(self.page)["roots"]
        self.text = exit_section(self.census.report().stdout)

    def test_data_is_the_text_reports_exit_census(self):
        self.assertEqual(len(self.d["procs"]), 1)
        p = self.d["procs"][0]
        c = p["last"]
        self.assertEqual(p["censuses"], 2)
        self.assertEqual((c["kind"], c["exit"]), ("at exit", 1))
        self.assertEqual((tuple(c["heap"]), tuple(c["shared"]), tuple(c["unreached"]),
                          tuple(c["direct"])), (HEAP, SHARED, LEAKED, DIRECT))
        got = {x["label"]: tuple(x["retained"] + x["reached"]) for x in c["roots"]}
        self.assertEqual(got, ROOTS)
        self.assertEqual(c["roots"][0]["label"], "cache (app)")  # most retained first
        # the text report's rows, in its order: root rows, then every
        # "N bytes in M blocks" row (roots' contexts, leaked, reachable)
        row = r"^\s+\d+\s+(\d+)\s+(\d+)\s+(\d+)\??\s+(\d+)  (.*)$"
        text_roots = [(m.group(5), tuple(int(m.group(k)) for k in range(1, 5)))
                      for m in re.finditer(row, self.text, re.M)]
        self.assertEqual(text_roots, [(x["label"], tuple(x["retained"] + x["reached"]))
                                      for x in c["roots"]])
        ctx_rows = re.findall(r"^    (\d+) bytes? in (\d+) blocks?(?: \((\d+) (?:direct|retained by one "
                              r"root, (\d+) shared)\))?$", self.text, re.M)
        ours = [(b, k) for x in c["roots"] for _, b, k in x["ctx"]]
        ours += [(b, k, d) for _, b, k, d in c["leaked"]]
        ours += [(b, k, b - s, s) for _, b, k, s in c["reachable"]]
        want = [tuple(int(v) for v in r if v != "") for r in ctx_rows]
        self.assertEqual([tuple(r) for r in ours], want)
        self.assertEqual(sum(r[1] for r in c["leaked"]), LEAKED[0])
        self.assertEqual(sum(r[1] for r in c["reachable"]), HEAP[0] - LEAKED[0])

    def test_contexts_link_to_the_table(self):
        # each ref is the page's context row of the same allocation
        data = page_data(self.page)
        names = data["strings"]
        leaf = lambda ref: names[data["frames"]["name"][data["ctx"]["leaf"][ref]]]
        c = self.d["procs"][0]["last"]
        by_func = {}
        for ref, b, _, _ in c["leaked"]:
            by_func[leaf(ref)] = by_func.get(leaf(ref), 0) + b
            self.assertEqual(data["ctx"]["bytes"][ref], b)  # every leaked block
            self.assertIn(str(ref), data["ctx"]["stacks"])  # full stack in the page
        self.assertEqual(by_func, LEAKED_BY_FUNC)
        cache = [x for x in c["roots"] if x["label"] == "cache (app)"][0]
        self.assertEqual(sorted((leaf(ref), b) for ref, b, _ in cache["ctx"]),
                         [("make_cache", 1000), ("make_cache", 2000)])

    def test_graph_of_retained_bytes(self):
        g = self.d["procs"][0]["graph"]
        # "gone" retains the 250-byte block on demand, removed_buf at exit
        self.assertEqual(g["labels"], ["cache (app)", "interior (app)", "gone (named)",
                                       "removed_buf (app)", "my_named_root (named)",
                                       "list_a (app)"])
        # the shared bytes: list_a and list_b's band, no other set
        self.assertEqual((g["sets"], g["otherSets"]), ([["list_a (app)", "list_b (app)"]], 0))
        self.assertEqual(g["total"], [HEAP[0]] * 2)
        self.assertEqual(g["series"], [[3000, 3000], [400, 400], [250, 0], [0, 250],
                                       [200, 200], [64, 64], [128, 128], [492, 492]])
        self.assertLessEqual(g["t"][0], g["t"][1])

    def test_top_limits_rows_as_text(self):
        page = self.scratch.path("top2.html")
        self.census.report("--format=html", "--top=2", "-o", page)
        c = page_data(page)["roots"]["procs"][0]["last"]
        self.assertEqual([x["label"] for x in c["roots"]], ["cache (app)", "interior (app)"])
        self.assertEqual((c["rootsMore"], len(c["leaked"]), c["leakedMore"]), (4, 2, 1))
        self.assertIn("... 4 more roots", self.census.report("--top=2").stdout)

    @unittest.skipUnless(rc.chromium(), "chromium is not installed")
    def test_page_renders_the_text_reports_lines(self):
        r = rc.chromium_run(["--dump-dom", "file://" + self.page])
        self.assertEqual(rc.console_lines(r.stderr), [])
        dom = r.stdout
        box = dom[dom.index('<div id="roots">'):dom.index('<div id="temporary">')]
        cells = lambda cls: [html.unescape(re.sub(r"<[^>]+>", "", t)) for t in
                             re.findall(r'<td[^>]*class="%s"[^>]*>(.*?)</td>' % cls, box)]
        heads = [html.unescape(h) for h in re.findall(r"<h3>(.*?)</h3>", box)]
        lines = [l.strip() for l in self.text.splitlines()]
        for h in heads:
            self.assertIn(h.rstrip(":") if h.startswith(("Retained", "Shared")) else h,
                          [l.rstrip(":") for l in lines])
        self.assertEqual(len(heads), 5)
        # the bands, each a text line
        bands = [html.unescape(t) for t in re.findall(r"<li>(.*?)</li>", box)]
        self.assertEqual(bands, ["list_a (app) + list_b (app): 128 bytes in 2 blocks"])
        for b in bands:
            self.assertIn(b, lines)
        text_rows = [l for l in lines if re.match(r"\d+ bytes? in \d+ blocks?( \(|$)", l)]
        self.assertEqual(cells("sub"), text_rows)
        self.assertIn("retained by one root 3914 bytes, shared by several 128 bytes, "
                      "leaked 492 bytes", box)
        # the graph: a band per root, shared, unreachable, and the rest
        svg = re.search(r'<svg[^>]*id="rootsgraph0".*?</svg>', box, re.S)
        self.assertIsNotNone(svg)
        titles = re.findall(r'<polygon[^>]*class="layer"[^>]*><title>(.*?)</title>', svg.group(0))
        self.assertEqual(titles, ["cache (app)", "interior (app)", "gone (named)",
                                  "removed_buf (app)", "my_named_root (named)", "list_a (app)",
                                  "list_a (app) + list_b (app)", "unreachable (leaked at exit)",
                                  "other roots"])


# progs/roots_bands_time.c: four censuses (three on demand, one at exit);
# the graph's sets, largest at some census first, each with its bytes per
# census; the other sets' bytes (de's 96, at census 2 the file's ninth set
# in no band, and bc's 110, the ninth set by size); ga's own 48 bytes and
# the leaked 72 throughout.
SETS_OVER_TIME = [
    (["ga (app)", "gb (app)"], [1000, 1800, 1800, 1800]),
    (["gc (app)", "gd (app)"], [600, 600, 910, 0]),
    (["ga (app)", "gb (app)", "gc (app)"], [800, 0, 0, 0]),
    (["ga (app)", "ge (app)"], [0, 400, 0, 0]),
    (["gb (app)", "gd (app)"], [0, 300, 0, 0]),
    (["gb (app)", "ge (app)"], [0, 200, 0, 0]),
    (["gc (app)", "ge (app)"], [0, 150, 0, 0]),
    (["ga (app)", "gc (app)"], [0, 120, 120, 120]),
]
OTHER_SETS = [96, 206, 206, 206]
SHARED_OVER_TIME = [2496, 3776, 3036, 2126]
GA_OWN, LEAK = 48, 72


class RootsBandsGraph(harness.ProfTest):
    """The graph of progs/roots_bands_time.c, whose sets of roots sharing
    blocks change from census to census: the shared bytes are a layer per
    set (the 8 largest at some census, 0 where a census lists no band of
    it) and the other sets; the layers of a census add up to its heap."""

    @classmethod
    def setUpClass(cls):
        cls.shared = harness.Scratch("roots-views-bandsgraph")
        src = harness.prog_path(__file__, "roots_bands_time.c")
        cls.exe = harness.compile_program(cls.shared, src, out="app",
                                          cflags=["-fno-omit-frame-pointer"])
        _, raws = harness.run_program(cls.shared, cls.exe, [], env={"MEMPROF_OPTIONS": "roots=1"})
        cls.raw = [r for r in raws if re.search(r"\.profraw\.\d+$", r)][0]
        with open(cls.raw + ".roots", "rb") as f:
            cls.roots = rf.decode(f.read())

    @classmethod
    def tearDownClass(cls):
        cls.shared.cleanup()

    def graph(self, raw):
        page = self.scratch.path("r.html")
        harness.memprof_profdata("report", raw, f"--profiled-binary={self.exe}", "--format=html",
                                 "-o", page)
        return page, page_data(page)["roots"]["procs"][0]["graph"]

    def test_a_layer_per_set(self):
        _, g = self.graph(self.raw)
        self.assertEqual([c["kind"] for c in self.roots["census"]], [1, 1, 1, 3])
        self.assertEqual(g["labels"], ["ga (app)"])
        self.assertEqual((g["sets"], g["otherSets"]), ([s for s, _ in SETS_OVER_TIME], 1))
        self.assertEqual(g["series"], [[GA_OWN] * 4] + [v for _, v in SETS_OVER_TIME] +
                         [OTHER_SETS, [LEAK] * 4])
        total = [GA_OWN + s + LEAK for s in SHARED_OVER_TIME]
        self.assertEqual(g["total"], total)
        self.assertEqual([sum(col) for col in zip(*g["series"])], total)
        # the sets' layers and the other sets split each census's shared bytes
        self.assertEqual([sum(col) for col in zip(*g["series"][1:-1])], SHARED_OVER_TIME)
        self.assertEqual([c["shared"][0] for c in self.roots["census"]], SHARED_OVER_TIME)
        # a set's layer is its band's bytes in the file, 0 where it has none
        for k, c in enumerate(self.roots["census"]):
            names = [rf.root_name(c, x) for x in c["roots"]]
            bands = {tuple(names[i] for i in roots): b for roots, b, _ in c["bands"]}
            self.assertEqual([bands.get(tuple(s), 0) for s, _ in SETS_OVER_TIME],
                             [v[k] for _, v in SETS_OVER_TIME])

    def test_version_2_has_one_shared_layer(self):
        old = dict(self.roots, version=2)
        raw = self.scratch.path(os.path.basename(self.raw))
        shutil.copy(self.raw, raw)
        with open(raw + ".roots", "wb") as f:
            f.write(rf.encode(old))
        _, g = self.graph(raw)
        self.assertNotIn("sets", g)
        self.assertNotIn("otherSets", g)
        self.assertEqual(g["series"], [[GA_OWN] * 4, SHARED_OVER_TIME, [LEAK] * 4])

    @unittest.skipUnless(rc.chromium(), "chromium is not installed")
    def test_page_draws_the_sets(self):
        page, g = self.graph(self.raw)
        r = rc.chromium_run(["--dump-dom", "file://" + page])
        self.assertEqual(rc.console_lines(r.stderr), [])
        dom = r.stdout
        box = dom[dom.index('<div id="roots">'):dom.index('<div id="temporary">')]
        svg = re.search(r'<svg[^>]*id="rootsgraph0".*?</svg>', box, re.S).group(0)
        layers = re.findall(r'<polygon points="([^"]*)"[^>]*class="layer"[^>]*>'
                            r'<title>(.*?)</title>', svg)
        names = ["ga (app)"] + [" + ".join(s) for s, _ in SETS_OVER_TIME] + \
            ["other sets", "unreachable (leaked at exit)"]
        self.assertEqual([html.unescape(t) for _, t in layers], names + ["other roots"])
        legend = re.search(r'<div class="tllegend">(.*?)</div>', box[box.index("rootsgraph0"):],
                           re.S).group(1)
        self.assertEqual([html.unescape(t) for t in re.findall(r"<span>(.*?)</span>", legend)],
                         names + ["other roots"])
        self.assertIn("(1 root, 8 sets of roots sharing blocks and the unreachable bytes as layers "
                      "of their own)", svg)
        # each layer's height at each census, back from the drawing: the
        # first half of its points are its top, the second its bottom
        # backwards, in pixels of 250 for the largest total
        ymax, want = max(g["total"]), g["series"] + [[0] * 4]
        for (points, _), values in zip(layers, want):
            ys = [float(p.split(",")[1]) for p in points.split()]
            top, bottom = ys[:4], ys[4:][::-1]
            for k in range(4):
                self.assertAlmostEqual((bottom[k] - top[k]) * ymax / 250, values[k], delta=1.6)


def pprof(*args):
    env = dict(os.environ)
    env.setdefault("HOME", "/tmp")
    env["PPROF_TMPDIR"] = env.get("TMPDIR", "/tmp")
    return harness.run(["go", "tool", "pprof", *args], env=env).stdout


TYPES = ["alloc_objects", "alloc_space", "total_lifetime", "accesses", "retained_objects",
         "retained_space", "leaked_objects", "leaked_space"]


@unittest.skipUnless(shutil.which("go"), "Go's pprof (golang-go) is not installed")
class RootsPprof(CensusTest):
    def setUp(self):
        super().setUp()
        self.pb = self.scratch.path("p.pb.gz")
        self.census.report("--format=pprof", "-o", self.pb)

    def samples(self):
        """[(values, labels)] from `pprof -raw`."""
        out, types, cur = [], None, None
        for line in pprof("-raw", self.pb).splitlines():
            if line.startswith("Samples:"):
                cur = []
                continue
            if cur is None:
                continue
            if line.startswith("Locations"):
                break
            if types is None:
                types = [t.split("/")[0] for t in line.split()]
                self.assertEqual(types, TYPES)
                continue
            m = re.match(r"\s+([-\d\s]+):", line)
            if m:
                out.append((list(map(int, m.group(1).split())), {}))
            elif line.strip():
                for k, v in re.findall(r"(\w+):\[([^\]]*)\]", line):
                    out[-1][1][k] = v
        return out

    def test_exact_retained_and_leaked(self):
        s = self.samples()
        col = {t: i for i, t in enumerate(TYPES)}
        total = lambda t: sum(v[col[t]] for v, _ in s)
        self.assertEqual((total("leaked_space"), total("leaked_objects")), LEAKED)
        retained = sum(x[0] for x in ROOTS.values())
        self.assertEqual(total("retained_space"), retained)
        self.assertEqual(total("retained_objects"), sum(x[1] for x in ROOTS.values()))
        by_root = {}
        for v, labels in s:
            if v[col["retained_space"]]:
                # retained samples carry nothing else, and name their root
                self.assertEqual([x for i, x in enumerate(v) if TYPES[i][:8] != "retained"],
                                 [0] * 6)
                by_root[labels["root"]] = by_root.get(labels["root"], 0) + v[col["retained_space"]]
        self.assertEqual(by_root, {k: x[0] for k, x in ROOTS.items() if x[0]})
        # the allocation values stay the profile's
        self.assertEqual(total("alloc_space"), 4534 + 700)  # and the freed 700-byte block

    def test_top_by_sample_index(self):
        top = pprof("-top", "-sample_index=leaked_space", self.pb)
        self.assertIn("Type: leaked_space", top)
        rows = {m.group(2): int(m.group(1)) for m in
                re.finditer(r"^\s+(\d+)B\s+[\d.]+%\s+[\d.]+%\s+\S+\s+[\d.]+%\s+(\w+)$", top, re.M)}
        self.assertEqual(rows, LEAKED_BY_FUNC)
        tags = pprof("-tags", "-sample_index=retained_space", self.pb)
        self.assertRegex(tags, r"root: Total 3\.8kB")
        one = pprof("-top", "-sample_index=retained_space", "-tagfocus=root=interior", self.pb)
        self.assertRegex(one, r"Showing nodes accounting for 400B, 10\.22% of 3914B total")
        # no block of this program lacks a symbolizable frame
        self.assertIn("symbolizable frame: 0 retained, 0 leaked", pprof("-comments", self.pb))


@unittest.skipUnless(rc.dh_view_js(), "valgrind's dh_view.js is not installed")
class RootsDhat(CensusTest):
    def dhat(self, *args):
        return json.loads(self.census.report("--format=dhat", *args).stdout)

    def test_live_and_leaked_at_exit(self):
        d = self.dhat()
        self.assertEqual((sum(p["eb"] for p in d["pps"]), sum(p["ebk"] for p in d["pps"])), HEAP)
        # per program point: every block but the freed one is live at exit
        self.assertEqual(sorted((p["tb"], p["eb"]) for p in d["pps"]),
                         sorted((p["tb"], 0 if p["tb"] == 700 else p["tb"]) for p in d["pps"]))
        leaked = self.dhat("--dhat-at-end=leaked")
        self.assertEqual((sum(p["eb"] for p in leaked["pps"]),
                          sum(p["ebk"] for p in leaked["pps"])), LEAKED)
        self.assertEqual(sorted(p["eb"] for p in leaked["pps"] if p["eb"]), [96, 96, 300])
        self.assertTrue(leaked["cmd"].endswith(
            "--dhat-at-end=leaked (at t-end: the blocks no root reaches at exit)"))
        # the rest of the file is the same
        for a, b in zip(d["pps"], leaked["pps"]):
            self.assertEqual({k: v for k, v in a.items() if k not in ("eb", "ebk")},
                             {k: v for k, v in b.items() if k not in ("eb", "ebk")})

    def test_refused_where_it_means_nothing(self):
        r = self.census.report("--dhat-at-end=leaked", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("--dhat-at-end is for --format=dhat", r.stderr)
        r = self.census.report("--format=dhat", "--dhat-at-end=leaked", "--no-timeline", check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn("--dhat-at-end=leaked needs a roots file", r.stderr)

    @unittest.skipUnless(rc.chromium(), "chromium is not installed")
    def test_dh_view_shows_the_leaks_at_t_end(self):
        page = rc.dh_view_page(self.scratch, self.census.report(
            "--format=dhat", "--dhat-at-end=leaked").stdout)
        r = rc.chromium_run(["--dump-dom", "file://" + page])
        self.assertEqual(rc.console_lines(r.stderr), [])
        text = html.unescape(re.sub(r"<[^>]+>", "", r.stdout))
        self.assertRegex(text, r"At t-end:\s+492 bytes \(100%\) in 3 blocks \(100%\)")
        self.assertRegex(text, r"At t-end:\s+300 bytes \(60\.98%\) in 1 blocks")


class RootsMerged(harness.ProfTest):
    """Two runs reported together: one roots file each; the page shows
    each process's last census, pprof and DHAT sum the processes."""

    def test_two_processes(self):
        exe = harness.compile_program(self.scratch, SRC, out="app",
                                      cflags=["-fno-omit-frame-pointer"], ldflags=["-lpthread"])
        raws = []
        for args in (["census"], []):
            _, got = harness.run_program(self.scratch, exe, args,
                                         env={"MEMPROF_OPTIONS": "roots=1"})
            raws += [r for r in got if re.search(r"\.profraw\.\d+$", r)]
        self.assertEqual(len(raws), 2)
        report = lambda *a: harness.memprof_profdata("report", *raws,
                                                     f"--profiled-binary={exe}", *a)
        page = self.scratch.path("m.html")
        report("--format=html", "-o", page)
        procs = page_data(page)["roots"]["procs"]
        self.assertEqual([p["censuses"] for p in procs], [2, 1])
        self.assertEqual(["graph" in p for p in procs], [True, False])
        for p in procs:
            self.assertEqual((tuple(p["last"]["heap"]), tuple(p["last"]["unreached"])),
                             (HEAP, LEAKED))
        if shutil.which("go"):
            pb = self.scratch.path("m.pb.gz")
            report("--format=pprof", "-o", pb)
            top = pprof("-top", "-sample_index=leaked_space", pb)
            self.assertIn("Showing nodes accounting for 984B, 100% of 984B total", top)
            top = pprof("-top", "-sample_index=retained_space", pb)
            self.assertIn("of 7828B total", top)
        d = json.loads(report("--format=dhat").stdout)
        self.assertEqual(sum(p["eb"] for p in d["pps"]), 2 * HEAP[0])
        d = json.loads(report("--format=dhat", "--dhat-at-end=leaked").stdout)
        self.assertEqual(sum(p["ebk"] for p in d["pps"]), 2 * LEAKED[1])


class RootsDhatWithTimeline(harness.ProfTest):
    """With a timeline too, live at exit is the timeline's (the same
    figures), and --dhat-at-end=leaked still gives the leaks."""

    def test_timeline_and_roots(self):
        run = Census(self.scratch, timeline=True)
        self.assertTrue(os.path.exists(run.raw + ".timeline"))
        d = json.loads(run.report("--format=dhat").stdout)
        self.assertEqual((sum(p["eb"] for p in d["pps"]), sum(p["ebk"] for p in d["pps"])), HEAP)
        d = json.loads(run.report("--format=dhat", "--dhat-at-end=leaked").stdout)
        self.assertEqual((sum(p["eb"] for p in d["pps"]), sum(p["ebk"] for p in d["pps"])), LEAKED)
        self.assertGreater(d["tg"], 0)  # the timeline's peak is kept


if __name__ == "__main__":
    harness.main()
