/* rt_size_class.c - the allocator's size classes (rt_size_class.h).
 *
 * Eight classes per doubling above 1 KiB: programs often ask for a power
 * of two plus a small header (a database's 4096 + 66-byte pages, 1032-byte
 * buffers), which four per doubling rounded up by a quarter. */
#include "rt_size_class.h"

uint32_t class_size[NCLASS];
uint64_t class_recip[NCLASS];
uint32_t tc_cap[NCLASS];

void rt_size_classes_init(void) {
  for (int c = 0; c < SMALL_CLASSES; c++)
    class_size[c] = 64u * (c + 1);
  int c = SMALL_CLASSES;
  for (uint32_t base = 1024; base < MAX_CLASS_SIZE; base *= 2)
    for (uint32_t q = 1; q <= 1u << STEPS_LOG2; q++)
      class_size[c++] = base + (base >> STEPS_LOG2) * q;
  for (c = 0; c < NCLASS; c++) {
    class_recip[c] = UINT64_MAX / class_size[c] + 1;
    uint32_t cap = 65536 / class_size[c];
    tc_cap[c] = cap > TC_MAX ? TC_MAX : cap < 2 ? 2 : cap;
  }
}

int rt_class_for_aligned(uint64_t n, size_t align) {
  if (n > MAX_CLASS_SIZE)
    return -1;
  for (int c = rt_class_for(n); c < NCLASS; c++)
    if ((class_size[c] & (align - 1)) == 0)
      return c;
  return -1;
}
