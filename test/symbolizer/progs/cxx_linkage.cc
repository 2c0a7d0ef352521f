// cxx_linkage.cc - test_symbolizer.py: namespaces, templates, methods, lambdas; linkage names like LLVM's.
#include "cxx_linkage.h"
namespace {
__attribute__((noinline)) void *anon_fn(unsigned n) {
  auto lam = [n](unsigned k) { return outer::inner::shared_inl(n + k); };
  return lam(2);
}
}
struct Widget {
  virtual ~Widget() {}
  virtual void *alloc(unsigned n) { return outer::inner::Box<Widget *>::make_static(n); }
};
static void *file_static(unsigned n) { return anon_fn(n); }
int main(int argc, char **) {
  std::vector<int> v;
  Widget *w = new Widget;
  void *a = outer::inner::grow<3>(v);
  void *b = file_static(argc);
  void *c = w->alloc(argc);
  void *d = other_tu(argc);
  std::free(a); std::free(b); std::free(c); std::free(d);
  delete w;
  return 0;
}
