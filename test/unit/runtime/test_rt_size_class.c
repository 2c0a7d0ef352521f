/* test_rt_size_class.c - the allocator's size classes (runtime/
 * rt_size_class.c, compiled in unchanged): the table, the smallest class
 * for every size, the reciprocals that replace free's division, and
 * aligned classes, each against brute force, with the fine classes
 * serving and without them (fine_classes). */
#include <stdint.h>
#include <stdlib.h>

#include "test/unit/check.h"
#include "test/unit/rng.h"
#include "runtime/heap/rt_size_class.h"

static void test_table(void) {
  static const uint32_t fine[] = {16, 32, 48, 80, 96, 112, 160, 224};
  CHECK(NCLASS == 80, "%d classes", NCLASS);
  CHECK(class_size[NCLASS - 1] == MAX_CLASS_SIZE, "largest %u", class_size[NCLASS - 1]);
  int n_fine = 0;
  for (int c = 0; c < NCLASS; c++) {
    int is_fine = 0;
    for (size_t i = 0; i < sizeof fine / sizeof *fine; i++)
      is_fine |= class_size[c] == fine[i];
    n_fine += is_fine;
    CHECK(is_fine == !rt_class_whole_cells(c), "class %d size %u: fine %d", c, class_size[c],
          is_fine);
    CHECK(class_size[c] % 16 == 0, "class %d size %u keeps no 16-byte alignment", c,
          class_size[c]);
    CHECK(c == 0 || class_size[c] > class_size[c - 1], "class %d not above %d", c, c - 1);
    CHECK(tc_cap[c] >= 2 && tc_cap[c] <= TC_MAX, "class %d cache %u", c, tc_cap[c]);
  }
  CHECK(n_fine == 8, "%d fine classes", n_fine);
  /* eight per doubling above 1 KiB: 4096 + 66 fits 4608, not 5120 */
  CHECK(class_size[rt_class_for(4096 + 66)] == 4608, "%u", class_size[rt_class_for(4162)]);
}

/* The smallest class of at least n bytes that serves now, by brute force. */
static int brute_class(uint64_t n, size_t align) {
  for (int c = 0; c < NCLASS; c++)
    if (class_size[c] >= n && (rt_fine_classes || class_size[c] % 64 == 0) &&
        class_size[c] % (align < 16 ? 16 : align) == 0)
      return c;
  return -1;
}

static void test_smallest_class(void) {
  for (uint64_t n = 1; n <= MAX_CLASS_SIZE; n++) {
    int want = brute_class(n, 1);
    if (rt_class_for(n) != want) {
      CHECK(0, "fine %d size %llu: class %d, want %d", rt_fine_classes,
            (unsigned long long)n, rt_class_for(n), want);
      return;
    }
  }
  CHECK(class_size[rt_class_for(0)] == (rt_fine_classes ? 16u : 64u), "size 0");
  CHECK(class_size[rt_class_for(24)] == (rt_fine_classes ? 32u : 64u), "size 24");
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
  for (size_t a = 16; a <= 8192; a *= 2)
    for (uint64_t n = 1; n <= MAX_CLASS_SIZE; n += 37) {
      int want = brute_class(n, a);
      if (rt_class_for_aligned(n, a) != want) {
        CHECK(0, "fine %d size %llu align %zu: %d, want %d", rt_fine_classes,
              (unsigned long long)n, a, rt_class_for_aligned(n, a), want);
        return;
      }
    }
  CHECK(rt_class_for_aligned(MAX_CLASS_SIZE + 1, 64) == -1, "past the classes");
}

static void test_all(void) {
  test_table();
  test_smallest_class();
  test_reciprocals();
  test_aligned();
}

int main(void) {
  rt_size_classes_init(1);
  CHECK(rt_fine_classes == 1, "fine classes serve");
  test_all();
  rt_size_classes_whole_cells(); /* counting started */
  CHECK(rt_fine_classes == 0, "whole cells only");
  test_all();
  rt_size_classes_init(0); /* fine_classes=0 */
  test_all();
  return check_result();
}
