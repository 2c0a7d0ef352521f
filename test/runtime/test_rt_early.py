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

PROG = r"""
#include <pthread.h>
#include <stdlib.h>

extern "C" char *make_early(void) {
  char *p = (char *)malloc(48); // @ctor_malloc
  for (int i = 0; i < 48; i++)
    p[i] = 1;
  return p;
}

extern "C" int *make_tls(void) {
  int *q = new int[6]; // @tls_new
  for (int i = 0; i < 6; i++)
    q[i] = i;
  return q;
}

struct Early {
  char *p;
  Early() : p(make_early()) {}
};

struct Tls {
  int *q;
  Tls() : q(make_tls()) {}
  ~Tls() { delete[] q; }
};

thread_local Tls tls;
static Early early;
static int first_use = tls.q[0]; // initialises main's tls before main

static void *worker(void *) { return tls.q; }

int main() {
  pthread_t t;
  pthread_create(&t, 0, worker, 0);
  pthread_join(t, 0);
  free(early.p);
  return first_use;
}
"""

INIT = ["__cxx_global_var_init.2", "_GLOBAL__sub_I_early.cpp"]
TLS_INIT = ["make_tls", "_ZN3TlsC2Ev", "__cxx_global_var_init", "__tls_init"]

# Every context, leaf first -> (AllocCount, TotalSize, TotalAccessCount).
# ctor_malloc: 48 char stores, from Early::Early in the global's initialiser
# in the translation unit's static-init function.  tls_new: one copy for
# main's thread before main (6 int stores + the static initialiser's load
# of q[0]), one for the worker (6 stores), each built by the thread_local's
# initialiser called from __tls_init.
EXPECTED = {
    ("make_early", "_ZN5EarlyC2Ev", "__cxx_global_var_init.1",
     "_GLOBAL__sub_I_early.cpp"): (1, 48, 48),
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
        src = self.scratch.write("early.cpp", PROG)
        marks = harness.marked_sites(PROG)
        exe = harness.compile_program(self.scratch, src, runtime=runtime,
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
