/* rt_size_class.c - the allocator's size classes (rt_size_class.h).
 *
 * Eight classes per doubling above 1 KiB: programs often ask for a power
 * of two plus a small header (a database's 4096 + 66-byte pages, 1032-byte
 * buffers), which four per doubling rounded up by a quarter.  Below, the
 * fine classes follow glibc's 16-byte steps up to 128 bytes, where they
 * save the most (a 24-byte block takes 32 bytes, not 64), and add 160 and
 * 224 above (16-byte steps up to 256 bytes left python3's peak RSS
 * unchanged). */
#include "rt_size_class.h"

uint32_t class_size[NCLASS];
uint64_t class_recip[NCLASS];
uint32_t tc_cap[NCLASS];
uint8_t small_class[2][SMALL_STEPS];
int rt_fine_classes;

static int fine_size(uint32_t s) { return s <= 128 || s == 160 || s == 224; }

/* Whether class c may take a block of n bytes: a twin only a block that
 * leaves fewer than SLOT_TAIL_META bytes free, and then only the twin. */
static int twin_fits(int c, uint32_t n, int twins) {
  int fills = n + SLOT_TAIL_META > class_size[c];
  if (rt_class_twin(c))
    return twins && fills;
  return !(twins && fills && c + 1 < NCLASS && rt_class_twin(c + 1));
}

/* The smallest class of at least n bytes, among all or the whole-cell
 * ones, the twins included or not. */
static int smallest(uint32_t n, int fine, int twins) {
  int c = 0;
  while (class_size[c] < n || (!fine && !rt_class_whole_cells(c)) ||
         !twin_fits(c, n, fine && twins))
    c++;
  return c;
}

void rt_size_classes_init(int fine, int twins) {
  int c = 0;
  for (uint32_t s = 16; s <= 1024; s += 16)
    if (s % 64 == 0 || fine_size(s)) {
      class_size[c++] = s;
      if (s <= TWIN_MAX)
        class_size[c++] = s;
    }
  for (uint32_t base = 1024; base < MAX_CLASS_SIZE; base *= 2)
    for (uint32_t q = 1; q <= 1u << STEPS_LOG2; q++)
      class_size[c++] = base + (base >> STEPS_LOG2) * q;
  for (c = 0; c < NCLASS; c++) {
    class_recip[c] = UINT64_MAX / class_size[c] + 1;
    uint32_t cap = 65536 / class_size[c];
    tc_cap[c] = cap > TC_MAX ? TC_MAX : cap < 2 ? 2 : cap;
  }
  for (int k = 0; k < SMALL_STEPS; k++) {
    uint32_t n = k ? 8u * (uint32_t)k : 1;
    small_class[0][k] = (uint8_t)smallest(n, 0, 0);
    small_class[1][k] = (uint8_t)smallest(n, 1, twins);
  }
  __atomic_store_n(&rt_fine_classes, fine ? 1 : 0, __ATOMIC_RELEASE);
}

void rt_size_classes_whole_cells(void) {
  __atomic_store_n(&rt_fine_classes, 0, __ATOMIC_RELEASE);
}

int rt_class_for_aligned(uint64_t n, size_t align) {
  if (n > MAX_CLASS_SIZE)
    return -1;
  for (int c = rt_class_for(n); c < NCLASS; c++)
    if (rt_class_serves(c, align))
      return c;
  return -1;
}
