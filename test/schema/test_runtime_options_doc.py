"""test_runtime_options_doc.py - the runtime's options exist once.

runtime/base/rt_flags.inc is the one list: docs/runtime-options.md must be what
scripts/gen-runtime-options.py makes of it, and `help=1` of the built
runtime must print every option of the list, in its order, with its
default as the current value."""
import os
import re
import subprocess
import sys
import unittest

import harness

sys.path.insert(0, os.path.join(harness.ROOT, "scripts"))
gen = __import__("gen-runtime-options")


class RuntimeOptions(harness.ProfTest):
    def flags(self):
        with open(gen.INC) as f:
            return gen.read_flags(f.read())

    def test_document_is_generated_from_the_list(self):
        r = subprocess.run([sys.executable, os.path.join(harness.ROOT, "scripts",
                                                         "gen-runtime-options.py"), "--check"],
                           stderr=subprocess.PIPE, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_help_prints_the_list_with_defaults(self):
        src = self.scratch.write("main.c", "int main(void) { return 0; }\n")
        exe = harness.compile_program(self.scratch, src)
        r, _ = harness.run_program(self.scratch, exe, env={"MEMPROF_OPTIONS": "help=1"})
        got = re.findall(r"^\t(\w+)\n\t\t- .*\(Current Value: (.*)\)$",
                         r.stderr.decode(), re.M)
        want = []
        for _, kind, name, default, _ in self.flags():
            shown = gen.shown_default(kind, default)
            if name == "help":
                shown = "true"
            want.append((name, "" if shown == "(unset)" else shown))
        self.assertEqual(got, want)
        self.assertGreaterEqual(len(want), 20)


if __name__ == "__main__":
    harness.main()
