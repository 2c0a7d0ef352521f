/* dlopen_dumps.c - test_core_lifecycle.py: text dumps while a thread dlopens and dlcloses argv[1] (no deadlock). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <sanitizer/memprof_interface.h>
static const char *path;
static void *loader(void *arg) {
  for (int i = 0; i < 200; i++) {
    void *h = dlopen(path, RTLD_NOW);
    if (h)
      dlclose(h);
  }
  return arg;
}
int main(int argc, char **argv) {
  path = argv[1];
  char *live = malloc(24);
  live[0] = 1;
  pthread_t t;
  pthread_create(&t, 0, loader, 0);
  for (int i = 0; i < 200; i++)
    __memprof_profile_dump();
  pthread_join(t, 0);
  return 0;
}
