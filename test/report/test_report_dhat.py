"""`memprof-profdata report --format=dhat`: DHAT's JSON has every field
valgrind's dh_view.js checks (the lists are read from dh_view.js itself)
and renders in dh_view.js under headless Chromium with the profile's
totals and demangled frames.  Skipped, and shown as skipped, without
valgrind's dh_view.js; the rendering also needs Chromium."""
import html
import json
import re
import unittest

import harness
import report_common as rc


@unittest.skipUnless(rc.dh_view_js(), "valgrind's dh_view.js is not installed")
class Dhat(rc.MultiTest):
    def test_dhat_fields(self):
        d = json.loads(rc.report(self.multi.indexed, "--format=dhat").stdout)
        with open(rc.dh_view_js()) as f:
            js = f.read()
        # the field lists dh_view.js checks, read from it: of the file
        # (`let fields = [...]`, checkFields(gData, ...)) and of each
        # program point (checkFields(aPP, ...))
        names = lambda s: re.findall(r'"(\w+)"', s)
        top = names(re.search(r"let fields = \[([^\]]*)\]", js).group(1))
        top += [f for s in re.findall(r"checkFields\(gData, \[([^\]]*)\]\)", js) for f in names(s)]
        per_pp = [f for s in re.findall(r"checkFields\(aPP, \[([^\]]*)\]\)", js) for f in names(s)]
        self.assertGreaterEqual(len(top), 12)
        self.assertGreaterEqual(len(per_pp), 11)
        self.assertTrue(d["bklt"] and d["bkacc"])
        for f in top:
            self.assertIn(f, d)
        for pp in d["pps"]:
            for f in per_pp:
                self.assertIn(f, pp)
        self.assertEqual(d["dhatFileVersion"], 2)
        self.assertEqual(sum(pp["tb"] for pp in d["pps"]), self.total("TotalSize"))
        self.assertEqual(sum(pp["tbk"] for pp in d["pps"]), self.total("AllocCount"))
        self.assertEqual(sum(pp["rb"] for pp in d["pps"]), self.total("TotalAccessCount"))
        self.assertEqual(d["ftbl"][0], "[root]")

    @unittest.skipUnless(rc.chromium(), "chromium is not installed")
    def test_dhat_renders_in_dh_view(self):
        data = rc.report(self.multi.indexed, "--format=dhat").stdout
        page = rc.dh_view_page(self.scratch, data)
        r = rc.chromium_run(["--dump-dom", "file://" + page])
        self.assertEqual(rc.console_lines(r.stderr), [])
        text = html.unescape(re.sub(r"<[^>]+>", "", r.stdout))
        total = self.total("TotalSize")
        blocks = self.total("AllocCount")
        self.assertRegex(text, r"Total:\s+%s bytes \(100%%.*in %s blocks" % (
            format(total, ","), format(blocks, ",")))
        self.assertIn("#1: mixed_site(unsigned long) (%s:22:" % rc.MULTI, text)
        self.assertIn("Reads:", text)


if __name__ == "__main__":
    harness.main()
