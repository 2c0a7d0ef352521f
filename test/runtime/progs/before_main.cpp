/* before_main.cpp - test_rt_early.py: a static constructor and thread_local initialisers allocate before main. */
#include <pthread.h>
#include <stdlib.h>

extern "C" char *make_early(void) {
  char *p = (char *)malloc(48); // @ctor_malloc
  for (int i = 0; i < 48; i++)
    p[i] = 1;
  return p;
}

extern "C" int *make_tls(void) {
  int *q = new int[6]; // @tls_new
  for (int i = 0; i < 6; i++)
    q[i] = i;
  return q;
}

struct Early {
  char *p;
  Early() : p(make_early()) {}
};

struct Tls {
  int *q;
  Tls() : q(make_tls()) {}
  ~Tls() { delete[] q; }
};

thread_local Tls tls;
static Early early;
static int first_use = tls.q[0]; // initialises main's tls before main

static void *worker(void *) { return tls.q; }

int main() {
  pthread_t t;
  pthread_create(&t, 0, worker, 0);
  pthread_join(t, 0);
  free(early.p);
  return first_use;
}
