/* split_text.c - a program whose code is in two executable PT_LOADs
 * (test_report_symtab.py): far_alloc sits in .text.far, which the linker
 * script split_text.ld places 2 MiB past .text, so the linker gives it a
 * segment of its own (as large programs such as node are linked).  Each
 * function allocates its own size, once. */
#include <stdlib.h>
#include <string.h>

__attribute__((noinline, section(".text.far"))) void *far_alloc(size_t n) {
  void *p = malloc(n);
  memset(p, 1, n);
  return p;
}

__attribute__((noinline)) void *near_alloc(size_t n) {
  void *p = malloc(n);
  memset(p, 2, n);
  return p;
}

int main(void) {
  void *a = far_alloc(3 << 20);
  void *b = near_alloc(2 << 20);
  free(a);
  free(b);
  return 0;
}
