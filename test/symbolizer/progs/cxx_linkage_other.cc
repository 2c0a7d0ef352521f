// cxx_linkage_other.cc - test_symbolizer.py: the second translation unit of cxx_linkage.cc.
#include "cxx_linkage.h"
void *other_tu(unsigned n) {
  std::vector<int> v;
  void *p = outer::inner::grow<3>(v);
  std::free(p);
  return outer::inner::shared_inl(n);
}
