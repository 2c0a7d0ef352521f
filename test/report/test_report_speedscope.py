"""`memprof-profdata report --format=speedscope` validates against the
file-format-schema.json that speedscope's npm package ships (scripts/setup.sh
installs it), with one sampled profile per value whose weights sum to the
profile's totals and root-first stacks.  Skipped, and shown as skipped,
without the schema or python3's jsonschema."""
import json
import os
import subprocess
import unittest

import harness
import report_common as rc

try:
    import jsonschema
except ImportError:
    jsonschema = None


def speedscope_schema():
    try:
        root = subprocess.run(["npm", "root", "-g"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True).stdout.strip()
    except FileNotFoundError:
        return None
    path = os.path.join(root, "speedscope", "dist", "release", "file-format-schema.json")
    return path if os.path.exists(path) else None


@unittest.skipUnless(jsonschema, "python3's jsonschema is not installed")
@unittest.skipUnless(speedscope_schema(), "speedscope's npm package is not installed")
class Speedscope(rc.MultiTest):
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


if __name__ == "__main__":
    harness.main()
