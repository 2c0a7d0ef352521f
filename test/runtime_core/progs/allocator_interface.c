/* allocator_interface.c - test_core_interface.py: allocator queries, malloc/free hooks, access-recording entry points. */
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
