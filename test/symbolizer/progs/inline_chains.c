/* inline_chains.c - test_symbolizer.py: always_inline chains three deep over two files, symbolized like LLVM. */
#include <stdlib.h>
#include "inline_chains.h"
volatile int sink;
static inline __attribute__((always_inline)) void *leaf(size_t n) {
  sink++;
  return malloc(n);
}
static inline __attribute__((always_inline)) void *mid(size_t n) {
  void *p = leaf(n + 1);
  sink += 2;
  void *q = hdr_leaf(n);
  free(q);
  return p;
}
static inline __attribute__((always_inline)) void *top(size_t n) {
  void *p = mid(n * 2);
  for (int i = 0; i < (int)n; i++) { if (sink & 1) sink++; else free(malloc(i)); }
  return p;
}
static __attribute__((noinline)) void *stat_fn(size_t n) { return top(n) ; }
void *ext_fn(size_t n) { return stat_fn(n) ; }
int main(int argc, char **argv) {
  (void)argv;
  void *p = ext_fn(argc);
  free(p);
  free(top(3));
  free(mid(5));
  return 0;
}
