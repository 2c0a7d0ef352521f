"""The HTML report's temporary allocations: the same total and the same
rows, in the same order, as the text report's section, from the runtime's
counts (test/runtime/progs/temporaries.c, whose exact counts
test_rt_temporaries checks): 11,012 temporary allocations in 5 contexts,
led by the worker threads' 10,000 and main's 1,000."""
import html
import os
import re
import unittest

import harness
import report_common as rc

SRC = os.path.join(harness.ROOT, "test", "runtime", "progs", "temporaries.c")


def text_rows(out):
    """(temporary, % of allocs, allocs) of the text section's rows."""
    section = out.split("\nTemporary allocations", 1)[1]
    return re.findall(r"^ +\d+ +(\d+) +(\S+)% +(\d+) ", section, re.M)


class HtmlTemporaries(harness.ProfTest):
    def setUp(self):
        super().setUp()
        exe = self.scratch.path("temporaries")
        harness.run(["clang-22", "-O1", "-g", "-pthread", "-fno-omit-frame-pointer",
                     "-fno-optimize-sibling-calls", SRC, "-o", exe])
        env = {"LD_PRELOAD": harness.find_built("libmemprof.so")}
        _, raws = harness.run_program(self.scratch, exe, env=env)
        self.raw = raws[-1]

    @unittest.skipUnless(rc.chromium(), "chromium is not installed")
    def test_same_table_as_text(self):
        text = rc.report(self.raw).stdout
        want = text_rows(text)
        self.assertEqual(len(want), 5)
        page = self.scratch.path("r.html")
        rc.report(self.raw, "--format=html", "-o", page)
        r = rc.chromium_run(["--dump-dom", "file://" + page])
        self.assertEqual(rc.console_lines(r.stderr), [])
        box = re.search(r'<div id="temporary">(.*?)</div>', r.stdout, re.S).group(1)
        total = sum(int(t) for t, _, _ in want)
        self.assertIn(f"Freed before their thread allocated again: {total:,} of ", box)
        self.assertIn("in 5 contexts.", box)
        rows = re.findall(r"<tr>(.*?)</tr>", box, re.S)[1:]
        cells = [[html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
                 for row in rows]
        self.assertEqual([(c[1].replace(",", ""), c[2].rstrip("%"), c[3].replace(",", ""))
                          for c in cells], want)
        self.assertTrue(all(c[5].startswith("at ") for c in cells[:2]), cells[:2])

    def test_none_without_counts(self):
        """A sampled profile has no counts: no section, no data."""
        exe = self.scratch.path("temporaries")
        env = {"LD_PRELOAD": harness.find_built("libmemprof.so"),
               "MEMPROF_OPTIONS": "sample_interval=4096"}
        _, raws = harness.run_program(self.scratch, exe, env=env)
        page = self.scratch.path("s.html")
        rc.report(raws[-1], "--format=html", "-o", page)
        with open(page) as f:
            self.assertNotIn('"tmp":', f.read())


if __name__ == "__main__":
    harness.main()
