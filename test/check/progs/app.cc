// app.cc - two callers of pool.cc's grow: the profiled run (no argument)
// takes `profiled`, whose 1 MiB block lives 1.5 s (a cold context);
// `unprofiled` runs only with an argument, so no context of the profile
// reaches grow through it.
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <thread>

double *grow(size_t n);

__attribute__((noinline)) double *profiled(size_t n) {
  double *p = grow(n);
  p[0] = 1;
  return p;
}

__attribute__((noinline)) double *unprofiled(size_t n) {
  double *p = grow(n);
  p[0] = 2;
  return p;
}

int main(int argc, char **argv) {
  (void)argv;
  double *p = argc > 1 ? unprofiled(1 << 17) : profiled(1 << 17);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  std::printf("%g\n", p[0]);
  delete[] p;
  return 0;
}
