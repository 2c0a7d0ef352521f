// hotcold.cc - the bundled example: one allocation function reached from a
// hot path (many short-lived, heavily used buffers) and a cold path (one big
// buffer kept for a long time and barely touched).  Profiling tells clang
// which is which, so the optimized build can place them apart.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

__attribute__((noinline)) char *make_buffer(size_t n) { return new char[n]; }

__attribute__((noinline)) long hot_path(int rounds) {
  long sum = 0;
  for (int i = 0; i < rounds; i++) {
    char *b = make_buffer(256);
    memset(b, i & 0x7f, 256);
    for (int j = 0; j < 256; j++) sum += b[j];
    delete[] b;
  }
  return sum;
}

__attribute__((noinline)) long cold_path(int ms) {
  char *b = make_buffer(1 << 20);
  b[0] = 1;
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  long v = b[0];
  delete[] b;
  return v;
}

int main() {
  long s = hot_path(1000) + cold_path(1500);
  std::printf("checksum %ld\n", s);
  return 0;
}
