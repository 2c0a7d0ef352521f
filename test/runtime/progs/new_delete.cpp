/* new_delete.cpp - test_rt_new_delete.py: every replaceable operator new/delete form at its own marked site. */
#include <cstddef>
#include <cstdint>
#include <new>

__attribute__((noinline)) static void st(volatile int *p, int n, int k) {
  for (int r = 0; r < k; r++)
    for (int i = 0; i < n; i++)
      p[i] = i;
}
static const std::align_val_t A64 = std::align_val_t(64);

int main() {
  int *a = new int[10]; // @new_arr
  st(a, 10, 2);
  delete[] a;
  int *b = new int; // @new_one
  st(b, 1, 3);
  delete b;
  int *c = new (std::nothrow) int[18]; // @new_arr_nothrow
  st(c, 18, 1);
  operator delete[](c, std::nothrow);
  int *d = new (std::nothrow) int; // @new_one_nothrow
  st(d, 1, 5);
  operator delete(d, std::nothrow);
  int *e = (int *)operator new(40, A64); // @new_aligned
  if ((uintptr_t)e % 64) return 2;
  st(e, 10, 1);
  operator delete(e, A64);
  int *f = (int *)operator new[](104, A64); // @new_arr_aligned
  st(f, 26, 1);
  operator delete[](f, A64);
  int *g = (int *)operator new(200, A64, std::nothrow); // @new_aligned_nothrow
  st(g, 50, 1);
  operator delete(g, A64, std::nothrow);
  int *h = (int *)operator new[](72, A64, std::nothrow); // @new_arr_aligned_nothrow
  st(h, 18, 2);
  operator delete[](h, A64, std::nothrow);
  int *i = (int *)operator new(24); // @sized_delete
  st(i, 6, 1);
  operator delete(i, (size_t)24);
  int *j = (int *)operator new[](24); // @sized_delete_arr
  st(j, 6, 2);
  operator delete[](j, (size_t)24);
  int *k = (int *)operator new(56, A64); // @sized_aligned_delete
  st(k, 14, 1);
  operator delete(k, (size_t)56, A64);
  int *l = (int *)operator new[](56, A64); // @sized_aligned_delete_arr
  st(l, 14, 2);
  operator delete[](l, (size_t)56, A64);
  int *m = new int[10]; // @live_at_exit
  st(m, 10, 1);
  return 0;
}
