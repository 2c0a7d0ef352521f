/* roots_prog.c - known heap structures held by known roots, for the roots
 * census (test/roots/test_roots.py).  Every allocation site has a size of
 * its own, so a test finds a context from its MIB's size.
 *
 *   cache        1000-byte array reaching 4 blocks of 500: only `cache` holds it
 *   list_a/_b    3 nodes of 64 bytes: a reaches all 3, b the last 2 (shared)
 *   named_buf    200 bytes, named root "my_named_root" (beats the global)
 *   removed_buf  250 bytes, named root "gone" until removed
 *   interior     points 100 bytes into a 400-byte block
 *   cycle        2 nodes of 96 bytes pointing at each other, nothing else
 *   leak         300 bytes, pointer dropped
 *   freed        700 bytes, freed: must not count
 *   thread       ("mt") a thread holds a 333-byte block on its stack only
 *
 * With "census" as argument a census is taken on demand while "gone" is
 * still registered.  Calls the runtime's API through weak declarations,
 * so that the same source builds for LeakSanitizer and runs preloaded. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void __memprof_add_root(const char *name, const void *ptr) __attribute__((weak));
void __memprof_remove_root(const void *ptr) __attribute__((weak));
void __memprof_heap_census(void) __attribute__((weak));

struct node {
  struct node *next;
  char pad[56];
};
struct cnode {
  struct cnode *next;
  char pad[88];
};
static char *cache;
struct node *list_a, *list_b;
static char *named_buf;
static char *removed_buf;
static char *interior;
static int ready[2];

__attribute__((noinline)) static void make_cache(void) {
  char **c = malloc(1000);
  memset(c, 0, 1000);
  for (int i = 0; i < 4; i++) {
    c[i] = malloc(500);
    memset(c[i], 0, 500);
  }
  cache = (char *)c;
}

__attribute__((noinline)) static void make_list(void) {
  struct node *n = NULL;
  for (int i = 0; i < 3; i++) {
    struct node *x = malloc(sizeof *x);
    memset(x, 0, sizeof *x);
    x->next = n;
    n = x;
  }
  list_a = n;
  list_b = n->next;
}

__attribute__((noinline)) static void make_cycle(void) {
  struct cnode *a = malloc(sizeof *a), *b = malloc(sizeof *b);
  memset(a, 0, sizeof *a);
  memset(b, 0, sizeof *b);
  a->next = b;
  b->next = a;
}

__attribute__((noinline)) static void make_leak(void) {
  void *p = malloc(300);
  memset(p, 0, 300);
}

__attribute__((noinline)) static void make_freed(void) {
  char *p = malloc(700);
  memset(p, 0, 700);
  cache[1000 - 8] = 0; /* keep the calls apart */
  free(p);
}

__attribute__((noinline)) static void clear_stack(void) {
  volatile char buf[32768];
  memset((char *)buf, 0, sizeof buf);
}

static void *holder(void *arg) {
  (void)arg;
  char *volatile mine = malloc(333);
  memset(mine, 0, 333);
  char c = 1;
  if (write(ready[1], &c, 1) != 1)
    abort();
  for (;;)
    pause(); /* holds `mine` on its stack until the process exits */
  return NULL;
}

int main(int argc, char **argv) {
  int mt = 0, census = 0;
  for (int i = 1; i < argc; i++) {
    mt |= !strcmp(argv[i], "mt");
    census |= !strcmp(argv[i], "census");
  }
  make_cache();
  make_list();
  make_cycle();
  make_leak();
  make_freed();
  named_buf = malloc(200);
  memset(named_buf, 0, 200);
  if (__memprof_add_root)
    __memprof_add_root("my_named_root", named_buf);
  removed_buf = malloc(250);
  memset(removed_buf, 0, 250);
  if (__memprof_add_root)
    __memprof_add_root("gone", removed_buf);
  interior = (char *)malloc(400) + 100;
  if (mt) {
    pthread_t t;
    if (pipe(ready) || pthread_create(&t, NULL, holder, NULL))
      return 2;
    char c;
    if (read(ready[0], &c, 1) != 1)
      return 3;
  }
  clear_stack();
  if (census && __memprof_heap_census)
    __memprof_heap_census();
  if (__memprof_remove_root)
    __memprof_remove_root(removed_buf);
  clear_stack();
  return 0;
}
