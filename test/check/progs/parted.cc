// parted.cc - built with LTO: make_buffer is reached from a hot and a cold
// path by direct calls (context disambiguation clones it per path),
// make_block from both through a function pointer (no clone tells the
// paths apart there), and native.cc's make_native, in a translation unit
// built without LTO, from both through native_hot and native_cold.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

char *native_hot(size_t n);
char *native_cold(size_t n);

__attribute__((noinline)) char *make_buffer(size_t n) { return new char[n]; }
__attribute__((noinline)) char *make_block(size_t n) { return new char[n]; }

char *(*volatile by_pointer)(size_t) = make_block;

static long use(char *b, int i) {
  memset(b, i & 0x7f, 256);
  long sum = 0;
  for (int j = 0; j < 256; j++) sum += b[j];
  delete[] b;
  return sum;
}

__attribute__((noinline)) long hot_path(int rounds) {
  long sum = 0;
  for (int i = 0; i < rounds; i++)
    sum += use(make_buffer(256), i) + use(by_pointer(256), i) +
           use(native_hot(256), i);
  return sum;
}

__attribute__((noinline)) long cold_path(int ms) {
  char *a = make_buffer(1 << 20), *b = by_pointer(1 << 20),
       *c = native_cold(1 << 20);
  a[0] = b[0] = c[0] = 1;
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  long v = a[0] + b[0] + c[0];
  delete[] a;
  delete[] b;
  delete[] c;
  return v;
}

int main() {
  long s = hot_path(1000) + cold_path(1500);
  std::printf("checksum %ld\n", s);
  return 0;
}
