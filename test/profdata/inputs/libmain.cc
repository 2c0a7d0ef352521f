// libmain.cc - the executable half of test_shared_lib.
#include <cstddef>
#include <cstdlib>

char *lib_entry(size_t n);

__attribute__((noinline)) void exe_caller(int reps) {
  for (int i = 0; i < reps; i++) delete[] lib_entry(100);
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 7;
  exe_caller(reps);
  char *own = new char[300];
  own[0] = 1;
  delete[] own;
  return 0;
}
