/* no_frame_pointers.c - test_rt_unwind.py PreloadedTools: a program built
 * without frame pointers and without -fmemory-profile, profiled by the
 * preloaded runtime; its 12345-byte block is allocated three calls below
 * main. */
#include <stdlib.h>

__attribute__((noinline)) void *leaf(size_t n) {
  void *p = malloc(n);
  __asm__ volatile("" : : "r"(p) : "memory");
  return p;
}

__attribute__((noinline)) void *middle(size_t n) {
  void *p = leaf(n + 1);
  __asm__ volatile("" : : "r"(p) : "memory");
  return p;
}

int main(void) {
  free(middle(12344));
  return 0;
}
