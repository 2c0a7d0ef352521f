/* roots_bands.c - known sets of roots sharing known blocks, for the roots
 * census's bands (test/roots/test_roots_bands.py).  Every allocation site
 * has a size of its own.
 *
 *   tri_a, tri_b, tri_c  one 1000-byte block: the band of the three
 *   pair_a, pair_b       a list of 3 nodes of 160 bytes: the band of two
 *   "nr" + mixed         the named root's 80-byte block points at a list of
 *                        2 nodes of 208 bytes, which the global `mixed`
 *                        points at too: the band of a named root and a global
 *   solo                 a 48-byte block only it holds (no band)
 *
 * With "many" as argument, also 16 globals many_0..many_15 each point at
 * one list of 64 blocks of 4096 bytes: the reached passes run out of their
 * budget (8 times the heap) after some of them, and the band of that list
 * holds only the roots whose pass ran.  A census is taken at exit.
 * Allocates nothing else (no stdio). */
#include <stdlib.h>
#include <string.h>

void __memprof_add_root(const char *name, const void *ptr) __attribute__((weak));

char *tri_a, *tri_b, *tri_c;
void **pair_a, **pair_b;
void **mixed;
void **named_holder; /* the named root's block: a barrier for globals */
char *solo;
void **many_0, **many_1, **many_2, **many_3, **many_4, **many_5, **many_6, **many_7;
void **many_8, **many_9, **many_10, **many_11, **many_12, **many_13, **many_14, **many_15;

/* n blocks of `size` bytes, each pointing at the one made before it;
 * returns the last one made. */
__attribute__((noinline)) static void **chain(size_t size, int n) {
  void **head = NULL;
  for (int i = 0; i < n; i++) {
    void **x = malloc(size);
    memset(x, 0, size);
    x[0] = head;
    head = x;
  }
  return head;
}

__attribute__((noinline)) static void make_tri(void) {
  char *t = malloc(1000);
  memset(t, 0, 1000);
  tri_a = tri_b = tri_c = t;
}

__attribute__((noinline)) static void make_pair(void) { pair_a = pair_b = chain(160, 3); }

__attribute__((noinline)) static void make_mixed(void) {
  void **n = chain(208, 2);
  void **holder = malloc(80);
  memset(holder, 0, 80);
  holder[0] = n;
  if (__memprof_add_root)
    __memprof_add_root("nr", holder);
  named_holder = holder;
  mixed = n;
}

__attribute__((noinline)) static void make_solo(void) {
  solo = malloc(48);
  memset(solo, 0, 48);
}

__attribute__((noinline)) static void make_many(void) {
  void **n = chain(4096, 64);
  many_0 = many_1 = many_2 = many_3 = many_4 = many_5 = many_6 = many_7 = n;
  many_8 = many_9 = many_10 = many_11 = many_12 = many_13 = many_14 = many_15 = n;
}

__attribute__((noinline)) static void clear_stack(void) {
  volatile char buf[32768];
  memset((char *)buf, 0, sizeof buf);
}

int main(int argc, char **argv) {
  make_tri();
  make_pair();
  make_mixed();
  make_solo();
  if (argc > 1 && !strcmp(argv[1], "many"))
    make_many();
  clear_stack();
  return 0;
}
