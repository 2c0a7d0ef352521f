/* new_failures.cpp - test_rt_new_delete.py: failing new (nothrow, new-handler loop, bad_alloc) and a 4096-byte alignment. */
#include <cstdint>
#include <cstdio>
#include <new>

static int handler_calls;
static void handler() {
  if (++handler_calls == 3)
    std::set_new_handler(nullptr);
}

int main() {
  const std::size_t huge = std::size_t(1) << 62;
  void *p;
  std::printf("huge_nothrow %d\n", operator new(huge, std::nothrow) == nullptr);
  std::set_new_handler(handler);
  try {
    p = operator new[](huge);
    std::printf("huge_throw no\n");
  } catch (const std::bad_alloc &) {
    std::printf("huge_throw bad_alloc handler_calls=%d\n", handler_calls);
  }
  p = operator new(8, std::align_val_t(4096));
  std::printf("align4096 %d\n", (int)((std::uintptr_t)p % 4096));
  operator delete(p, std::align_val_t(4096));
  operator delete(nullptr);
  operator delete[](nullptr, std::size_t(8));
  return 0;
}
