"""Runtime core: process lifecycle and stacks - fork (also while other
threads allocate and dump), deadly signals, exit ordering (atexit handlers
run before the exit dump), large live blocks (reported, unlike LLVM 22),
thread stacks and malloc_context_size, dumps concurrent with threads and
with dlopen."""
import re

import harness
from harness import read_raw

FORK_SRC = r"""
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
int main(void) {
  char *keep = malloc(256);
  keep[0] = 1;
  char *pre = malloc(128);
  pre[0] = 1; pre[1] = 1;
  free(pre);
  pid_t pid = fork();
  if (pid == 0) {
    char *c = malloc(96);
    c[0] = 1; c[1] = 1; c[2] = 1;
    free(c);
    keep[1] = 1;
    exit(0);
  }
  waitpid(pid, 0, 0);
  return 0;
}
"""

SIGNAL_SRC = r"""
#include <stdlib.h>
int main(int argc, char **argv) {
  char *p = malloc(64);
  p[0] = 1; p[1] = 2; p[2] = 3;
  if (argv[1][0] == 's') { volatile int *z = 0; *z = 1; }
  if (argv[1][0] == 'a') abort();
  return 3;
}
"""

EXIT_SRC = r"""
#include <stdlib.h>
static char *g;
static void bye(void) { g[1] = 5; g[2] = 6; free(g); }
__attribute__((destructor)) static void dtor(void) { g = malloc(24); g[0] = 1; }
int main(void) {
  g = malloc(50);
  g[0] = 1;
  atexit(bye);
  return 0;
}
"""

LARGE_SRC = r"""
#include <malloc.h>
#include <stdlib.h>
int main(void) {
  char *big = malloc(1 << 20);
  for (int i = 0; i < (1 << 20); i += 64) big[i] = 1;       /* 16384 */
  char *al = memalign(1 << 16, 300000);
  for (int i = 0; i < 300000; i += 100) al[i] = 1;          /* 3000 */
  char *gone = malloc(200000);
  for (int i = 0; i < 200000; i += 1000) gone[i] = 1;       /* 200 */
  free(gone);
  return ((unsigned long)al & 0xffff) != 0;
}
"""

THREAD_SRC = r"""
#include <pthread.h>
#include <stdlib.h>
__attribute__((noinline)) char *deep(int n, size_t sz) {
  if (n == 0) return malloc(sz);
  char *r = deep(n - 1, sz);
  return r;
}
void *worker(void *arg) {
  for (int i = 0; i < 100; i++) {
    char *p = deep(3, 100);
    for (int j = 0; j < 100; j++) p[j] = (char)j;
    free(p);
  }
  return arg;
}
int main(void) {
  pthread_t t[4];
  for (long i = 0; i < 4; i++) pthread_create(&t[i], 0, worker, (void *)i);
  for (int i = 0; i < 4; i++) pthread_join(t[i], 0);
  char *d = deep(40, 64);
  d[0] = 1;
  free(d);
  return 0;
}
"""

STRESS_SRC = r"""
#include <pthread.h>
#include <stdlib.h>
#include <sanitizer/memprof_interface.h>
#define N 20000
void *worker(void *arg) {
  for (int i = 0; i < N; i++) {
    char *p = malloc(16 + (i % 7) * 100);
    p[0] = 1; p[1] = 1; p[2] = 1;
    free(p);
  }
  return arg;
}
int main(void) {
  pthread_t t[4];
  for (long i = 0; i < 4; i++) pthread_create(&t[i], 0, worker, 0);
  for (int i = 0; i < 20; i++) __memprof_profile_dump();
  for (int i = 0; i < 4; i++) pthread_join(t[i], 0);
  return 0;
}
"""



DLOPEN_LIB_SRC = r"""
#include <stdlib.h>
__attribute__((constructor)) static void init(void) {
  for (int i = 0; i < 20; i++)
    free(malloc(16 + i));
}
"""

DLOPEN_DUMP_SRC = r"""
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <sanitizer/memprof_interface.h>
static const char *path;
static void *loader(void *arg) {
  for (int i = 0; i < 200; i++) {
    void *h = dlopen(path, RTLD_NOW);
    if (h)
      dlclose(h);
  }
  return arg;
}
int main(int argc, char **argv) {
  path = argv[1];
  char *live = malloc(24);
  live[0] = 1;
  pthread_t t;
  pthread_create(&t, 0, loader, 0);
  for (int i = 0; i < 200; i++)
    __memprof_profile_dump();
  pthread_join(t, 0);
  return 0;
}
"""

FORK_THREADS_SRC = r"""
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sanitizer/memprof_interface.h>
static volatile int stop;
static void *churn(void *arg) {
  while (!stop) {
    char *p = malloc(16 + (rand() % 5000));
    p[0] = 1;
    char *s = strdup("churn");
    free(p);
    free(s);
    if ((long)arg == 1)
      __memprof_profile_dump();
  }
  return arg;
}
int main(void) {
  pthread_t t[2];
  for (long i = 0; i < 2; i++)
    pthread_create(&t[i], 0, churn, (void *)i);
  int ok = 0;
  for (int i = 0; i < 40; i++) {
    pid_t pid = fork();
    if (pid == 0) {
      alarm(5); /* a hung child must not outlive the test */
      char *c = malloc(6000); /* outside the churn sizes */
      c[0] = 1;
      c[1] = 1;
      free(c);
      __memprof_profile_dump();
      _exit(0);
    }
    int st;
    ok += waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
  }
  stop = 1;
  for (int i = 0; i < 2; i++)
    pthread_join(t[i], 0);
  printf("children ok %d\n", ok);
  return 0;
}
"""

# 200 call sites, each its own function allocating blocks of its own size
# (16 + i bytes, written once), site i (i % 7) + 1 times per round, the sites
# interleaved: with one-frame stacks far more of them than the runtime's
# per-thread cache of recent one-frame stacks has slots.
ONE_FRAME_SRC = r"""
#include <stdlib.h>
#define SITE(i) __attribute__((noinline)) void site##i(void) { \
    volatile char *p = malloc(16 + (i));                          \
    p[0] = 1;                                                     \
    free((void *)p); }
#define S10(t) SITE(t##0) SITE(t##1) SITE(t##2) SITE(t##3) SITE(t##4) \
               SITE(t##5) SITE(t##6) SITE(t##7) SITE(t##8) SITE(t##9)
S10() S10(1) S10(2) S10(3) S10(4) S10(5) S10(6) S10(7) S10(8) S10(9)
S10(10) S10(11) S10(12) S10(13) S10(14) S10(15) S10(16) S10(17) S10(18) S10(19)
#define P10(t) site##t##0, site##t##1, site##t##2, site##t##3, site##t##4, \
               site##t##5, site##t##6, site##t##7, site##t##8, site##t##9,
static void (*const sites[200])(void) = {
  P10() P10(1) P10(2) P10(3) P10(4) P10(5) P10(6) P10(7) P10(8) P10(9)
  P10(10) P10(11) P10(12) P10(13) P10(14) P10(15) P10(16) P10(17) P10(18) P10(19)
};
int main(void) {
  for (int r = 0; r < 50; r++)
    for (int i = 0; i < 200; i++)
      for (int k = 0; k < i % 7 + 1; k++)
        sites[i]();
  return 0;
}
"""

class LifecycleTest(harness.ProfTest):
    def build(self, src, name="p"):
        return harness.compile_program(self.scratch, self.scratch.write(name + ".c", src))

    def test_fork_child_writes_own_records(self):
        exe = self.build(FORK_SRC)
        _, profs = harness.run_program(self.scratch, exe)
        self.assertEqual(len(profs), 2)
        by_kind = {}
        for f in profs:
            (d,) = read_raw(f)
            sizes = harness.mibs_by_size(d)
            by_kind["child" if 96 in sizes else "parent"] = sizes
        parent, child = by_kind["parent"], by_kind["child"]
        self.assertEqual(parent[256]["TotalAccessCount"], 1)
        self.assertEqual(parent[128]["TotalAccessCount"], 2)
        self.assertNotIn(96, parent)
        # The child drops the parent's records but keeps inherited blocks.
        self.assertNotIn(128, child)
        self.assertEqual(child[96]["TotalAccessCount"], 3)
        self.assertEqual(child[256]["TotalAccessCount"], 2)

    def test_fork_while_threads_allocate_and_dump(self):
        """Every runtime lock is held across fork: children forked while
        other threads allocate, free and dump can allocate and dump."""
        exe = self.build(FORK_THREADS_SRC)
        r, profs = harness.run_program(self.scratch, exe, timeout=60)
        self.assertEqual(r.stdout.decode(), "children ok 40\n")
        children = []
        for f in profs:
            dumps = [harness.mibs_by_size(d) for d in read_raw(f)]
            if any(6000 in sizes for sizes in dumps):
                self.assertEqual(len(dumps), 1)  # the child's one dump
                children.append(dumps[0])
        self.assertEqual(len(children), 40)
        for sizes in children:
            self.assertEqual((sizes[6000]["AllocCount"], sizes[6000]["TotalAccessCount"]),
                             (1, 2))

    def test_segv_dumps_and_exits_1(self):
        # As LLVM's runtime: dump, then exit status 1 (not death by signal).
        exe = self.build(SIGNAL_SRC)
        r, profs = harness.run_program(self.scratch, exe, ["s"], check=False)
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"MemProfiler:DEADLYSIGNAL", r.stderr)
        self.assertEqual(len(profs), 1)
        (d,) = read_raw(profs[0])
        self.assertEqual(harness.mibs_by_size(d)[64]["TotalAccessCount"], 3)

    def test_abort_only_with_handle_abort(self):
        exe = self.build(SIGNAL_SRC)
        r, profs = harness.run_program(self.scratch, exe, ["a"], check=False)
        self.assertEqual(r.returncode, -6)
        self.assertEqual(profs, [])
        r, profs = harness.run_program(self.scratch, exe, ["a"], check=False,
                                       env={"MEMPROF_OPTIONS": "handle_abort=1"})
        self.assertEqual(r.returncode, 1)
        self.assertEqual(len(profs), 1)
        (d,) = read_raw(profs[0])
        self.assertEqual(harness.mibs_by_size(d)[64]["TotalAccessCount"], 3)

    def test_normal_exit_code_kept(self):
        exe = self.build(SIGNAL_SRC)
        r, profs = harness.run_program(self.scratch, exe, ["x"], check=False)
        self.assertEqual(r.returncode, 3)
        self.assertEqual(len(profs), 1)

    def test_exit_dump_after_atexit_and_destructors(self):
        exe = self.build(EXIT_SRC)
        _, profs = harness.run_program(self.scratch, exe)
        (d,) = read_raw(profs[0])
        s = harness.mibs_by_size(d)
        # bye() ran before the dump: the block was freed with 3 accesses.
        self.assertEqual(s[50]["TotalAccessCount"], 3)
        # The program's destructor also ran first: its block is live.
        self.assertEqual(s[24]["TotalAccessCount"], 1)

    def test_large_live_blocks_reported(self):
        exe = self.build(LARGE_SRC)
        _, profs = harness.run_program(self.scratch, exe)
        (d,) = read_raw(profs[0])
        s = harness.mibs_by_size(d)
        self.assertEqual(s[1 << 20]["TotalAccessCount"], 16384)
        self.assertEqual(s[300000]["TotalAccessCount"], 3000)
        self.assertEqual(s[200000]["TotalAccessCount"], 200)
        sites = harness.llvm_show_raw(profs[0], exe)
        self.assertEqual(harness.site_by_line(sites, "main", 1)["mib"]["TotalSize"], 1 << 20)

    def test_thread_stacks_and_depth(self):
        exe = self.build(THREAD_SRC)
        _, profs = harness.run_program(self.scratch, exe)
        sites = harness.llvm_show_raw(profs[0], exe)
        workers = [s for s in sites if s["stack"][-1][0] == "worker"]
        self.assertEqual(len(workers), 1)
        w = workers[0]
        self.assertEqual([f[0] for f in w["stack"]], ["deep"] * 4 + ["worker"])
        self.assertEqual(w["mib"]["AllocCount"], 400)
        self.assertEqual(w["mib"]["TotalAccessCount"], 40000)
        (d,) = read_raw(profs[0])
        deep = [i for i, m in d["mibs"].items() if m["TotalSize"] == 64]
        self.assertEqual(len(d["stacks"][deep[0]]), 30)  # malloc_context_size
        _, profs = harness.run_program(self.scratch, exe,
                                       env={"MEMPROF_OPTIONS": "malloc_context_size=5"})
        (d,) = read_raw(profs[-1])
        self.assertEqual({len(s) for s in d["stacks"].values() if len(s) > 1}, {5})

    def test_one_frame_stacks_exact(self):
        """Stacks of one frame (malloc_context_size=1, or code without frame
        pointers) are looked up through a small per-thread cache: 200
        interleaved sites must still give 200 distinct stacks, each with
        exactly its own counts."""
        exe = harness.compile_program(
            self.scratch, self.scratch.write("one.c", ONE_FRAME_SRC),
            out="one", cflags=["-fomit-frame-pointer"], opt="-O2")
        for env in ({"MEMPROF_OPTIONS": "malloc_context_size=1"}, {}):
            with self.subTest(env=env):
                _, profs = harness.run_program(self.scratch, exe, env=env)
                (d,) = read_raw(profs[-1])
                start, end = d["segments"][0][:2]
                by_size = {}
                for sid, m in d["mibs"].items():
                    if start <= d["stacks"][sid][0] < end and m["MinSize"] == m["MaxSize"]:
                        by_size.setdefault(m["MinSize"], []).append((sid, m))
                for i in range(200):
                    recs = by_size.get(16 + i, [])
                    self.assertEqual(len(recs), 1, f"site {i}: {len(recs)} stacks")
                    sid, m = recs[0]
                    n = 50 * (i % 7 + 1)
                    self.assertEqual((m["AllocCount"], m["TotalSize"], m["TotalAccessCount"]),
                                     (n, n * (16 + i), n), f"site {i}")
                    if env:
                        self.assertEqual(len(d["stacks"][sid]), 1)
                firsts = [d["stacks"][recs[0][0]][0] for recs in by_size.values()
                          if 16 <= recs[0][1]["MinSize"] < 216]
                self.assertEqual(len(set(firsts)), 200)

    def test_dumps_concurrent_with_threads(self):
        exe = self.build(STRESS_SRC)
        _, profs = harness.run_program(self.scratch, exe)
        dumps = read_raw(profs[0])
        self.assertEqual(len(dumps), 21)
        allocs, accesses = 0, 0
        for d in dumps:
            # Only the workers' malloc call site: pthread_create's own live
            # TLS blocks (allocated inside ld.so) are in range of sizes too.
            start, end = d["segments"][0][:2]
            for sid, m in d["mibs"].items():
                if start <= d["stacks"][sid][0] < end and \
                        16 <= m["MinSize"] and m["MaxSize"] <= 616:
                    allocs += m["AllocCount"]
                    accesses += m["TotalAccessCount"]
                    self.assertLessEqual(m["MaxAccessCount"], 3)
        # Every freed block is recorded exactly once; a dump may also see up
        # to one live block per thread (each counted with <= 3 accesses).
        self.assertGreaterEqual(allocs, 4 * 20000)
        self.assertLessEqual(allocs, 4 * 20000 + 4 * 21)
        self.assertGreaterEqual(accesses, 3 * 4 * 20000)
        self.assertLessEqual(accesses, 3 * (4 * 20000 + 4 * 21))


    def test_text_dumps_concurrent_with_dlopen(self):
        """A text dump names frames with dladdr (the loader's lock) while a
        thread inside dlopen, holding that lock, frees memory from the
        library's constructor: the dump must not hold the MIB table then."""
        lib_src = self.scratch.write("ctor.c", DLOPEN_LIB_SRC)
        lib = self.scratch.path("libctor.so")
        harness.run(["clang-22", "-shared", "-fPIC", "-O0", lib_src, "-o", lib])
        exe = harness.compile_program(self.scratch, self.scratch.write("dl.c", DLOPEN_DUMP_SRC),
                                      ldflags=["-ldl"])
        r, profs = harness.run_program(
            self.scratch, exe, [lib], timeout=60,
            env={"MEMPROF_OPTIONS": "print_text=1:print_terse=1:log_path=stdout"})
        self.assertEqual(profs, [])
        out = r.stdout.decode()
        # 200 explicit dumps + the exit dump, each listing the live block.
        self.assertEqual(len(re.findall(r"^MIB:\d+/1/24\.00/24/24/", out, re.M)), 201)
        self.assertEqual(out.count("Stack for id"), out.count("MIB:"))

if __name__ == "__main__":
    harness.main()
