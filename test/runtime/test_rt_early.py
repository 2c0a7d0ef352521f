"""test_rt_early.py - allocations made before main.

A C++ static constructor and a thread_local initialiser (first used from
another static initialiser, so it runs before main too; a thread then
initialises its own copy) allocate.  Both must be recorded with full
stacks (the leaf frame in the allocating function, its callers the
constructor / TLS-init frames) and exact counts, with the static runtime
(initialised from .preinit_array) and with libmemprof.so (initialised by
its constructor, which runs before the program's).  Ours also attributes
what libc allocates there for the program to the program's caller.
"""
import os

import harness


PROG = "before_main.cpp"  # in progs/
# The translation unit's static-init function is named after its file.
INIT = ["__cxx_global_var_init.2", f"_GLOBAL__sub_I_{PROG}"]
TLS_INIT = ["make_tls", "_ZN3TlsC2Ev", "__cxx_global_var_init", "__tls_init"]

# Every context, leaf first -> (AllocCount, TotalSize, TotalAccessCount).
# ctor_malloc: 48 char stores, from Early::Early in the global's initialiser
# in the translation unit's static-init function.  tls_new: one copy for
# main's thread before main (6 int stores + the static initialiser's load
# of q[0]), one for the worker (6 stores), each built by the thread_local's
# initialiser called from __tls_init.
EXPECTED = {
    ("make_early", "_ZN5EarlyC2Ev", "__cxx_global_var_init.1", INIT[1]): (1, 48, 48),
    tuple(TLS_INIT + INIT): (1, 24, 6 + 1),
    tuple(TLS_INIT + ["_ZL6workerPv"]): (1, 24, 6),
}


# What libc allocates for the program, ours only: the thread_local's
# destructor registration (__cxa_thread_atexit, from its initialiser) in
# each thread, and the new thread's TLS (pthread_create, from main).  The
# runtime unwinds libc's frames by their tables to the program's caller;
# LLVM's frame-pointer walk loses these stacks inside libc.  Their sizes
# are glibc's business: only the contexts are checked.
LIBC_CONTEXTS = {
    ("__cxx_global_var_init", "__tls_init", *INIT),
    ("__cxx_global_var_init", "__tls_init", "_ZL6workerPv"),
    ("main",),
}


class BeforeMain(harness.ProfTest):
    def check(self, runtime="ours", ldflags=()):
        marks = harness.marked_sites(harness.prog_text(__file__, PROG))
        exe = harness.compile_program(self.scratch, harness.prog_path(__file__, PROG),
                                      runtime=runtime,
                                      ldflags=["-lpthread", *ldflags])
        _, raws = harness.run_program(self.scratch, exe)
        self.assertEqual(len(raws), 1)
        got, libc = {}, set()
        for s in harness.llvm_show_raw(raws[0], exe):
            names = tuple(f[0] for f in s["stack"])
            self.assertNotIn(names, got)
            if names in LIBC_CONTEXTS:
                libc.add(names)
                continue
            got[names] = (s["mib"]["AllocCount"], s["mib"]["TotalSize"],
                          s["mib"]["TotalAccessCount"])
            leaf = {"make_early": "ctor_malloc", "make_tls": "tls_new"}[names[0]]
            self.assertEqual(s["stack"][0][:2], marks[leaf])
        self.assertEqual(got, EXPECTED)
        self.assertEqual(libc, set() if runtime == "llvm" else LIBC_CONTEXTS)

    def test_static_runtime(self):
        self.check()

    def test_shared_runtime(self):
        libdir = os.path.dirname(harness.find_built("libmemprof.so"))
        self.check("shadow", [f"-L{libdir}", "-lmemprof", f"-Wl,-rpath,{libdir}"])

    def test_llvm22_reference(self):
        self.check("llvm")


if __name__ == "__main__":
    harness.main()
