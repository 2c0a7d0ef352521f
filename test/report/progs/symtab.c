/* symtab.c - allocations from functions of a program built without debug
 * information (test_report_symtab.py): each function allocates its own
 * size, once, so that the report's contexts are told apart by bytes.
 * exported_alloc is in .dynsym (--export-dynamic-symbol), the others only
 * in .symtab, so a fully stripped copy names only exported_alloc. */
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) void *exported_alloc(size_t n) {
  void *p = malloc(n);
  memset(p, 1, n);
  return p;
}

__attribute__((noinline)) static void *local_alloc(size_t n) {
  void *p = malloc(n);
  memset(p, 2, n);
  return p;
}

__attribute__((noinline)) void *twice_removed(size_t n) {
  return local_alloc(n);
}

int main(void) {
  void *a = exported_alloc(3 << 20);
  void *b = twice_removed(2 << 20);
  void *c = local_alloc(1 << 20);
  free(a);
  free(b);
  free(c);
  return 0;
}
