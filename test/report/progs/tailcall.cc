// tailcall.cc - test_report_tailcall.py: allocations reached by a tail
// jump, whose unwound stacks lack the frame that called operator new:
// strings built from a character range (libstdc++.so's _M_create jumps
// to operator new) and a wrapper compiled to `jmp operator new[]`, each
// kept across a 1.2 s sleep and churned; beside them direct calls of
// operator new, kept and churned, which clang does match (the kept ones
// not in tail position, which -O2 would make a `jmp` too).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

static volatile long sink;

struct Node {
  long v[8];
};

static const char text[] =
    "a string that is much longer than the fifteen characters of the small "
    "string buffer, so that building it calls _M_create";

// built with -O2 and sibling calls: `jmp _Znam`
__attribute__((noinline)) char *new_block(unsigned long n) { return new char[n]; }

__attribute__((noinline)) std::string *kept_text() {
  return new std::string(text, text + sizeof text - 1);
}

__attribute__((noinline)) void churn_text() {
  for (int r = 0; r < 300; r++) {
    std::string s(text, text + sizeof text - 1);
    for (int k = 0; k < 20; k++)
      for (char c : s) sink += c;
  }
}

__attribute__((noinline)) void use(void *p, int k) {
  memset(p, k, 64);
  sink += static_cast<char *>(p)[k];
}

__attribute__((noinline)) char *kept_wrapped() {
  char *p = new_block(4096);
  p[0] = 1;
  return p;
}

__attribute__((noinline)) void churn_wrapped() {
  for (int r = 0; r < 300; r++) {
    char *p = new_block(64);
    for (int k = 0; k < 20; k++) use(p, k);
    delete[] p;
  }
}

__attribute__((noinline)) Node *kept_node() {
  Node *n = new Node;
  n->v[0] = 1;
  return n;
}

__attribute__((noinline)) void churn_nodes() {
  for (int r = 0; r < 300; r++) {
    Node *n = new Node;
    for (int k = 0; k < 20; k++) use(n, k);
    delete n;
  }
}

int main() {
  std::string *t = kept_text();
  char *w = kept_wrapped();
  Node *n = kept_node();
  churn_text();
  churn_wrapped();
  churn_nodes();
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  sink += (*t)[1] + w[0];
  delete t;
  delete[] w;
  delete n;
  std::printf("done\n");
  return 0;
}
