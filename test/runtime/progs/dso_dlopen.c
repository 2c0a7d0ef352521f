/* dso_dlopen.c - test_rt_dso.py: dlopens the instrumented library argv[1] and allocates through its alloc_c. */
#include <dlfcn.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  void *h = dlopen(argv[1], RTLD_NOW);
  if (!h)
    return 2;
  char *(*alloc)(int) = (char *(*)(int))dlsym(h, "alloc_c");
  for (int i = 0; i < 2; i++)
    free(alloc(72));
  char *live = alloc(200);
  return live[0] == 1 ? 0 : 1; /* the library stays loaded: its segment
                                   is in the exit dump */
}
