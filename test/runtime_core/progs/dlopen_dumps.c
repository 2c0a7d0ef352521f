/* dlopen_dumps.c - test_core_lifecycle.py: text dumps while a thread dlopens and dlcloses argv[1] (no deadlock). */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sanitizer/memprof_interface.h>
#define DUMPS 200
static const char *path;
static atomic_int done, loads;
/* Loads and unloads the library until the dumps are over, so that every
 * dump meets a thread inside dlopen or dlclose. */
static void *loader(void *arg) {
  while (!atomic_load(&done)) {
    void *h = dlopen(path, RTLD_NOW);
    if (h)
      dlclose(h);
    atomic_fetch_add(&loads, 1);
  }
  return arg;
}
int main(int argc, char **argv) {
  path = argv[1];
  char *live = malloc(24); // @live
  live[0] = 1;
  pthread_t t;
  pthread_create(&t, 0, loader, 0);
  while (!atomic_load(&loads))
    sched_yield();
  int before = atomic_load(&loads);
  for (int i = 0; i < DUMPS; i++)
    __memprof_profile_dump();
  int during = atomic_load(&loads) - before;
  atomic_store(&done, 1);
  pthread_join(t, 0);
  fprintf(stderr, "dumps %d, loads during them %d\n", DUMPS, during);
  return 0;
}
