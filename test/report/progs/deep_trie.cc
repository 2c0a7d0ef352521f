// deep_trie.cc - one allocation call reached through 81 contexts (four
// levels of three-way calls), for the verdict test: blocks of one path in
// four are kept across a 200 ms sleep (their lifetime access density
// depends on how many accesses the path adds up), the others are freed at
// once, so cold and not-cold contexts interleave all over clang's caller
// trie and its trimming and pruning have work at every level.
#include <chrono>
#include <cstdio>
#include <thread>

// nomerge: the optimizer must not merge a switch's three calls into one
// (which would merge their contexts).
#define NOINLINE __attribute__((noinline, nomerge))

static char *volatile seen;
static char *kept[64];
static int n_kept;

NOINLINE char *leaf(unsigned n) {
  char *p = new char[64];
  for (unsigned i = 0; i < n; i++) p[(i * 8) % 64] = (char)i;
  seen = p;
  return p;
}

NOINLINE char *c0(unsigned path, unsigned n) {
  switch (path % 3) {
  case 0: return leaf(n + 1);
  case 1: return leaf(n + 4);
  default: return leaf(n + 9);
  }
}
NOINLINE char *c1(unsigned path, unsigned n) {
  switch (path % 3) {
  case 0: return leaf(n + 2);
  case 1: return leaf(n + 6);
  default: return leaf(n + 11);
  }
}
NOINLINE char *c2(unsigned path, unsigned n) {
  switch (path % 3) {
  case 0: return leaf(n + 3);
  case 1: return leaf(n + 7);
  default: return leaf(n + 15);
  }
}
NOINLINE char *b0(unsigned path, unsigned n) {
  switch (path % 3) {
  case 0: return c0(path / 3, n + 1);
  case 1: return c1(path / 3, n + 5);
  default: return c2(path / 3, n + 10);
  }
}
NOINLINE char *b1(unsigned path, unsigned n) {
  switch (path % 3) {
  case 0: return c1(path / 3, n + 2);
  case 1: return c2(path / 3, n + 6);
  default: return c0(path / 3, n + 12);
  }
}
NOINLINE char *b2(unsigned path, unsigned n) {
  switch (path % 3) {
  case 0: return c2(path / 3, n + 3);
  case 1: return c0(path / 3, n + 8);
  default: return c1(path / 3, n + 14);
  }
}
NOINLINE char *a(unsigned path, unsigned n) {
  switch (path % 3) {
  case 0: return b0(path / 3, n);
  case 1: return b1(path / 3, n + 20);
  default: return b2(path / 3, n + 40);
  }
}

int main() {
  for (unsigned path = 0; path < 81; path++) {
    for (int rep = 0; rep < 3; rep++) {
      char *p = a(path, path % 7);
      if (path % 4 == 0 && rep == 0)
        kept[n_kept++] = p;
      else
        delete[] p;
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  for (int i = 0; i < n_kept; i++) delete[] kept[i];
  std::printf("%d kept\n", n_kept);
  return 0;
}
