"""One value, one way of writing it, in the text report and on the HTML
page (profdata/report/report_format.c and the formatting functions of
report_page.html): the page's functions, run by node on the inputs of the
C unit test test/unit/profdata/test_report_format.c, give exactly the
strings it wants from the C functions (ties round half up in both: printf
and toFixed disagree there); and a profile made
for it (YAML, every value chosen) shows the same average size, lifetime,
density and share in each row of the text report and of the rendered page
(headless Chromium; skipped, visibly, without it)."""
import html
import json
import os
import re
import shutil
import subprocess
import unittest

import harness
import report_common as rc

PAGE = os.path.join(harness.ROOT, "profdata", "report", "report_page.html")

UNIT = os.path.join(harness.ROOT, "test", "unit", "profdata", "test_report_format.c")
# the C test's tables (static const struct ... name[] = {...};) and the
# page's function for each
JS_OF = {"sig3": "fmtSig3", "ms": "fmtMs", "bytes": "fmtBytes", "pct": "pct"}


def cases():
    """(function, arguments, what both outputs write), from the C test."""
    with open(UNIT) as f:
        src = f.read()
    out = []
    for name, body in re.findall(r"\} (\w+)\[\] = \{(.*?)\};", src, re.S):
        for args, want in re.findall(r"\{([^{}\"]+), \"([^\"]*)\"\}", body):
            vals = [eval(a.replace("ull", "")) for a in args.split(",")]
            out.append((JS_OF[name], vals, want))
    return out


# Contexts of the YAML profile: GUID, allocations, bytes, total lifetime
# (ms), accesses, TotalLifetimeAccessDensity; and the row the text report
# gives each: average size, average lifetime, density.
PROFILE = [
    (0x1001, 2, 97, 3, 10, 0, ("49 B", "1.5 ms", "0")),
    (0x1002, 5000, 240000, 1, 0, 0, ("48 B", "0.0002 ms", "0")),
    (0x1003, 1, 1152, 30, 5, 112000, ("1.13 KiB", "30 ms", "1120")),
    (0x1004, 2, 200, 1999, 7, 123, ("100 B", "1 s", "0.615")),
    (0x1005, 3, 3000, 8136, 1, 1, ("1000 B", "2.71 s", "0.00333")),
]


def page_script():
    """The formatting part of the page's script."""
    with open(PAGE) as f:
        page = f.read()
    start = page.index("// ---- formatting")
    return page[start:page.index("// ---- end of formatting ----", start)]


def yaml_profile():
    out = ["---", "HeapProfileRecords:"]
    for g, n, size, life, acc, tlad, _ in PROFILE:
        out += [f"  - GUID: {g:#x}", "    AllocSites:", "      - Callstack:",
                f"          - {{ Function: {g:#x}, LineOffset: 1, Column: 2, IsInlineFrame: false }}",
                "        MemInfoBlock:", f"          AllocCount: {n}",
                f"          TotalAccessCount: {acc}", f"          TotalSize: {size}",
                f"          MinSize: {size // n}", f"          MaxSize: {size // n}",
                f"          TotalLifetime: {life}",
                f"          TotalLifetimeAccessDensity: {tlad}"]
    return "\n".join(out + ["..."]) + "\n"


def text_rows(out):
    """{guid: (bytes, %, avg size, avg life, density)} of the text table."""
    rows, last = {}, None
    for line in out.splitlines():
        m = re.match(r"\s+\d+\s+(\d+(?:\.\d+)? \S+)\s+(\S+%)\s+\d+\s+(\d+(?:\.\d+)? \S+)\s+"
                     r"(\S+ m?s)\s+(\S+)\s+\d+\s+\S+$", line)
        if m:
            last = m.groups()
        elif last and re.match(r"\s+0x[0-9a-f]{16}\s", line):
            rows[int(line.split()[0], 16)] = last
            last = None
    return rows


class Format(harness.ProfTest):
    @unittest.skipUnless(shutil.which("node"), "node is not installed")
    def test_page_formats_as_the_text_report(self):
        want = cases()
        self.assertEqual(len(want), 25)  # every row of the C test's tables
        calls = [[f, a] for f, a, _ in want]
        js = page_script() + "\nconsole.log(JSON.stringify(%s.map(([f, a]) => eval(f)(...a))));" % (
            json.dumps(calls))
        r = subprocess.run(["node", "-e", js], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, check=True)
        self.assertEqual(json.loads(r.stdout), [w for _, _, w in want])

    def test_checker_sees_a_difference(self):
        # the comparison above can fail: JavaScript's own rounding differs
        r = subprocess.run(["node", "-e", "console.log((1.125).toFixed(2), (12.25).toFixed(1))"],
                           stdout=subprocess.PIPE, text=True, check=True) if shutil.which("node") else None
        if r:
            self.assertEqual(r.stdout.split(), ["1.13", "12.3"])
        self.assertEqual("%.2f %.1f" % (1.125, 12.25), "1.12 12.2")

    def test_text_rows(self):
        prof = self.scratch.write("fmt.yaml", yaml_profile())
        rows = text_rows(rc.report(prof, "--top=0").stdout)
        self.assertEqual({g: r[2:] for g, r in rows.items()},
                         {g: want for g, *_, want in PROFILE})

    @unittest.skipUnless(rc.chromium(), "chromium is not installed")
    def test_html_rows_equal_the_text_rows(self):
        prof = self.scratch.write("fmt.yaml", yaml_profile())
        text = text_rows(rc.report(prof, "--top=0").stdout)
        page = self.scratch.path("fmt.html")
        rc.report(prof, "--format=html", "-o", page)
        r = rc.chromium_run(["--dump-dom", "file://" + page])
        self.assertEqual(rc.console_lines(r.stderr), [])
        body = re.search(r'<table id="ctx">.*?<tbody>(.*?)</tbody>', r.stdout, re.S).group(1)
        dom = {}
        for row in re.findall(r"<tr.*?</tr>", body, re.S):
            cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
            # #, bytes, %, allocs, avg size, avg lifetime, density, accesses,
            # verdict, allocation site, location
            dom[int(cells[9], 16)] = (cells[1], cells[2], cells[4], cells[5], cells[6])
        self.assertEqual(dom, text)
        self.assertEqual(len(dom), len(PROFILE))


if __name__ == "__main__":
    harness.main()
