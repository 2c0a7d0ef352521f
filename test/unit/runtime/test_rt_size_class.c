/* test_rt_size_class.c - the allocator's size classes (runtime/
 * rt_size_class.c, compiled in unchanged): the table, the smallest class
 * for every size, the reciprocals that replace free's division, and
 * aligned classes, each against brute force, with the fine classes
 * serving and without them (fine_classes), with the twins taking the
 * blocks that fill their slot and without them (fill_classes). */
#include <stdint.h>
#include <stdlib.h>

#include "test/unit/check.h"
#include "test/unit/rng.h"
#include "runtime/heap/rt_size_class.h"

static void test_table(void) {
  static const uint32_t fine[] = {16, 32, 48, 80, 96, 112, 160, 224};
  CHECK(NCLASS == 88, "%d classes", NCLASS);
  CHECK(class_size[NCLASS - 1] == MAX_CLASS_SIZE, "largest %u", class_size[NCLASS - 1]);
  int n_fine = 0, n_twins = 0;
  for (int c = 0; c < NCLASS; c++) {
    int is_fine = 0;
    for (size_t i = 0; i < sizeof fine / sizeof *fine; i++)
      is_fine |= class_size[c] == fine[i];
    n_fine += is_fine;
    CHECK(is_fine == !rt_class_whole_cells(c), "class %d size %u: fine %d", c, class_size[c],
          is_fine);
    CHECK(class_size[c] % 16 == 0, "class %d size %u keeps no 16-byte alignment", c,
          class_size[c]);
    int twin = c < 16 && c % 2; /* 16, 16, 32, 32, .. 128, 128, 160 */
    n_twins += twin;
    if (c < 17)
      CHECK(class_size[c] == 16u * (c / 2 + 1) + 16u * (c == 16), "class %d size %u", c,
            class_size[c]);
    CHECK(twin == rt_class_twin(c), "class %d size %u: twin %d", c, class_size[c], twin);
    CHECK(c == 0 || class_size[c] > class_size[c - 1] || twin, "class %d not above %d", c,
          c - 1);
    CHECK(tc_cap[c] >= 2 && tc_cap[c] <= TC_MAX, "class %d cache %u", c, tc_cap[c]);
  }
  CHECK(n_fine == 14, "%d fine classes (8 and 6 twins)", n_fine);
  CHECK(n_twins == 8, "%d twins", n_twins);
  /* eight per doubling above 1 KiB: 4096 + 66 fits 4608, not 5120 */
  CHECK(class_size[rt_class_for(4096 + 66)] == 4608, "%u", class_size[rt_class_for(4162)]);
}

static int twins_on; /* fill_classes */

/* The smallest class of at least n bytes that serves now, by brute force:
 * while the twins serve, a block of up to 128 bytes that leaves fewer
 * than 8 bytes of its slot free takes the second of two classes of its
 * size, any other block the first. */
static int brute_class(uint64_t n, size_t align) {
  for (int c = 0; c < NCLASS; c++) {
    int second = c > 0 && class_size[c] == class_size[c - 1];
    int first = c + 1 < NCLASS && class_size[c] == class_size[c + 1];
    int fills = n + 8 > class_size[c];
    if (rt_fine_classes && twins_on && first && fills)
      continue;
    if (second && !(rt_fine_classes && twins_on && fills))
      continue;
    if (class_size[c] >= n && (rt_fine_classes || class_size[c] % 64 == 0) &&
        class_size[c] % (align < 16 ? 16 : align) == 0)
      return c;
  }
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
  int fine_twin = rt_fine_classes && twins_on;
  CHECK(rt_class_for(24) == (rt_fine_classes ? 2 : 6), "size 24: class %d", rt_class_for(24));
  CHECK(rt_class_for(25) == (fine_twin ? 3 : rt_fine_classes ? 2 : 6), "size 25: class %d",
        rt_class_for(25));
  CHECK(rt_class_for(64) == (fine_twin ? 7 : 6), "size 64: class %d", rt_class_for(64));
  CHECK(rt_class_for(120) == 14, "size 120: class %d", rt_class_for(120));
  CHECK(rt_class_for(121) == (fine_twin ? 15 : 14), "size 121: class %d", rt_class_for(121));
  CHECK(rt_class_for(129) == (rt_fine_classes ? 16 : 17), "size 129: class %d",
        rt_class_for(129));
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

static void test_modes(int twins) {
  twins_on = twins;
  rt_size_classes_init(1, twins);
  CHECK(rt_fine_classes == 1, "fine classes serve");
  test_all();
  rt_size_classes_whole_cells(); /* counting started */
  CHECK(rt_fine_classes == 0, "whole cells only");
  test_all();
  rt_size_classes_init(0, twins); /* fine_classes=0 */
  test_all();
}

int main(void) {
  test_modes(1);
  test_modes(0); /* fill_classes=0 */
  return check_result();
}
