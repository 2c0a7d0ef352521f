/* inline_chains.h - test_symbolizer.py: an always_inline function in a header (call file != file). */
extern volatile int sink;
static inline __attribute__((always_inline)) void *hdr_leaf(unsigned long n) {
  sink += (int)n;
  return __builtin_malloc(n);
}
