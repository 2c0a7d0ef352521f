"""`memprof-profdata report --format=folded`: the input of flamegraph.pl
and inferno.  Every line is "root;...;leaf VALUE" in their grammar, one per
context with a value, and the values sum to the profile's total of the
--sort key (llvm-profdata-22's reading of the merged file)."""
import harness
import report_common as rc


class Folded(rc.MultiTest):
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


if __name__ == "__main__":
    harness.main()
