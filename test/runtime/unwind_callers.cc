// unwind_callers.cc - allocations made inside libc and libstdc++ (built
// without frame pointers) from known functions (test_rt_unwind.py).  Each
// marked line's call allocates; its function must be the first frame of
// the program in the allocation's stack, right after the library's frames.
// DupString is the control: strdup is the runtime's own entry point.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>

extern "C" {

FILE *ReadFile(const char *path) {
  return fopen(path, "r"); // @fopen
}

char *DupString(const char *s) {
  return strdup(s); // @strdup
}

char *ReadLine(FILE *f) {
  char *line = NULL;
  size_t cap = 0;
  if (getline(&line, &cap, f) < 0) // @getline
    abort();
  return line;
}

size_t GrowString(const char *piece) {
  std::string s;
  for (int i = 0; i < 100; i++)
    s.append(piece); // @append
  return s.size();
}

int main(int argc, char **argv) {
  (void)argc;
  FILE *f = ReadFile(argv[0]); // @main_fopen
  char *d = DupString("hello"); // @main_strdup
  char *line = ReadLine(f); // @main_getline
  size_t n = GrowString("0123456789"); // @main_append
  fclose(f);
  free(d);
  free(line);
  return n == 1000 ? 0 : 1;
}
}
