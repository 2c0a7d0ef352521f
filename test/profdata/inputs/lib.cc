// lib.cc - the shared-library half of test_shared_lib: allocations whose
// leaf frames live in the .so, reached from the executable.
#include <cstddef>

__attribute__((noinline)) char *lib_alloc(size_t n) { return new char[n]; }

__attribute__((noinline)) char *lib_entry(size_t n) {
  char *p = lib_alloc(n);
  p[0] = 1;
  return p;
}
