/* libc_semantics.c - test_rt_libc_semantics.py: str*, mem* and strto* results on edge cases, the same with our interceptors as with glibc. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void *(*volatile v_memcpy)(void *, const void *, size_t) = memcpy;
static void *(*volatile v_memmove)(void *, const void *, size_t) = memmove;
static void *(*volatile v_memset)(void *, int, size_t) = memset;
static int (*volatile v_memcmp)(const void *, const void *, size_t) = memcmp;
static size_t (*volatile v_strlen)(const char *) = strlen;

static long off(const void *base, const void *p) {
  return p ? (long)((const char *)p - (const char *)base) : -1;
}
static int sgn(int x) { return (x > 0) - (x < 0); }

static const char *strs[] = {"", "a", "abc", "abd", "ABC", "abcdef", "xyzabc",
                             "hello world", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab",
                             "\x80\xff", "abcabcabd"};
#define NS (sizeof(strs) / sizeof(strs[0]))

int main(void) {
  char *buf = malloc(300);
  for (size_t i = 0; i < NS; i++) {
    const char *s = strs[i];
    char *h = strdup(s);
    printf("len %zu %zu %zu %zu\n", v_strlen(h), strnlen(h, 2), strnlen(h, 0),
           strnlen(h, 100));
    for (size_t j = 0; j < NS; j++) {
      const char *t = strs[j];
      printf("cmp %zu %zu %d %d %d %d %d %d %ld %ld %zu %zu %ld\n", i, j,
             sgn(strcmp(h, t)), sgn(strncmp(h, t, 2)), sgn(strcasecmp(h, t)),
             sgn(strncasecmp(h, t, 3)), sgn(strncmp(h, t, 0)),
             sgn(v_memcmp(h, t, strlen(h) < strlen(t) ? strlen(h) : strlen(t))),
             off(h, strstr(h, t)), off(h, strcasestr(h, t)), strspn(h, t),
             strcspn(h, t), off(h, strpbrk(h, t)));
    }
    for (int c = 0; c < 256; c += 17)
      printf("chr %zu %d %ld %ld %ld %ld %ld %ld\n", i, c, off(h, strchr(h, c)),
             off(h, strrchr(h, c)), off(h, strchrnul(h, c)),
             off(h, memchr(h, c, strlen(h) + 1)), off(h, memrchr(h, c, strlen(h) + 1)),
             off(h, index(h, c)));
    printf("chr0 %ld %ld\n", off(h, strchr(h, 0)), off(h, strrchr(h, 0)));
    char *d = malloc(64);
    v_memset(d, 'Z', 64);
    printf("cpy %ld", off(d, stpcpy(d, h)));
    printf(" %s", strcpy(d, h) == d ? d : "?");
    v_memset(d, 'Z', 64);
    strncpy(d, h, 8);
    for (int k = 0; k < 10; k++) printf(" %d", d[k]);
    strcpy(d, "pre:");
    strcat(d, h);
    strncat(d, "123456", 3);
    strncat(d, "", 5);
    printf(" [%s]", d);
    v_memset(d, 'Z', 64);
    printf(" %ld", off(d, memccpy(d, h, 'c', strlen(h))));
    printf(" %ld\n", off(d, memccpy(d, "abc", 'q', 3)));
    printf("mem %ld %ld\n", off(h, memmem(h, strlen(h), "bc", 2)),
           off(h, memmem(h, strlen(h), "", 0)));
    free(d);
    free(h);
  }
  for (int n = 0; n < 200; n += 7) {
    for (int k = 0; k < 300; k++) buf[k] = (char)(k * 7 + 3);
    v_memmove(buf + 5, buf, n);
    unsigned sum = 0;
    for (int k = 0; k < 300; k++) sum = sum * 31 + (unsigned char)buf[k];
    v_memmove(buf, buf + 9, n);
    for (int k = 0; k < 300; k++) sum = sum * 31 + (unsigned char)buf[k];
    v_memcpy(buf + 150, buf + 1, n / 2);
    v_memset(buf + 3, n, n);
    for (int k = 0; k < 300; k++) sum = sum * 31 + (unsigned char)buf[k];
    printf("move %d %u %d\n", n, sum, sgn(v_memcmp(buf, buf + 1, n)));
  }
  free(buf);
  static const char *nums[] = {"", "  42", "-0x1F", "0777", "+-3", "99999999999999999999",
                               "-9223372036854775809", " \t\n+12abc", "z", "0x"};
  for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
    char *t = strdup(nums[i]), *end;
    int bases[] = {0, 10, 16, 8, 36, 1, 37};
    for (int b = 0; b < 7; b++) {
      errno = 0;
      end = t + 100; /* an invalid base leaves it alone */
      long v = strtol(t, &end, bases[b]);
      int e1 = errno;
      errno = 0;
      end = t + 100;
      long long w = strtoll(t, &end, bases[b]);
      printf("num %zu %d %ld %d %lld %d %ld\n", i, bases[b], v, e1, w, errno, off(t, end));
    }
    printf("ato %zu %d %ld %lld\n", i, atoi(t), atol(t), atoll(t));
    free(t);
  }
  return 0;
}
