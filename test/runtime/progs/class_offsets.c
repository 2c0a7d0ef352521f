/* class_offsets.c - where blocks of three size classes sit below their
 * region's 4 GiB boundary (test_rt_heap_layout.py, test_classes_are_
 * staggered and test_stagger_classes_off).
 *
 * For 150, 350 and 1100 bytes (the 192-, 384- and 1152-byte classes,
 * whose slots a stagger need not keep aligned beyond 64 or 128 bytes)
 * prints the request and the low 32 bits of 8 blocks' addresses. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  static const size_t sizes[] = {150, 350, 1100};
  for (int k = 0; k < 3; k++) {
    printf("%zu", sizes[k]);
    for (int i = 0; i < 8; i++)
      printf(" %u", (unsigned)(uintptr_t)malloc(sizes[k]));
    printf("\n");
  }
  return 0;
}
