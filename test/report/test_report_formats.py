"""The folded, speedscope and DHAT outputs of `memprof-profdata report`,
each against its consumer: folded lines sum to the profile's totals per
--sort key in flamegraph.pl's grammar; speedscope's JSON validates against
the file-format-schema.json that speedscope's npm package ships (installed
by scripts/setup.sh); DHAT's JSON has every field dh_view.js checks and
renders in valgrind's dh_view.js under headless Chromium with the
profile's totals.  A test whose consumer is missing is skipped, visibly."""
import glob
import html
import json
import os
import re
import shutil
import subprocess
import unittest

import harness
import report_common as rc


def speedscope_schema():
    try:
        root = subprocess.run(["npm", "root", "-g"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True).stdout.strip()
    except FileNotFoundError:
        return None
    path = os.path.join(root, "speedscope", "dist", "release", "file-format-schema.json")
    return path if os.path.exists(path) else None


def dh_view_js():
    hits = glob.glob("/usr/libexec/valgrind/dh_view.js") + glob.glob("/usr/lib/*/valgrind/dh_view.js")
    return hits[0] if hits else None


try:
    import jsonschema
except ImportError:
    jsonschema = None


class Formats(rc.MultiTest):
    def total(self, field):
        return sum(m[field] for m in self.ctx.values())

    def test_folded_sums(self):
        for key, field in (("bytes", "TotalSize"), ("allocs", "AllocCount"),
                           ("lifetime", "TotalLifetime"), ("accesses", "TotalAccessCount"),
                           ("density", "TotalLifetimeAccessDensity")):
            with self.subTest(key=key):
                out = rc.report(self.multi.indexed, "--format=folded", f"--sort={key}").stdout
                lines = out.splitlines()
                for line in lines:
                    self.assertRegex(line, r"^[^;\n]+(;[^;\n]+)* \d+$")
                self.assertEqual(sum(int(l.rsplit(" ", 1)[1]) for l in lines), self.total(field))
                nonzero = [m for m in self.ctx.values() if m[field]]
                self.assertEqual(len(lines), len(nonzero))
        out = rc.report(self.multi.indexed, "--format=folded").stdout
        self.assertIn("main;top_a();mid1(unsigned long);mixed_site(unsigned long) 65536\n", out)

    @unittest.skipUnless(jsonschema, "python3's jsonschema is not installed")
    @unittest.skipUnless(speedscope_schema(), "speedscope's npm package is not installed")
    def test_speedscope_schema(self):
        with open(speedscope_schema()) as f:
            schema = json.load(f)
        d = json.loads(rc.report(self.multi.indexed, "--format=speedscope").stdout)
        jsonschema.validate(d, schema)
        names = [p["name"] for p in d["profiles"]]
        self.assertEqual(names, ["allocated bytes", "allocations", "total lifetime", "accesses"])
        frames = d["shared"]["frames"]
        for p, field in zip(d["profiles"], ["TotalSize", "AllocCount", "TotalLifetime",
                                            "TotalAccessCount"]):
            self.assertEqual(sum(p["weights"]), self.total(field))
            self.assertEqual(p["endValue"], self.total(field))
        biggest = d["profiles"][0]["samples"][d["profiles"][0]["weights"].index(65536)]
        self.assertEqual([frames[i]["name"] for i in biggest],
                         ["main", "top_a()", "mid1(unsigned long)", "mixed_site(unsigned long)"])
        self.assertEqual((frames[biggest[-1]]["file"], frames[biggest[-1]]["line"]), (rc.MULTI, 22))
        # a schema violation is caught (the check can fail)
        d["profiles"][0]["unit"] = "furlongs"
        with self.assertRaises(jsonschema.ValidationError):
            jsonschema.validate(d, schema)

    @unittest.skipUnless(dh_view_js(), "valgrind's dh_view.js is not installed")
    def test_dhat_fields(self):
        d = json.loads(rc.report(self.multi.indexed, "--format=dhat").stdout)
        with open(dh_view_js()) as f:
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

    @unittest.skipUnless(dh_view_js() and rc.chromium(), "dh_view.js or chromium is missing")
    def test_dhat_renders_in_dh_view(self):
        data = rc.report(self.multi.indexed, "--format=dhat").stdout
        js = dh_view_js()
        page = self.scratch.write("dh.html", f"""<!DOCTYPE html><html><head><meta charset="UTF-8">
<script src="file://{js}"></script></head><body>
<script id="d" type="application/json">{data}</script>
<script>
window.addEventListener("load", () => {{
  onLoad();
  gFilename = "report.json";
  gData = JSON.parse(document.getElementById("d").textContent);
  buildTree();
  displayTree();
}});
</script></body></html>""")
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
