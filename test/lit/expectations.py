"""expectations.py - per runtime, the upstream tests that are expected to
fail or that do not apply, each with its reason.  Every other test must pass.

  ("XFAIL", line, why)    the test must fail, and at RUN line `line`: a
                          failure earlier in the test is a real failure, a
                          pass is reported as an unexpected pass (XPASS)
  ("UNSUPPORTED", why)    the test is not run

ExpectationsShTest is the lit test format that applies them (it lives in a
module, not in lit.cfg.py, so that lit's worker processes can unpickle it)."""

import re

import lit.formats
import lit.Test

RUNTIMES = ("llvm", "ours-static", "ours-shared")

# LLVM 22's runtime predates these upstream tests (MANIFEST.md: post-22).
LLVM22 = {
    "atexit_stats.cpp": (
        "XFAIL", 7, "post-22: LLVM 22 writes the exit statistics into the "
        "log_path file, not to stderr"),
    "malloc-size-too-big.cpp": (
        "XFAIL", 5, "post-22: LLVM 22 writes the error report into the "
        "log_path file, not to stderr"),
    "invalid_aligned_new.cpp": (
        "XFAIL", 6, "post-22: LLVM 22 returns a block for operator new with "
        "alignment 0 instead of reporting the invalid alignment"),
    "memprof_histogram_tail_clear.cpp": (
        "XFAIL", 6, "post-22: LLVM 22 does not clear a reused block's partial "
        "last histogram counter"),
    "memprof_nonhistogram_tail_clear.cpp": (
        "XFAIL", 7, "post-22: LLVM 22 does not clear the shadow of a reused "
        "block smaller than 8 bytes"),
    "opendir_null.cpp": (
        "XFAIL", 5, "post-22: LLVM 22's opendir interceptor dereferences the "
        "NULL an interposed opendir returns"),
}

# The test's last steps need llvm-profdata newer than 22 (several
# --profiled-binary with duplicate build-id detection, module-qualified
# GUIDs); LLVM 22's accepts the duplicate binaries silently.  Everything
# before line 16 (the shared runtime LD_PRELOADed into an uninstrumented
# executable writing one raw profile) must pass.
NEW_PROFDATA = ("XFAIL", 16, "post-22: needs llvm-profdata newer than 22")

# Lines 9-10 (the dlopen/thread stress itself) must pass; line 11 checks
# sanitizer_common's trace of its __tls_get_addr interceptor at verbosity=2.
# Ours does not intercept __tls_get_addr: a memory profiler has nothing to
# track there (glibc allocates dynamic TLS blocks with malloc, which we
# profile), and the interceptor would sit on every general-dynamic TLS
# access of shared libraries.
NO_TLS_TRACE = ("XFAIL", 11, "no __tls_get_addr interceptor, so no "
                "'==__tls_get_addr:' trace at verbosity=2")

EXPECT = {
    "llvm": LLVM22,
    "ours-static": {
        "stress_dtls.c": NO_TLS_TRACE,
    },
    "ours-shared": {
        "stress_dtls.c": NO_TLS_TRACE,
        "multiple-profiled-dsos.cpp": NEW_PROFDATA,
    },
}


def lookup(runtime, test):
    """The expectation tuple for `test` under `runtime`, or None."""
    return EXPECT[runtime].get(test)


def failed_line(output):
    """The RUN line lit was executing when the test failed (None if unknown)."""
    lines = re.findall(r"^# RUN: at line (\d+)", output, re.M)
    return int(lines[-1]) if lines else None


class ExpectationsShTest(lit.formats.ShTest):
    def __init__(self, runtime, execute_external):
        super().__init__(execute_external)
        self.runtime = runtime

    def execute(self, test, litConfig):
        expect = lookup(self.runtime, "/".join(test.path_in_suite))
        if expect and expect[0] == "UNSUPPORTED":
            return lit.Test.Result(lit.Test.UNSUPPORTED,
                                   "not applicable to %s: %s\n" % (self.runtime, expect[1]))
        result = super().execute(test, litConfig)
        if not expect or result.code not in (lit.Test.PASS, lit.Test.FAIL):
            return result
        _, line, why = expect
        note = "\nexpected with %s: fails at RUN line %d (%s)\n" % (self.runtime, line, why)
        if result.code is lit.Test.PASS:
            result.code = lit.Test.XPASS
        elif failed_line(result.output) == line:
            result.code = lit.Test.XFAIL
        else:
            note += "but it failed at line %s\n" % failed_line(result.output)
        result.output += note
        return result
