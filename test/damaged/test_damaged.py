"""test_damaged.py - memprof-profdata on damaged profiles (files/, made by
make_damaged.py, listed in cases.txt with the message each must produce).

For every case, `show` and `merge` must: exit with the listed status (never
by a signal, no sanitizer report), print "memprof-profdata: error: FILE: "
followed by a message containing the listed substring, and leave -o OUT
untouched (an existing OUT keeps its bytes, no temporary file is left).
The undamaged base files must be accepted, and the checked-in corpus must
be what make_damaged.py generates today.
"""
import filecmp
import os
import subprocess
import sys
import unittest

import harness

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = os.path.join(HERE, "files")
SEEDPROG = os.path.join(os.path.dirname(HERE), "fuzz", "seedprog.py")
SENTINEL = b"previous output, must survive\n"


def load_cases():
    cases = []
    with open(os.path.join(HERE, "cases.txt")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, msg, rc = line.rstrip("\n").split("\t")
            cases.append((name, msg, int(rc)))
    return cases


class DamagedTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch = harness.Scratch("damaged")
        harness.run([sys.executable, SEEDPROG, "build", cls.scratch.path("bin")])
        cls.binary = cls.scratch.path("bin", "seedprog22")
        cls.tool = harness.profdata_tool()

    @classmethod
    def tearDownClass(cls):
        cls.scratch.cleanup()

    def run_tool(self, *args):
        try:
            return subprocess.run([self.tool, *args], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, timeout=60)
        except subprocess.TimeoutExpired:
            self.fail(f"memprof-profdata {' '.join(args)}: no exit in 60 s (hang)")

    def check_refused(self, cmd, path, msg, rc, label):
        outdir = self.scratch.path("out-" + label)
        os.makedirs(outdir, exist_ok=True)
        out = os.path.join(outdir, "OUT")
        with open(out, "wb") as f:
            f.write(SENTINEL)
        r = self.run_tool(cmd, path, f"--profiled-binary={self.binary}", "-o", out)
        err = r.stderr.decode(errors="replace")
        self.assertGreaterEqual(r.returncode, 0, f"killed by signal {-r.returncode}\n{err}")
        self.assertNotIn("Sanitizer", err)
        self.assertEqual(r.returncode, rc, err)
        self.assertIn(f"memprof-profdata: error: {path}: ", err)
        self.assertIn(msg, err, "message missing or different")
        with open(out, "rb") as f:
            self.assertEqual(f.read(), SENTINEL, "-o OUT was modified")
        self.assertEqual(os.listdir(outdir), ["OUT"], "temporary file left behind")

    def test_cases(self):
        cases = load_cases()
        self.assertGreater(len(cases), 60)
        for name, msg, rc in cases:
            for cmd in ("show", "merge"):
                with self.subTest(case=name, cmd=cmd):
                    self.check_refused(cmd, os.path.join(FILES, name), msg, rc,
                                       f"{cmd}-{name}")

    def test_damaged_after_good_input_writes_nothing(self):
        out = self.scratch.path("merged")
        good = os.path.join(HERE, "base-v5.profraw")
        bad = os.path.join(FILES, "raw-stack-id-repeated.profraw")
        r = self.run_tool("merge", good, bad, f"--profiled-binary={self.binary}",
                          "-o", out)
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"error: {bad}: ", r.stderr.decode())
        self.assertFalse(os.path.exists(out))

    def test_base_files_are_accepted(self):
        for base in ("base-v5.profraw", "base-v3.profraw", "base-llvm22.indexed",
                     "base.yaml", "base-ours.memprofdata",
                     "base-dap-llvm22.indexed", "base-dap.yaml"):
            with self.subTest(base=base):
                r = self.run_tool("show", os.path.join(HERE, base),
                                  f"--profiled-binary={self.binary}")
                if base == "base-v3.profraw":
                    # recorded by LLVM 19's runtime: its own binary
                    r = self.run_tool("show", os.path.join(HERE, base),
                                      "--profiled-binary=" +
                                      self.scratch.path("bin", "seedprog19"))
                self.assertEqual(r.returncode, 0, r.stderr.decode())
                self.assertIn(b"HeapProfileRecords:", r.stdout)
        # the facts of version 1.1 (make_damaged.with_facts), undamaged
        import make_damaged
        with open(os.path.join(HERE, "base-ours.memprofdata"), "rb") as f:
            facts = make_damaged.with_facts(f.read(), [0, 4096, 65536], flags=1)
        path = self.scratch.path("facts.memprofdata")
        with open(path, "wb") as f:
            f.write(facts)
        r = self.run_tool("show", path)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        self.assertEqual(r.stderr.decode().splitlines(), [
            "memprof-profdata: note: Sampled every 4096 or 65536 bytes on average (the "
            "merged inputs differ; some recorded every allocation): counts, sizes and "
            "lifetimes are estimates",
            "memprof-profdata: note: Not instrumented (preloaded): no access counts; no "
            "hot/cold verdicts"])
        for base in ("base-ir22.profraw", "base-ir22.indexed"):
            with self.subTest(base=base):
                r = self.run_tool("show", os.path.join(HERE, base))
                self.assertEqual(r.returncode, 0, r.stderr.decode())
                self.assertIn(b"# Total functions: 4\n", r.stdout)

    def make_bad_binaries(self):
        """(path, exact message or None) for damaged --profiled-binary files:
        None = any outcome but a crash (exit 0 or 1)."""
        with open(self.binary, "rb") as f:
            elf = f.read()
        d = self.scratch.path("badbin")
        os.makedirs(d, exist_ok=True)
        out = []

        def put(name, data, msg):
            p = os.path.join(d, name)
            with open(p, "wb") as f:
                f.write(data)
            out.append((p, msg))

        put("text.bin", b"hello\n", "not an ELF file")
        put("empty.bin", b"", "not an ELF file")
        put("truncated.bin", elf[:4096], None)
        shoff = bytearray(elf)
        shoff[0x28:0x30] = (len(elf) + 100000).to_bytes(8, "little")
        put("shoff-past-end.bin", bytes(shoff), None)
        sections = harness.run(["readelf", "-S", "-W", self.binary]).stdout
        for sec in (".debug_info", ".debug_line", ".debug_abbrev", ".debug_str",
                    ".debug_addr", ".debug_rnglists", ".debug_str_offsets"):
            for line in sections.splitlines():
                parts = line.replace("[ ", "[").split()
                if sec in parts:
                    i = parts.index(sec)
                    off, size = int(parts[i + 3], 16), int(parts[i + 4], 16)
                    bad = bytearray(elf)
                    bad[off:off + size] = bytes([0xff]) * size
                    put(f"ff{sec}.bin", bytes(bad), None)
                    for k in range(off, off + size, 7):
                        bad[k] = (k * 131) & 0xff
                    put(f"mixed{sec}.bin", bytes(bad), None)
        out.append((d, "not an ELF file (not a regular file)"))
        out.append((os.path.join(d, "missing.bin"), "no such file"))
        return out

    def test_bad_profiled_binaries(self):
        prof = os.path.join(HERE, "base-v5.profraw")
        bins = self.make_bad_binaries()
        self.assertGreater(len(bins), 10)
        for path, msg in bins:
            for cmd in ("show", "merge"):
                with self.subTest(binary=os.path.basename(path), cmd=cmd):
                    out = self.scratch.path("badbin-out")
                    r = self.run_tool(cmd, prof, f"--profiled-binary={path}", "-o", out)
                    err = r.stderr.decode(errors="replace")
                    self.assertGreaterEqual(r.returncode, 0, err)
                    self.assertNotIn("Sanitizer", err)
                    self.assertNotIn("runtime error:", err)
                    if msg is None:
                        self.assertIn(r.returncode, (0, 1), err)
                    else:
                        self.assertEqual(r.returncode, 1, err)
                        self.assertIn(f"memprof-profdata: error: {path}: ", err)
                        self.assertIn(msg, err)
                        self.assertFalse(os.path.exists(out))
                    if os.path.exists(out):
                        os.unlink(out)

    def test_special_files_as_input(self):
        """Devices, folders and FIFOs are refused at once: a FIFO with no
        writer must not block the tool forever."""
        fifo = self.scratch.path("fifo")
        os.mkfifo(fifo)
        for path in ("/dev/zero", "/dev/null", self.scratch.dir, fifo):
            with self.subTest(input=path):
                try:
                    r = subprocess.run([self.tool, "show", path], stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, timeout=10)
                except subprocess.TimeoutExpired:
                    self.fail(f"memprof-profdata show {path}: hangs")
                self.assertEqual(r.returncode, 1)
                self.assertIn(f"memprof-profdata: error: {path}: not a regular file",
                              r.stderr.decode())

    def test_corpus_is_up_to_date(self):
        gen = self.scratch.path("regen")
        harness.run([sys.executable, os.path.join(HERE, "make_damaged.py"), gen,
                     self.scratch.path("cases.txt")])
        self.assertTrue(filecmp.cmp(self.scratch.path("cases.txt"),
                                    os.path.join(HERE, "cases.txt"), shallow=False))
        names = sorted(os.listdir(gen))
        self.assertEqual(names, sorted(os.listdir(FILES)))
        _, mismatch, errors = filecmp.cmpfiles(gen, FILES, names, shallow=False)
        self.assertEqual(mismatch + errors, [])


if __name__ == "__main__":
    harness.main()
