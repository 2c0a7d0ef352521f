"""test_rt_malloc.py - the C allocation API of the runtime (rt_malloc.c).

Every malloc-family entry point, realloc chains, aligned allocation,
strdup/strndup, free_sized/free_aligned_sized and a large block live at
exit: each site's AllocCount, TotalSize and TotalAccessCount must equal what
the program does to the block (int stores/loads count 1 each; library
functions count ceil(bytes/8)).  The same program linked with LLVM 22's
runtime gives the same numbers except where marked.  A second program checks
the API semantics (errno, alignment rules, overflow) against our runtime.
"""
import harness
import rt_common

PROG = r"""
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* glibc 2.36 does not declare them yet (C23). */
void free_sized(void *p, size_t n);
void free_aligned_sized(void *p, size_t a, size_t n);

__attribute__((noinline)) static void st(volatile int *p, int n, int k) {
  for (int r = 0; r < k; r++)
    for (int i = 0; i < n; i++)
      p[i] = i;
}
__attribute__((noinline)) static int ld(volatile int *p, int n) {
  int s = 0;
  for (int i = 0; i < n; i++)
    s += p[i];
  return s;
}
__attribute__((noinline)) static void fill(volatile char *p, const char *s) {
  do
    *p++ = *s;
  while (*s++);
}

int main(void) {
  int *a = malloc(40); // @malloc
  st(a, 10, 3);
  ld(a, 10);
  free(a);
  int *b = calloc(10, 4); // @calloc
  ld(b, 10);
  ld(b, 10);
  free(b);
  int *c = malloc(24); // @chain0
  st(c, 6, 1);
  c = realloc(c, 72); // @chain1
  st(c, 18, 1);
  c = realloc(c, 8); // @chain2
  ld(c, 2);
  free(c);
  int *r0 = realloc(NULL, 40); // @realloc_null
  st(r0, 10, 2);
  free(r0);
  int *ra = reallocarray(NULL, 5, 8); // @reallocarray
  st(ra, 10, 1);
  free(ra);
  int *e = memalign(64, 40); // @memalign
  st(e, 10, 2);
  free(e);
  int *f = aligned_alloc(8, 200); // @aligned_alloc
  st(f, 50, 1);
  free(f);
  void *g;
  if (posix_memalign(&g, 256, 104)) // @posix_memalign
    return 2;
  st(g, 26, 1);
  free(g);
  int *h = valloc(104); // @valloc
  st(h, 26, 1);
  free(h);
  int *i = pvalloc(10); // @pvalloc
  st(i, 1, 1);
  free(i);
  char *src = malloc(24); // @dup_src
  fill(src, "0123456789abcdefghijklm");
  char *d = strdup(src); // @strdup
  if (strlen(d) != 23)
    return 3;
  char *n = strndup(src, 10); // @strndup
  ld((int *)n, 1);
  free(n);
  free(d);
  free(src);
  int *fs = malloc(48); // @free_sized
  st(fs, 12, 1);
  free_sized(fs, 48);
  int *fa = aligned_alloc(64, 128); // @free_aligned_sized
  st(fa, 18, 1);
  free_aligned_sized(fa, 64, 128);
  int *big = malloc(1 << 20); // @big_live
  st(big, 2, 3);
  int *small = malloc(40); // @small_live
  st(small, 10, 1);
  return 0;
}
"""

# marker -> (AllocCount, TotalSize, TotalAccessCount), from the program text.
EXPECTED = {
    "malloc": (1, 40, 3 * 10 + 10),
    "calloc": (1, 40, 2 * 10),          # calloc's zeroing is not counted
    "chain0": (1, 24, 6),
    "chain1": (1, 72, 18),              # realloc's copy is not counted
    "chain2": (1, 8, 2),
    "realloc_null": (1, 40, 20),
    "reallocarray": (1, 40, 10),
    "memalign": (1, 40, 20),
    "aligned_alloc": (1, 200, 50),
    "posix_memalign": (1, 104, 26),
    "valloc": (1, 104, 26),
    "pvalloc": (1, 4096, 1),            # pvalloc records the page-rounded size
    # 24 char stores + strdup's read of 24 bytes (3) + strndup's 10 (2)
    "dup_src": (1, 24, 24 + 3 + 2),
    "strdup": (1, 24, 3),               # strlen(d): 24 bytes -> 3
    "strndup": (1, 11, 1),
    "free_sized": (1, 48, 12),
    "free_aligned_sized": (1, 128, 18),
    "big_live": (1, 1 << 20, 6),        # live at exit
    "small_live": (1, 40, 10),          # live at exit
}

# LLVM 22 omits live secondary-allocator blocks without alignment padding
# from the exit dump (spec 5.3): a leaked 1 MiB malloc is missing.
# Its strndup interceptor has no frame pointer, so the recorded stack skips
# the caller (malloc, strndup, __libc_start_call_main): the site is lost.
LLVM22_MISSING = {"big_live", "strndup"}


class MallocFamily(rt_common.ThreeRuntimes):
    PROG = PROG
    EXPECTED = EXPECTED
    LLVM22 = {name: None for name in LLVM22_MISSING}

    def test_c_driver_links_without_libstdcxx(self):
        exe = harness.compile_program(self.scratch, self.src)
        r = harness.run(["readelf", "-d", exe])
        needed = [l for l in r.stdout.splitlines() if "(NEEDED)" in l]
        self.assertTrue(needed)
        self.assertFalse([l for l in needed if "stdc++" in l], needed)
        r, raws = harness.run_program(self.scratch, exe)
        self.assertEqual(len(raws), 1)


GROW = r"""
#include <malloc.h>
#include <stdlib.h>

int main(void) {
  int *p = 0;
  for (int i = 0; i < 100; i++) {
    p = realloc(p, 8 * (i + 1)); // @grow
    p[2 * i] = i;
  }
  long sum = 0;
  for (int i = 0; i < 100; i++)
    sum += p[2 * i];
  free(p);
  int *z = calloc(1 << 18, 4); // @big_calloc
  z[0] = 1;
  z[(1 << 18) - 1] = 2;
  int *y = realloc(z, 3 << 20); // @big_realloc
  sum += y[(1 << 18) - 1] + y[1] + y[0];
  y[(3 << 18) - 1] = 3;
  free(y);
  int *al = memalign(4096, 1 << 20); // @big_memalign_live
  al[5] = 1;
  return sum == 4950 + 2 + 0 + 1 ? 0 : 1;
}
"""

GROW_EXPECTED = {
    # 100 blocks of 8, 16, ... 800 bytes; one store into each (the copies
    # realloc makes are not counted) and 100 loads from the last one
    "grow": (100, 8 * 5050, 100 + 100),
    "big_calloc": (1, 1 << 20, 2),
    "big_realloc": (1, 3 << 20, 3 + 1),
    "big_memalign_live": (1, 1 << 20, 1),
}


class ReallocGrowth(rt_common.MarkedProgram):
    """A realloc chain merged into one site, and secondary-sized blocks:
    calloc zeroing, realloc preserving data, a live aligned 1 MiB block."""
    PROG = GROW
    SRC_NAME = "grow.c"
    EXPECTED = GROW_EXPECTED
    # LLVM 22 reads one shadow cell past a block's end (spec 3.5): the
    # page-aligned 1 MiB block ends on a 64-byte boundary and the cell
    # after it may hold a stale count left by an earlier (freed) block,
    # depending on where its mmap lands: LLVM reports 2 or (like us, and
    # always when run alone) 1.
    LLVM22 = {"big_memalign_live": [(1, 1 << 20, 2), (1, 1 << 20, 1)]}

    def test_ours(self):
        self.check_run()

    def test_llvm22_reference(self):
        self.check_run("llvm")


SEMANTICS = r"""
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cfree(void *p); /* removed from glibc's headers */

static int aligned(void *p, size_t a) { return ((uintptr_t)p & (a - 1)) == 0; }

int main(void) {
  void *p;
  errno = 0;
  printf("calloc_overflow %d %d\n", calloc(SIZE_MAX / 2, 3) == NULL, errno == ENOMEM);
  errno = 0;
  printf("reallocarray_overflow %d %d\n", reallocarray(NULL, SIZE_MAX, 2) == NULL,
         errno == ENOMEM);
  errno = 0;
  printf("malloc_huge %d %d\n", malloc(SIZE_MAX - 4096) == NULL, errno == ENOMEM);
  errno = 0;
  printf("aligned_alloc_bad %d %d\n", aligned_alloc(24, 48) == NULL, errno == EINVAL);
  p = aligned_alloc(4096, 100);
  printf("aligned_alloc_4096 %d %zu\n", aligned(p, 4096), malloc_usable_size(p));
  free(p);
  p = (void *)1;
  errno = 0;
  int rc = posix_memalign(&p, 12, 8);
  printf("posix_memalign_bad %d %d %d\n", rc == EINVAL, p == (void *)1, errno == 0);
  rc = posix_memalign(&p, 4, 8);
  printf("posix_memalign_small %d\n", rc == EINVAL);
  rc = posix_memalign(&p, 1 << 16, 8);
  printf("posix_memalign_64k %d %d\n", rc, aligned(p, 1 << 16));
  free(p);
  rc = posix_memalign(&p, 64, SIZE_MAX - 4096);
  printf("posix_memalign_huge %d\n", rc == ENOMEM);
  p = memalign(48, 10);
  printf("memalign_round_up %d\n", aligned(p, 64));
  free(p);
  p = valloc(1);
  printf("valloc %d\n", aligned(p, 4096));
  free(p);
  p = pvalloc(1);
  printf("pvalloc %d %zu\n", aligned(p, 4096), malloc_usable_size(p));
  free(p);
  p = pvalloc(0);
  printf("pvalloc0 %zu\n", malloc_usable_size(p));
  free(p);
  p = malloc(0);
  printf("malloc0 %d\n", p != NULL);
  free(p);
  char *s = malloc(8);
  strcpy(s, "abc");
  s = realloc(s, 4000);
  printf("realloc_grow %s %zu\n", s, malloc_usable_size(s));
  s = realloc(s, 2);
  printf("realloc_shrink %c%c %zu\n", s[0], s[1], malloc_usable_size(s));
  printf("realloc_zero %d\n", realloc(s, 0) == NULL);
  int *z = calloc(1000, 4);
  int zero = 1;
  for (int i = 0; i < 1000; i++) zero &= z[i] == 0;
  printf("calloc_zero %d\n", zero);
  free(z);
  printf("usable_null %zu\n", malloc_usable_size(NULL));
  struct mallinfo mi = mallinfo();
  struct mallinfo2 mi2 = mallinfo2();
  printf("mallinfo %d %zu\n", mi.arena, mi2.uordblks);
  printf("mallopt %d %d\n", mallopt(M_MMAP_THRESHOLD, 1 << 20), mallopt(12345, 1));
  printf("malloc_trim %d\n", malloc_trim(0));
  char *d = strndup("hello world", 5);
  printf("strndup %s %zu\n", d, malloc_usable_size(d));
  free(d);
  d = strdup("");
  printf("strdup_empty %d %zu\n", d[0], malloc_usable_size(d));
  free(d);
  free(NULL);
  cfree(malloc(3));
  return 0;
}
"""

SEMANTICS_OUT = """\
calloc_overflow 1 1
reallocarray_overflow 1 1
malloc_huge 1 1
aligned_alloc_bad 1 1
aligned_alloc_4096 1 100
posix_memalign_bad 1 1 1
posix_memalign_small 1
posix_memalign_64k 0 1
posix_memalign_huge 1
memalign_round_up 1
valloc 1
pvalloc 1 4096
pvalloc0 4096
malloc0 1
realloc_grow abc 4000
realloc_shrink ab 2
realloc_zero 1
calloc_zero 1
usable_null 0
mallinfo 0 0
mallopt 1 0
malloc_trim 0
strndup hello 6
strdup_empty 0 1
"""


class MallocSemantics(harness.ProfTest):
    def test_api_semantics(self):
        src = self.scratch.write("sem.c", SEMANTICS)
        exe = harness.compile_program(self.scratch, src, out="sem",
                                      cflags=["-Wno-deprecated-declarations"])
        r, _ = harness.run_program(self.scratch, exe)
        self.assertEqual(r.stdout.decode(), SEMANTICS_OUT)


if __name__ == "__main__":
    harness.main()
