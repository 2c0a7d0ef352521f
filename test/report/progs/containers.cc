// containers.cc - test_report_verdicts.py: allocations made by libstdc++:
// std::string growth (in libstdc++.so, called from the program), a string
// built from a character range (_M_create reaches operator new by a tail
// call), std::vector and std::deque growth (operator new inside
// __new_allocator<T>::allocate), some kept across a 1.2 s sleep, some
// freed at once after many accesses, plus a direct new in a kept and a
// busy caller.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <string>
#include <thread>
#include <vector>

static volatile long sink;

__attribute__((noinline)) std::string *grow_kept_string() {
  auto *s = new std::string;
  for (int i = 0; i < 200; i++) s->push_back('a' + i % 26);
  return s;
}

__attribute__((noinline)) void churn_strings() {
  for (int r = 0; r < 200; r++) {
    std::string s;
    for (int i = 0; i < 300; i++) s.push_back('a' + i % 26);
    for (char c : s) sink += c;
  }
}

static const char text[] = "a string longer than fifteen characters";

__attribute__((noinline)) std::string *copy_kept_text() {
  return new std::string(text, text + sizeof text - 1);
}

__attribute__((noinline)) void churn_text() {
  for (int r = 0; r < 200; r++) {
    std::string s(text, text + sizeof text - 1);
    for (int k = 0; k < 20; k++)
      for (char c : s) sink += c;
  }
}

__attribute__((noinline)) std::vector<long> *grow_kept_vector() {
  auto *v = new std::vector<long>;
  for (long i = 0; i < 1000; i++) v->push_back(i);
  return v;
}

__attribute__((noinline)) void churn_vectors() {
  for (int r = 0; r < 200; r++) {
    std::vector<long> v;
    for (long i = 0; i < 500; i++) v.push_back(i);
    for (int k = 0; k < 20; k++)
      for (long x : v) sink += x;
  }
}

__attribute__((noinline)) std::deque<int> *grow_kept_deque() {
  auto *d = new std::deque<int>;
  for (int i = 0; i < 5000; i++) d->push_back(i);
  return d;
}

__attribute__((noinline)) void churn_deques() {
  for (int r = 0; r < 100; r++) {
    std::deque<int> d;
    for (int i = 0; i < 2000; i++) d.push_back(i);
    for (int k = 0; k < 20; k++)
      for (int x : d) sink += x;
  }
}

__attribute__((noinline)) char *kept_block() { return new char[4096]; }

__attribute__((noinline)) void busy_blocks() {
  for (int i = 0; i < 100; i++) {
    char *p = new char[64];
    for (int r = 0; r < 20; r++) {
      memset(p, r, 64);
      sink += p[r];
    }
    delete[] p;
  }
}

int main() {
  std::string *s = grow_kept_string();
  std::vector<long> *v = grow_kept_vector();
  std::deque<int> *d = grow_kept_deque();
  char *b = kept_block();
  std::string *t = copy_kept_text();
  churn_text();
  churn_strings();
  churn_vectors();
  churn_deques();
  busy_blocks();
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  sink += (*s)[3] + (*v)[3] + (*d)[3] + b[0];
  delete s;
  delete v;
  delete d;
  delete[] b;
  sink += (*t)[1];
  delete t;
  std::printf("done\n");
  return 0;
}
