"""`memprof-profdata report --format=html` in headless Chromium (Debian's
chromium): the page opens from the file system with no network and no
external file, its script runs to the end without a console message, the
summary, the contexts table (top row: the largest context) and the
flame graph (a box per frame, coloured by verdict) are in the rendered DOM,
"#focus=FUNCTION" narrows the table to the contexts through it as a click
does, a screenshot renders, and --base adds the diff.  Skipped (shown as
skipped) without Chromium."""
import html
import os
import re
import unittest

import harness
import report_common as rc

COLD_BLUE = "rgb(79, 134, 217)"


def text_of(dom):
    return html.unescape(re.sub(r"<[^>]+>", " ", dom))


@unittest.skipUnless(rc.chromium(), "chromium is not installed")
class Html(rc.MultiTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.page = cls.shared.path("report.html")
        rc.report(cls.multi.indexed, "--format=html", "-o", cls.page,
                  "--memprof-ave-lifetime-cold-threshold=1")
        cls.dom = rc.chromium_run(["--dump-dom", "file://" + cls.page])

    def test_renders_without_errors(self):
        self.assertEqual(rc.console_lines(self.dom.stderr), [])
        self.assertRegex(self.dom.stdout, r'<body data-rendered="\d+"')
        self.assertRegex(self.dom.stdout, r'<div id="errors"></div>')

    def test_console_errors_are_seen(self):
        # the check above can fail: a page that throws is caught
        bad = self.scratch.write("bad.html", "<html><body><script>null.x;</script></body></html>")
        r = rc.chromium_run(["--dump-dom", "file://" + bad])
        self.assertTrue(any("Uncaught" in l for l in rc.console_lines(r.stderr)), r.stderr)

    def test_self_contained(self):
        with open(self.page) as f:
            page = f.read()
        self.assertEqual(re.findall(r"\b(?:src|href)\s*=", page), [])
        self.assertEqual(re.findall(r"\b(?:fetch|XMLHttpRequest|import)\s*\(", page), [])
        self.assertNotIn("http://", page.split("<script id=\"data\"")[0])

    def test_summary_table_and_flame_graph(self):
        dom = self.dom.stdout
        text = text_of(dom)
        size = sum(m["TotalSize"] for m in self.multi.contexts.values())
        self.assertIn("(%s)" % format(size, ","), text)
        self.assertIn("calls: cold 1, notcold 2, hot 0, ambiguous 1", text)
        body = re.search(r'<table id="ctx">.*?<tbody>(.*?)</tbody>', dom, re.S).group(1)
        rows = re.findall(r"<tr.*?</tr>", body, re.S)
        self.assertEqual(len(rows), 10)
        first = text_of(rows[0])
        self.assertIn("64.00 KiB", first)
        self.assertIn("mixed_site(unsigned long)", first)
        self.assertIn("cold (ambiguous call)", first)
        self.assertIn("%s:22:" % rc.MULTI, first)
        boxes = [(re.search(r'style="([^"]*)"', b).group(1), re.search(r'title="([^"]*)"', b).group(1))
                 for b in re.findall(r'<div class="fr[^>]*>', dom)]
        self.assertGreaterEqual(len(boxes), 20)
        titles = [html.unescape(t).split("\n")[0] for _, t in boxes]
        for name in ("main", "top_a()", "mid1(unsigned long)", "mixed_site(unsigned long)",
                     "cold_site(unsigned long)", "hot_site(unsigned long)"):
            self.assertIn(name, titles)
        # one box per function on a path: main under the root, and under
        # it the widest is top_a (64 KiB of 151), coloured cold
        width = lambda st: float(re.search(r"width: ([\d.]+)px", st).group(1))
        top = lambda st: float(re.search(r"top: ([\d.]+)px", st).group(1))
        at = lambda y: sorted(((width(st), html.unescape(t), st) for st, t in boxes
                               if top(st) == y), reverse=True)
        self.assertEqual([t.split("\n")[0] for _, t, _ in at(18)], ["main"])
        w, t, st = at(36)[0]
        self.assertTrue(t.startswith("top_a()\n%s:47:" % rc.MULTI), t)
        self.assertIn(COLD_BLUE, st)

    def test_focus_narrows_the_table(self):
        # the widest mid1 box is the one main -> top_a -> mid1: one context
        # goes through it; all ten through main
        for focus, rows in (("mid1(unsigned%20long)", 1),
                            ("mixed_site(unsigned%20long)", 1),
                            ("main", 10)):
            with self.subTest(focus=focus):
                r = rc.chromium_run(["--dump-dom", "file://" + self.page + "#focus=" + focus])
                self.assertEqual(rc.console_lines(r.stderr), [])
                text = text_of(r.stdout)
                self.assertIn("showing %d of %d contexts" % (rows, rows), text)
                self.assertIn("Contexts through " + focus.replace("%20", " "), text)
        r = rc.chromium_run(["--dump-dom", "file://" + self.page + "#focus=top_c()"])
        self.assertIn("showing 1 of 1 contexts", text_of(r.stdout))

    def test_filters(self):
        for frag, rows in (("filter=busy", 2), ("filter=MULTI.CC:47", 1),
                           ("verdict=cold", 3), ("verdict=ambiguous", 4),
                           ("verdict=notcold&filter=mid2", 2)):
            with self.subTest(frag=frag):
                r = rc.chromium_run(["--dump-dom", "file://" + self.page + "#" + frag])
                self.assertEqual(rc.console_lines(r.stderr), [])
                self.assertIn("showing %d of %d contexts" % (rows, rows), text_of(r.stdout))

    def test_sorting(self):
        first = lambda frag: text_of(re.search(
            r'<table id="ctx">.*?<tbody>\s*(<tr.*?</tr>)', rc.chromium_run(
                ["--dump-dom", "file://" + self.page + "#" + frag]).stdout, re.S).group(1))
        most = max(self.ctx.values(), key=lambda m: (m["AllocCount"], m["TotalSize"]))
        self.assertRegex(first("sort=allocs"), r"\b%s\b" % format(most["AllocCount"], ","))
        self.assertIn("hot_site(unsigned long)", first("sort=allocs"))
        self.assertIn("64.00 KiB", first("sort=avglife"))
        self.assertIn("busy_site(unsigned long)", first("sort=name"))
        # --sort chooses the table's first order
        page = self.scratch.path("by_allocs.html")
        rc.report(self.multi.indexed, "--format=html", "--sort=allocs", "-o", page)
        dom = rc.chromium_run(["--dump-dom", "file://" + page]).stdout
        self.assertIn('<th class="sorted">allocs</th>', dom)

    def test_screenshot(self):
        png = self.scratch.path("shot.png")
        rc.chromium_run(["--window-size=1300,1000", "--screenshot=" + png, "file://" + self.page])
        with open(png, "rb") as f:
            data = f.read()
        self.assertEqual(data[:8], b"\x89PNG\r\n\x1a\n")
        self.assertGreater(len(data), 20000)

    def test_base_diff(self):
        demo = rc.Profiled(self.scratch, rc.HOTCOLD, full_schema=False)
        page = self.scratch.path("diff.html")
        rc.report(self.multi.indexed, "--format=html", "-o", page, f"--base={demo.indexed}")
        r = rc.chromium_run(["--dump-dom", "file://" + page])
        self.assertEqual(rc.console_lines(r.stderr), [])
        text = text_of(r.stdout)
        self.assertIn("\u0394 bytes", text)
        self.assertRegex(text, r"contexts vs base\s+2 \u2192 10: 10 new, 2 gone \(1\.24 MiB\)")
        self.assertIn("Gone since the base", text)
        self.assertIn("make_buffer(unsigned long)", text)


if __name__ == "__main__":
    harness.main()
