/* unwind_rbp.c - allocates through unwind_rbp_lib.S's frame, whose CFA is
 * %rbp-based but not a frame-pointer record (test_rt_unwind.py). */
#include <stdlib.h>

void *alloc_rbp_frame(size_t n);

void *UseRbpFrame(void) {
  return alloc_rbp_frame(48); // @rbp_frame
}

int main(void) {
  free(UseRbpFrame()); // @main_rbp_frame
  return 0;
}
