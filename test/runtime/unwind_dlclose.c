/* unwind_dlclose.c - a rule cached for a PC must not outlive its module
 * (test_rt_unwind.py): loads the library argv[1], allocates through it,
 * unloads it, loads argv[2] (the same layout, other frame sizes) and
 * allocates through it again.  Prints 1 if the second library's function
 * landed at the first one's address (else the check means nothing). */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef void *(*alloc_fn)(size_t);

static alloc_fn load(const char *path, void **handle) {
  *handle = dlopen(path, RTLD_NOW);
  if (!*handle)
    exit(2);
  return (alloc_fn)dlsym(*handle, "alloc_in_lib");
}

void *UseFirst(alloc_fn f) {
  return f(1000); // @first
}

void *UseSecond(alloc_fn f) {
  return f(2000); // @second
}

int main(int argc, char **argv) {
  void *h1, *h2;
  if (argc < 3)
    return 2;
  alloc_fn f1 = load(argv[1], &h1);
  free(UseFirst(f1)); // @main_first
  dlclose(h1);
  alloc_fn f2 = load(argv[2], &h2);
  free(UseSecond(f2)); // @main_second
  printf("%d\n", f1 == f2);
  dlclose(h2);
  return 0;
}
