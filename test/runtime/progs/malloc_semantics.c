/* malloc_semantics.c - test_rt_malloc.py: errno, alignment rules and overflow of the malloc API, printed line by line. */
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
