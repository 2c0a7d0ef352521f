/* test_rt_size_class.c - the allocator's size classes (runtime/
 * rt_size_class.c, compiled in unchanged): the table, the smallest class
 * for every size, the reciprocals that replace free's division, and
 * aligned classes, each against brute force. */
#include <stdint.h>
#include <stdlib.h>

#include "test/unit/check.h"
#include "test/unit/rng.h"
#include "runtime/heap/rt_size_class.h"

static void test_table(void) {
  CHECK(NCLASS == 72, "%d classes", NCLASS);
  CHECK(class_size[NCLASS - 1] == MAX_CLASS_SIZE, "largest %u", class_size[NCLASS - 1]);
  for (int c = 0; c < NCLASS; c++) {
    CHECK(class_size[c] % 64 == 0, "class %d size %u is no run of 64-byte cells", c,
          class_size[c]);
    CHECK(c == 0 || class_size[c] > class_size[c - 1], "class %d not above %d", c, c - 1);
    CHECK(tc_cap[c] >= 2 && tc_cap[c] <= TC_MAX, "class %d cache %u", c, tc_cap[c]);
  }
  /* eight per doubling above 1 KiB: 4096 + 66 fits 4608, not 5120 */
  CHECK(class_size[rt_class_for(4096 + 66)] == 4608, "%u", class_size[rt_class_for(4162)]);
}

static void test_smallest_class(void) {
  int c = 0;
  for (uint64_t n = 1; n <= MAX_CLASS_SIZE; n++) {
    while (class_size[c] < n) c++;
    if (rt_class_for(n) != c) {
      CHECK(0, "size %llu: class %d, want %d", (unsigned long long)n, rt_class_for(n), c);
      return;
    }
  }
  CHECK(rt_class_for(0) == 0, "size 0");
}


static void test_reciprocals(void) {
  for (int c = 0; c < NCLASS; c++) {
    uint64_t size = class_size[c];
    for (int i = 0; i < 20000; i++) {
      uint64_t off = i < 3 ? (uint64_t)UINT32_MAX - (uint64_t)i : rnd() >> 32;
      if (i % 2) off = off / size * size - (i % 4 == 1); /* at and below a slot edge */
      uint64_t q = (uint64_t)(((unsigned __int128)off * class_recip[c]) >> 64);
      if (q != off / size) {
        CHECK(0, "class %d: %llu / %llu gave %llu", c, (unsigned long long)off,
              (unsigned long long)size, (unsigned long long)q);
        return;
      }
    }
  }
}

static void test_aligned(void) {
  for (size_t a = 64; a <= 8192; a *= 2)
    for (uint64_t n = 1; n <= MAX_CLASS_SIZE; n += 37) {
      int want = -1;
      for (int c = 0; c < NCLASS && want < 0; c++)
        if (class_size[c] >= n && class_size[c] % a == 0) want = c;
      if (rt_class_for_aligned(n, a) != want) {
        CHECK(0, "size %llu align %zu: %d, want %d", (unsigned long long)n, a,
              rt_class_for_aligned(n, a), want);
        return;
      }
    }
  CHECK(rt_class_for_aligned(MAX_CLASS_SIZE + 1, 64) == -1, "past the classes");
}

int main(void) {
  rt_size_classes_init();
  test_table();
  test_smallest_class();
  test_reciprocals();
  test_aligned();
  return check_result();
}
