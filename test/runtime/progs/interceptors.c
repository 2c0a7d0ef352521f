/* interceptors.c - test_rt_intercept.py: one marked block per libc interceptor, filled by the program, then passed to the function. */
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
