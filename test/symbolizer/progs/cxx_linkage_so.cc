// cxx_linkage_so.cc - test_symbolizer.py: a shared library using cxx_linkage.h.
#include "cxx_linkage.h"
extern "C" __attribute__((visibility("default"))) void *so_entry(unsigned n) {
  std::vector<int> v;
  void *p = outer::inner::grow<7>(v);
  std::free(p);
  return outer::inner::shared_inl(n);
}
