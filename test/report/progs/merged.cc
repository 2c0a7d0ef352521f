// merged.cc - two identical allocations in the cases of a switch, which
// an optimized build merges into one call with a line-0 location: clang
// cannot match such a call with the profile, and the report says so.
#include <cstdio>

static char *volatile seen;

__attribute__((noinline)) char *pick(unsigned k) {
  char *p;
  switch (k % 2) {
  case 0:
    p = new char[32];
    break;
  default:
    p = new char[32];
    break;
  }
  seen = p;
  return p;
}

int main() {
  for (unsigned k = 0; k < 10; k++) delete[] pick(k);
  std::printf("done\n");
  return 0;
}
