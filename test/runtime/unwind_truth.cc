// unwind_truth.cc - our unwinder against libgcc's (test_rt_unwind.py).
// In callbacks called from code without frame pointers (qsort in libc,
// pthread_once through libstdc++'s call_once, a std::thread's routine),
// prints glibc's backtrace() ("bt <pc>", _Unwind_Backtrace over the
// .eh_frame tables) and then the runtime's stack of the same point
// (__sanitizer_print_stack_trace: "#i <pc - 1>" lines on stderr).  Both
// start with a return address into the callback (each from its own call),
// and must then agree frame for frame.  Also prints main's address, for
// the load bias.
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>

#include <mutex>
#include <thread>

extern "C" void __sanitizer_print_stack_trace(void);

static void both(const char *what) {
  void *bt[128];
  int n = backtrace(bt, 128);
  fprintf(stderr, "== %s\n", what);
  for (int i = 0; i < n; i++)
    fprintf(stderr, "bt %p\n", bt[i]);
  fflush(stderr);
  __sanitizer_print_stack_trace();
}

static int compared;
static int Compare(const void *a, const void *b) {
  if (!compared++)
    both("qsort");
  return *(const int *)a - *(const int *)b;
}

int main() {
  fprintf(stderr, "main %p\n", (void *)&main);
  void *warm[4];
  backtrace(warm, 4); // loads libgcc_s before the callbacks
  int v[1000];
  for (int i = 0; i < 1000; i++)
    v[i] = (i * 7919) % 1000;
  qsort(v, 1000, sizeof v[0], Compare);
  static std::once_flag once;
  std::call_once(once, [] { both("call_once"); });
  std::thread t([] { both("thread"); });
  t.join();
  return 0;
}
