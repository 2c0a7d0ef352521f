"""`show` prints the MIB fields the input carried: an indexed file's schema
(hot/cold: 4 fields) or all 27 for raw and YAML input, exactly as
llvm-profdata-22 prints the same indexed file."""
import re

import harness

YAML = """---
HeapProfileRecords:
  - GUID: 0x1234
    AllocSites:
      - Callstack:
          - { Function: 0x1234, LineOffset: 3, Column: 7, IsInlineFrame: false }
          - { Function: 0x99, LineOffset: 1, Column: 2, IsInlineFrame: false }
        MemInfoBlock:
          AllocCount: 5
          TotalSize: 640
          TotalAccessCount: 77
          TotalLifetime: 1200
          TotalLifetimeAccessDensity: 4242
"""


def records_part(text):
    """The YAML from HeapProfileRecords on (drops LLVM's summary comments)."""
    return text[text.index("HeapProfileRecords:"):]


def mib_keys(text):
    block = text[text.index("MemInfoBlock:"):]
    return re.findall(r"^\s+(\w+):\s+\d+$", block, re.M)


class ShowSchemaTest(harness.ProfTest):
    def merged(self, *flags):
        src = self.scratch.write("in.yaml", YAML)
        out = self.scratch.path("out.memprofdata")
        harness.memprof_profdata("merge", src, "-o", out, *flags)
        return out

    def test_hot_cold_schema_shows_four_fields_like_llvm(self):
        out = self.merged()
        ours = harness.memprof_profdata("show", out).stdout
        self.assertEqual(mib_keys(ours), ["AllocCount", "TotalSize", "TotalLifetime",
                                          "TotalLifetimeAccessDensity"])
        self.assertIn("AllocCount:      5\n", ours)
        self.assertIn("TotalLifetimeAccessDensity: 4242\n", ours)
        theirs = harness.run(["llvm-profdata-22", "show", "--memory", out]).stdout
        self.assertEqual(records_part(ours).rstrip(".\n"), records_part(theirs).rstrip(".\n"))

    def test_full_schema_shows_all_fields(self):
        out = self.merged("--memprof-full-schema", "--memprof-version=4")
        ours = harness.memprof_profdata("show", out).stdout
        self.assertEqual(len(mib_keys(ours)), 27)
        self.assertIn("TotalAccessCount: 77\n", ours)

    def test_yaml_input_shows_all_fields(self):
        src = self.scratch.write("in.yaml", YAML)
        ours = harness.memprof_profdata("show", src).stdout
        self.assertEqual(len(mib_keys(ours)), 27)


if __name__ == "__main__":
    harness.main()
