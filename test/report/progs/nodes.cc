// nodes.cc - test_report_tailcall.py: allocations of libstdc++ containers
// from two callers each, where clang-22's pre-inliner stops inlining at a
// frame the profiled -O2 build inlined further: std::set and
// std::unordered_map nodes (constant size, left in _Rb_tree::_M_insert_
// and _Map_base::operator[]), hash buckets (a variable size, left in
// __new_allocator<T>::allocate), a vector reserved with a constant and one
// with a variable size (the constant reaches the allocation only through
// reserve(n), so it stays in __new_allocator<T>::allocate too), and
// std::list nodes (inlined as far as the profiled build inlined them).
#include <cstdio>
#include <list>
#include <set>
#include <unordered_map>
#include <vector>

static volatile long sink;

__attribute__((noinline)) void sets_a() {
  for (int r = 0; r < 20; r++) {
    std::set<long> s;
    for (long i = 0; i < 50; i++) s.insert(i);
    sink += s.size();
  }
}

__attribute__((noinline)) void sets_b() {
  for (int r = 0; r < 10; r++) {
    std::set<long> s;
    for (long i = 0; i < 30; i++) s.insert(i);
    sink += s.size();
  }
}

__attribute__((noinline)) void umaps_a() {
  for (int r = 0; r < 20; r++) {
    std::unordered_map<int, long> m;
    for (int i = 0; i < 50; i++) m[i] = i;
    sink += m.size();
  }
}

__attribute__((noinline)) void umaps_b() {
  for (int r = 0; r < 10; r++) {
    std::unordered_map<int, long> m;
    for (int i = 0; i < 30; i++) m[i] = i * 5;
    sink += m.size();
  }
}

__attribute__((noinline)) void reserve_const() {
  for (int r = 0; r < 50; r++) {
    std::vector<long> v;
    v.reserve(100);
    for (long i = 0; i < 100; i++) v.push_back(i);
    sink += v[3];
  }
}

__attribute__((noinline)) void reserve_var(int n) {
  for (int r = 0; r < 50; r++) {
    std::vector<long> v;
    v.reserve(n);
    for (long i = 0; i < n; i++) v.push_back(i);
    sink += v[3];
  }
}

__attribute__((noinline)) void lists_a() {
  for (int r = 0; r < 20; r++) {
    std::list<int> l;
    for (int i = 0; i < 50; i++) l.push_back(i);
    sink += l.size();
  }
}

__attribute__((noinline)) void lists_b() {
  for (int r = 0; r < 10; r++) {
    std::list<int> l;
    for (int i = 0; i < 30; i++) l.push_front(i);
    sink += l.size();
  }
}

int main(int argc, char **) {
  sets_a();
  sets_b();
  umaps_a();
  umaps_b();
  reserve_const();
  reserve_var(argc + 80);
  lists_a();
  lists_b();
  std::printf("done\n");
  return 0;
}
