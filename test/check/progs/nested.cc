// nested.cc - a shared allocation two calls below its hot and cold
// callers: hot_path and cold_path both call wrap, which calls make_buffer.
// LTO's context disambiguation clones both wrap and make_buffer per
// context, so `check` has to follow the calls up two functions to tell
// which clone's hint serves which context.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

__attribute__((noinline)) char *make_buffer(size_t n) { return new char[n]; }
__attribute__((noinline)) char *wrap(size_t n) { return make_buffer(n); }

__attribute__((noinline)) long hot_path(int rounds) {
  long sum = 0;
  for (int i = 0; i < rounds; i++) {
    char *b = wrap(256);
    memset(b, i & 0x7f, 256);
    for (int j = 0; j < 256; j++) sum += b[j];
    delete[] b;
  }
  return sum;
}

__attribute__((noinline)) long cold_path(int ms) {
  char *b = wrap(1 << 20);
  b[0] = 1;
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  long v = b[0];
  delete[] b;
  return v;
}

int main() {
  long s = hot_path(1000) + cold_path(1200);
  std::printf("checksum %ld\n", s);
  return 0;
}
