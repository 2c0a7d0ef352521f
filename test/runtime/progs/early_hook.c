/* early_hook.c - test_rt_lazy_shadow.py: instrumented code that runs
 * before its module's constructor (and so before its __memprof_init).
 * early_hook_lib.c's constructor, which the loader runs before the
 * program's, calls early_hook: one block filled and freed there, one
 * filled and kept until main frees it.  Every block is written once per 8
 * bytes (one instrumented store each). */
#include <stdlib.h>

static long *kept;

static void fill(long *p, size_t size) {
  for (size_t i = 0; i < size / 8; i++)
    p[i] = (long)i;
}

static long *early_freed(void) {
  return malloc(256); // @early_freed
}

static long *early_kept(void) {
  return malloc(512); // @early_kept
}

void early_hook(void) {
  long *p = early_freed();
  fill(p, 256);
  free(p);
  kept = early_kept();
  fill(kept, 512);
}

int main(void) {
  long *q = malloc(1024); // @in_main
  fill(q, 1024);
  free(q);
  free(kept);
  return 0;
}
