/* roots_bands_time.c - sets of roots sharing known blocks that change
 * from census to census, for the report's graph of the bands over time
 * (test/roots/test_roots_views.py).  Every block has a size of its own.
 *
 * Five globals ga..ge are arrays of slots; a block shared by a set of
 * them is held in one slot of each.  Three censuses on demand, then one
 * at exit; the sets' bytes at each ("ab": ga and gb):
 *
 *   set   1     2     3     exit
 *   ab    1000  1800  1800  1800   gc lets go of abc's 800-byte block
 *   abc   800   -     -     -
 *   cd    600   600   910   -      a 310-byte block, then both freed
 *   de    96    (96)  96    96     (2: the ninth set, in no band)
 *   ae    -     400   -     -
 *   bd    -     300   -     -
 *   be    -     200   -     -
 *   ce    -     150   -     -
 *   ac    -     120   120   120
 *   bc    -     110   110   110
 *
 * Throughout, ga alone holds a 48-byte block and a 72-byte block is
 * leaked.  Allocates nothing else (no stdio). */
#include <stdlib.h>
#include <string.h>

void __memprof_heap_census(void) __attribute__((weak));

void *ga[16], *gb[16], *gc[16], *gd[16], *ge[16];

static void **holder(char who) {
  switch (who) {
  case 'a': return ga;
  case 'b': return gb;
  case 'c': return gc;
  case 'd': return gd;
  default: return ge;
  }
}

/* A block of `size` bytes held in `slot` by the globals named in `who`. */
__attribute__((noinline)) static void share(size_t size, const char *who, int slot) {
  void *x = malloc(size);
  memset(x, 0, size);
  for (; *who; who++)
    holder(*who)[slot] = x;
}

/* The globals named in `who` let go of the block in `slot`. */
__attribute__((noinline)) static void let_go(const char *who, int slot) {
  for (; *who; who++)
    holder(*who)[slot] = NULL;
}

/* The block the globals named in `who` hold in `slot` is freed. */
__attribute__((noinline)) static void release(const char *who, int slot) {
  free(holder(*who)[slot]);
  let_go(who, slot);
}

__attribute__((noinline)) static void leak(void) {
  void *volatile x = malloc(72);
  memset(x, 0, 72);
  x = NULL;
}

__attribute__((noinline)) static void clear_stack(void) {
  volatile char buf[32768];
  memset((char *)buf, 0, sizeof buf);
}

__attribute__((noinline)) static void census(void) {
  clear_stack();
  if (__memprof_heap_census)
    __memprof_heap_census();
}

int main(void) {
  share(48, "a", 0);
  leak();
  share(1000, "ab", 1);
  share(800, "abc", 2);
  share(600, "cd", 3);
  share(96, "de", 4);
  census();
  let_go("c", 2);
  share(400, "ae", 5);
  share(300, "bd", 6);
  share(200, "be", 7);
  share(150, "ce", 8);
  share(120, "ac", 9);
  share(110, "bc", 10);
  census();
  release("ae", 5);
  release("bd", 6);
  release("be", 7);
  release("ce", 8);
  share(310, "cd", 11);
  census();
  release("cd", 3);
  release("cd", 11);
  clear_stack();
  return 0;
}
