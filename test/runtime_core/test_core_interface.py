"""Runtime core: the public interface beyond dumping - sanitizer allocator
queries, malloc/free hooks (weak definitions and installed pairs),
allocator statistics (atexit=1 and __memprof_print_accumulated_stats),
help=1, and the access-recording entry points with exact shadow effects."""
import re

import harness
from harness import read_raw

IFACE_SRC = r"""
#include <stdio.h>
#include <stdlib.h>
#include <sanitizer/allocator_interface.h>
#include <sanitizer/memprof_interface.h>
static int mallocs, frees, imallocs, ifrees;
void __sanitizer_malloc_hook(const volatile void *p, size_t n) { (void)p; (void)n; mallocs++; }
void __sanitizer_free_hook(const volatile void *p) { (void)p; frees++; }
static void im(const volatile void *p, size_t n) { (void)p; (void)n; imallocs++; }
static void ifr(const volatile void *p) { (void)p; ifrees++; }
int main(void) {
  __sanitizer_install_malloc_and_free_hooks(im, ifr);
  size_t before = __sanitizer_get_current_allocated_bytes();
  char *p = malloc(123);
  char *big = malloc(300000);
  int x;
  size_t delta = __sanitizer_get_current_allocated_bytes() - before;
  printf("size %zu %zu\n", __sanitizer_get_allocated_size(p),
         __sanitizer_get_allocated_size(big));
  printf("own %d %d %d %d\n", __sanitizer_get_ownership(p), __sanitizer_get_ownership(p + 1),
         __sanitizer_get_ownership(&x), __sanitizer_get_ownership(big));
  printf("begin %d %d\n", __sanitizer_get_allocated_begin(p + 100) == p,
         __sanitizer_get_allocated_begin(big + 299999) == big);
  printf("bytes %zu\n", delta);
  printf("est %zu\n", __sanitizer_get_estimated_allocated_size(77));
  __memprof_record_access(p);
  __memprof_record_access_range(p + 64, 17);  /* 3 counts */
  free(p);
  free(big);
  printf("hooks %d %d %d %d\n", mallocs, frees, imallocs, ifrees);
  printf("size-after %zu\n", __sanitizer_get_allocated_size(p));
  fflush(stdout);
  return 0;
}
"""


class InterfaceTest(harness.ProfTest):
    def test_allocator_interface_and_hooks(self):
        exe = harness.compile_program(self.scratch, self.scratch.write("i.c", IFACE_SRC))
        r, profs = harness.run_program(self.scratch, exe)
        out = r.stdout.decode()
        self.assertIn("size 123 300000\n", out)
        self.assertIn("own 1 0 0 1\n", out)
        self.assertIn("begin 1 1\n", out)
        self.assertIn("bytes 300123\n", out)
        self.assertIn("est 77\n", out)
        # printf's stdout buffer is a third allocation seen by the hooks.
        self.assertRegex(out, r"hooks 3 2 3 2\n")
        self.assertIn("size-after 0\n", out)
        (d,) = read_raw(profs[0])
        by = {m["TotalSize"]: m for m in d["mibs"].values()}
        self.assertEqual(by[123]["TotalAccessCount"], 4)
        self.assertEqual(by[300000]["TotalAccessCount"], 0)

    def test_stats_and_help(self):
        exe = harness.compile_program(self.scratch, self.scratch.write("i.c", IFACE_SRC))
        r, _ = harness.run_program(self.scratch, exe, env={
            "MEMPROF_OPTIONS": "atexit=1:help=1:log_path=stderr:print_text=1"})
        err = r.stderr.decode()
        self.assertIn("Available flags for MemProfiler:", err)
        for flag in ("log_path", "print_text", "dump_at_exit", "raw_version", "handle_abort"):
            self.assertRegex(err, rf"\n\t{flag}\n")
        self.assertIn("MemProfiler exit stats:\n", err)
        m = re.search(r"Stats: \d+M malloced \(\d+M for overhead\) by (\d+) calls", err)
        self.assertEqual(int(m.group(1)), 3)
        m = re.search(r"Stats: \d+M freed by (\d+) calls", err)
        self.assertEqual(int(m.group(1)), 2)
        # The stats come before the exit profile.
        self.assertLess(err.index("MemProfiler exit stats:"), err.index("Recorded MIBs"))


if __name__ == "__main__":
    harness.main()
