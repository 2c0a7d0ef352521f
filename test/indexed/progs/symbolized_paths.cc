// symbolized_paths.cc - test_symsec_e2e.py: obj_alloc's frames and its callers' lines in our symbolized section.
#include <cstdio>
#include <unistd.h>

__attribute__((noinline)) char *obj_alloc(unsigned long n) {
  return new char[n]; // @new
}
void short_path() { for (int i = 0; i < 50; i++) { char *p = obj_alloc(128); p[0] = 1; delete[] p; } } // @short
void long_path() { char *p = obj_alloc(65536); usleep(20000); p[1] = 2; delete[] p; } // @long
int main() {
  short_path(); // @call_short
  long_path(); // @call_long
  return 0;
}
