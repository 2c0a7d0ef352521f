"""test_rt_intercept.py - libc interceptors count user buffers like LLVM's.

Each heap block is filled by the program with char stores (one count per
byte written, terminator included), handed to one libc function, then
freed.  TotalAccessCount = the stores + ceil(len/8) for every range the
interceptor reads or writes, with the lengths of LLVM's sanitizer_common /
memprof interceptors (strict_memcmp=1, strict_string_checks=0).  The same
program linked with LLVM 22's runtime gives the same numbers, except for
stpcpy and memccpy, which LLVM 22 does not intercept (uncounted there).
Covered: str*, mem*, read/write/pread/pwrite/readv/writev, fread/fwrite/
fgets/fputs, atoi/atol/atoll/strtol/strtoll.
"""
import harness
import rt_common

PROG = r"""
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/uio.h>
#include <unistd.h>

/* Calls through volatile pointers: the compiler may not turn them into
 * its own intrinsics (which go to __memprof_memcpy & co. instead). */
static void *(*volatile p_memcpy)(void *, const void *, size_t) = memcpy;
static void *(*volatile p_memmove)(void *, const void *, size_t) = memmove;
static void *(*volatile p_memset)(void *, int, size_t) = memset;
static size_t (*volatile p_strlen)(const char *) = strlen;
static volatile size_t n40 = 40, n200 = 200; /* sizes the compiler cannot see */

__attribute__((noinline)) static char *fill(volatile char *p, const char *s) {
  volatile char *d = p;
  do
    *d++ = *s;
  while (*s++);
  return (char *)p;
}
#define MK(n, s) fill(malloc(n), s)
static volatile long sink;

int main(void) {
  int fds[2];
  if (pipe(fds)) return 1;
  char *a, *b;
  a = MK(40, "hello world"); // @strlen
  sink = p_strlen(a); free(a);
  a = MK(40, "hello world"); // @strnlen
  sink = strnlen(a, 5); free(a);
  a = MK(40, "aaaaaaaaaaaaaaaaaaaa1"); // @strcmp_a
  b = MK(40, "aaaaaaaaaaaaaaaaaaaa2"); // @strcmp_b
  sink = strcmp(a, b); free(a); free(b);
  a = MK(40, "aaaaaaaaaaaaaaaaaaaa1"); // @strncmp_a
  b = MK(40, "aaaaaaaaaaaaaaaaaaaa2"); // @strncmp_b
  sink = strncmp(a, b, 10); free(a); free(b);
  a = MK(40, "HeLLo World Foo"); // @strcasecmp_a
  b = MK(40, "hello world foo"); // @strcasecmp_b
  sink = strcasecmp(a, b); free(a); free(b);
  a = MK(40, "HeLLo World Foo"); // @strncasecmp_a
  b = MK(40, "hello world fox"); // @strncasecmp_b
  sink = strncasecmp(a, b, 9); free(a); free(b);
  a = MK(40, "0123456789abcdefxyz"); // @strchr
  sink = (long)strchr(a, 'x'); free(a);
  a = MK(40, "0123456789abcdefxyz"); // @strchr_miss
  sink = (long)strchr(a, 'Q'); free(a);
  a = MK(40, "0123456789abcdefxyz"); // @strrchr
  sink = (long)strrchr(a, '1'); free(a);
  a = MK(40, "the quick brown fox jumps"); // @strstr_h
  b = MK(40, "fox"); // @strstr_n
  sink = (long)strstr(a, b); free(a); free(b);
  a = MK(40, "the quick brown FOX jumps"); // @strcasestr_h
  b = MK(40, "fox"); // @strcasestr_n
  sink = (long)strcasestr(a, b); free(a); free(b);
  a = MK(40, "aabbaabbaabbxyz"); // @strspn_s
  b = MK(40, "ab"); // @strspn_set
  sink = strspn(a, b); free(a); free(b);
  a = MK(40, "abcdefghijklmnopqrst,x"); // @strcspn_s
  b = MK(40, ",;"); // @strcspn_set
  sink = strcspn(a, b); free(a); free(b);
  a = MK(40, "abcdefghijklmnopqrst"); // @strpbrk_s
  b = MK(40, "XYZ"); // @strpbrk_set
  sink = (long)strpbrk(a, b); free(a); free(b);
  a = MK(40, "0123456789abcdefghijklmnopq"); // @strcpy_src
  b = malloc(40); // @strcpy_dst
  strcpy(b, a); free(a); free(b);
  a = MK(40, "0123456789"); // @strncpy_src
  b = malloc(40); // @strncpy_dst
  strncpy(b, a, 40); free(a); free(b);
  a = MK(40, "0123456789abcdefghijklmnopq"); // @stpcpy_src
  b = malloc(40); // @stpcpy_dst
  sink = (long)stpcpy(b, a); free(a); free(b);
  a = MK(40, "0123456789"); // @strcat_src
  b = MK(40, "abcdefghijklmnopq"); // @strcat_dst
  strcat(b, a); free(a); free(b);
  a = MK(40, "0123456789"); // @strncat_src
  b = MK(40, "abcdefghijklmnopq"); // @strncat_dst
  strncat(b, a, 4); free(a); free(b);
  a = MK(40, "0123456789abcdefghijklmnopqrstuvwxyzAB"); // @memcmp_a
  b = MK(40, "x123456789abcdefghijklmnopqrstuvwxyzAB"); // @memcmp_b
  sink = memcmp(a, b, 40); free(a); free(b);
  a = MK(40, "0123456789abcdefghijklmnopqrstuvwxyzAB"); // @bcmp_a
  b = MK(40, "0123456789abcdefghijklmnopqrstuvwxyzAB"); // @bcmp_b
  sink = bcmp(a, b, 33); free(a); free(b);
  a = MK(40, "0123456789abcdefghijklmnopqrstuvwxyzAB"); // @memchr
  sink = (long)memchr(a, 'k', 40); free(a);
  a = MK(40, "0123456789abcdefghijklmnopqrstuvwxyzAB"); // @memrchr
  sink = (long)memrchr(a, '0', 40); free(a);
  a = MK(40, "0123456789abcdefghijklmnopqrstuvwxyzAB"); // @memccpy_src
  b = malloc(40); // @memccpy_dst
  sink = (long)memccpy(b, a, 'k', 40); free(a); free(b);
  a = MK(40, "0123456789abcdefghijklmnopqrstuvwxyzAB"); // @memcpy_src
  b = malloc(40); // @memcpy_dst
  p_memcpy(b, a, 40); free(a); free(b);
  a = MK(72, "0123456789abcdefghijklmnopqrstuvwxyzAB"); // @memmove
  p_memmove(a + 8, a, 50); free(a);
  a = MK(200, "0123456789abcdefghijklmnopqrstuvwxyzAB"); // @memcpy_big_src
  b = malloc(200); // @memcpy_big_dst
  p_memcpy(b, a, 200); free(a); free(b);
  a = MK(100, "0123456789abcdefghijklmnopqrstuvwxyzAB"); // @memcmp_big_a
  b = MK(100, "0123456789abcdefghijklmnopqrstuvwxyzAB"); // @memcmp_big_b
  sink = memcmp(a, b, 100); free(a); free(b);
  /* The compiler's own memcpy (__memprof_memcpy): 40 bytes to offset 30,
   * across a cell boundary, then 200 bytes. */
  a = MK(200, "0123456789abcdefghijklmnopqrstuvwxyzAB"); // @intrinsic_src
  b = malloc(200); // @intrinsic_dst
  memcpy(b + 30, a, n40);
  memcpy(b, a, n200); free(a); free(b);
  a = malloc(72); // @memset
  p_memset(a, 7, 65); free(a);
  a = MK(40, "0123456789abcdefghijklmnopqrstuvwxyzAB"); // @write
  sink = write(fds[1], a, 40); free(a);
  b = malloc(40); // @read
  sink = read(fds[0], b, 40); free(b);
  a = MK(40, "0123456789abcdefghijklmnopqrstuvwxyzAB"); // @writev_a
  b = MK(40, "0123456789"); // @writev_b
  struct iovec wv[2] = {{a, 20}, {b, 11}};
  sink = writev(fds[1], wv, 2); free(a); free(b);
  a = malloc(40); // @readv_a
  b = malloc(40); // @readv_b
  struct iovec rv[2] = {{a, 24}, {b, 40}};
  sink = readv(fds[0], rv, 2); free(a); free(b);
  FILE *f = tmpfile();
  a = MK(40, "0123456789abcdefghijklmnopqrstuvwxyzAB"); // @fwrite
  sink = fwrite(a, 8, 5, f); free(a);
  a = MK(40, "line one\n"); // @fputs
  fputs(a, f); free(a);
  rewind(f);
  b = malloc(40); // @fread
  sink = fread(b, 4, 6, f); free(b);
  b = malloc(40); // @fgets
  sink = (long)fgets(b, 40, f); free(b);
  int fd = fileno(f);
  a = MK(40, "0123456789abcdefghijklmnopqrstuvwxyzAB"); // @pwrite
  sink = pwrite(fd, a, 33, 100); free(a);
  b = malloc(40); // @pread
  sink = pread(fd, b, 40, 100); free(b);
  fclose(f);
  a = MK(40, "  -12345xyz"); // @atoi
  sink = atoi(a); free(a);
  a = MK(40, "9876543210 rest"); // @atol
  sink = atol(a); free(a);
  a = MK(40, "-77;"); // @atoll
  sink = atoll(a); free(a);
  a = MK(40, "   +abc"); // @strtol_none
  char *endp;
  sink = strtol(a, &endp, 10); free(a);
  a = MK(40, "0x7fffffffffffffffff1"); // @strtoll_hex
  sink = strtoll(a, 0, 16); free(a);
  a = MK(40, "123"); // @strtol_badbase
  sink = strtol(a, 0, 99); free(a);
  return 0;
}
"""


def c(n):
    """Counts of one range of n bytes: one per 8 bytes."""
    return (n + 7) // 8


def stores(s):
    return len(s) + 1


ACCESSES = {
    "strlen": stores("hello world") + c(12),
    "strnlen": stores("hello world") + c(5),
    "strcmp_a": 22 + c(21), "strcmp_b": 22 + c(21),
    "strncmp_a": 22 + c(10), "strncmp_b": 22 + c(10),
    "strcasecmp_a": 16 + c(16), "strcasecmp_b": 16 + c(16),
    "strncasecmp_a": 16 + c(9), "strncasecmp_b": 16 + c(9),
    "strchr": 20 + c(17),               # up to and including the match
    "strchr_miss": 20 + c(20),          # whole string with its NUL
    "strrchr": 20 + c(20),
    "strstr_h": 26 + c(16 + 3),         # up to the end of the match
    "strstr_n": 4 + c(4),
    "strcasestr_h": 26 + c(16 + 3),
    "strcasestr_n": 4 + c(4),
    "strspn_s": 16 + c(13), "strspn_set": 3 + c(3),
    "strcspn_s": 23 + c(21), "strcspn_set": 3 + c(3),
    "strpbrk_s": 21 + c(21), "strpbrk_set": 4 + c(4),
    "strcpy_src": 28 + c(28), "strcpy_dst": c(28),
    "strncpy_src": 11 + c(11), "strncpy_dst": c(40),
    "stpcpy_src": 28 + c(28), "stpcpy_dst": c(28),
    # strcat: source with NUL; destination read up to its NUL (17) and
    # written from there (11 bytes): two ranges.
    "strcat_src": 11 + c(11), "strcat_dst": 18 + c(17) + c(11),
    # strncat(b, a, 4): source min(4, 4+1)=4; LLVM counts 4+1 written.
    "strncat_src": 11 + c(4), "strncat_dst": 18 + c(17) + c(5),
    "memcmp_a": 39 + c(40), "memcmp_b": 39 + c(40),
    "bcmp_a": 39 + c(33), "bcmp_b": 39 + c(33),
    "memchr": 39 + c(21),
    "memrchr": 39 + c(40),
    "memccpy_src": 39 + c(21), "memccpy_dst": c(21),
    "memcpy_src": 39 + c(40), "memcpy_dst": c(40),
    "memmove": 39 + c(50) + c(50),      # same block read and written
    # past 64 bytes: the interceptors' out-of-line path
    "memcpy_big_src": 39 + c(200), "memcpy_big_dst": c(200),
    "memcmp_big_a": 39 + c(100), "memcmp_big_b": 39 + c(100),
    "intrinsic_src": 39 + c(40) + c(200), "intrinsic_dst": c(40) + c(200),
    "memset": c(65),
    "write": 39 + c(40), "read": c(40),
    # writev: 20 bytes of a, 11 of b (the iovec array itself is on the stack)
    "writev_a": 39 + c(20), "writev_b": 11 + c(11),
    # readv gets the 31 bytes writev sent: 24 into a, 7 into b
    "readv_a": c(24), "readv_b": c(7),
    "fwrite": 39 + c(40), "fputs": 10 + c(10),
    "fread": c(24),                     # 6 items of 4 bytes
    # fgets reads from offset 24 of the 40 bytes fwrite wrote: the string
    # stops at the terminator fill() stored at offset 38.
    "fgets": c(len("opqrstuvwxyzAB") + 1),
    "pwrite": 39 + c(33), "pread": c(33),
    # conversions: the characters consumed + 1; with no digits, the blanks
    # and sign skipped + 1; an invalid base counts nothing
    "atoi": 12 + c(8 + 1), "atol": 16 + c(10 + 1), "atoll": 5 + c(3 + 1),
    "strtol_none": 8 + c(4 + 1),
    "strtoll_hex": 22 + c(21 + 1),      # overflow still consumes every digit
    "strtol_badbase": 4,
}

SIZES = {"memmove": 72, "memset": 72, "memcpy_big_src": 200, "memcpy_big_dst": 200,
         "memcmp_big_a": 100, "memcmp_big_b": 100, "intrinsic_src": 200,
         "intrinsic_dst": 200}

# LLVM 22 has no stpcpy or memccpy interceptor: only the program's stores.
LLVM22_UNCOUNTED = {"stpcpy_src": 28, "stpcpy_dst": 0,
                    "memccpy_src": 39, "memccpy_dst": 0}


def sites_of(accesses):
    """One 40-byte block (72 where SIZES says) per marker, allocated once."""
    return {n: (1, SIZES.get(n, 40), a) for n, a in accesses.items()}


class Interceptors(rt_common.ThreeRuntimes):
    PROG = PROG
    EXPECTED = sites_of(ACCESSES)
    LLVM22 = sites_of(LLVM22_UNCOUNTED)


if __name__ == "__main__":
    harness.main()
