// cxx_linkage.h - test_symbolizer.py: COMDAT templates and inline functions emitted in both translation units.
#include <cstdlib>
#include <vector>
namespace outer { namespace inner {
template <typename T> struct Box {
  T *make(unsigned n) { return static_cast<T *>(std::malloc(n * sizeof(T))); }
  static T *make_static(unsigned n) { Box b; return b.make(n + 1); }
};
template <int N> __attribute__((noinline)) void *grow(std::vector<int> &v) {
  for (int i = 0; i < N; i++) v.push_back(i);
  return Box<char>::make_static(N);
}
inline __attribute__((always_inline)) void *shared_inl(unsigned n) {
  return Box<long>().make(n);
}
} }
void *other_tu(unsigned n);
