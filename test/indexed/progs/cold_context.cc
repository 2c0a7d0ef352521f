// cold_context.cc - test_indexed_llvm.py: one allocation in a cold and a warm context, compiled with our file and LLVM's.
#include <cstdio>
__attribute__((noinline)) char *alloc(unsigned long n) {
  return new char[n]; // @new
}
int main(int argc, char **argv) {
  char *a = alloc(10); // @cold
  char *b = alloc(20 + argc); // @warm
  printf("%p %p\n", (void *)a, (void *)b);
  return 0;
}
