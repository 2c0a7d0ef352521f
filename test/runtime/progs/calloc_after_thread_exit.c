/* calloc_after_thread_exit.c - threads that each free one malloc and exit
 * give their caches' unused slots back; calloc must still return zeroed
 * memory from them.  Prints "dirty N" (N callocs with a non-zero byte). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *one_block(void *arg) {
  (void)arg;
  free(malloc(100));
  return NULL;
}

/* Read through a volatile pointer: the compiler may assume calloc's memory
 * is zero and fold a plain check away. */
static int has_nonzero(const volatile unsigned char *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i])
      return 1;
  return 0;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 200;
  for (int t = 0; t < threads; t++) {
    pthread_t th;
    pthread_create(&th, NULL, one_block, NULL);
    pthread_join(th, NULL);
  }
  int dirty = 0;
  for (int i = 0; i < 100000; i++) {
    unsigned char *p = calloc(1, 100);
    dirty += has_nonzero(p, 100);
  }
  printf("dirty %d\n", dirty);
  return 0;
}
