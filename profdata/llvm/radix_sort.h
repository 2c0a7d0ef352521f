/* radix_sort.h - ordering call stacks for the radix array (radix_sort.c),
 * private to radix.c. */
#ifndef PROFDATA_RADIX_SORT_H
#define PROFDATA_RADIX_SORT_H

#include "radix.h"

typedef struct sorted {
  uint32_t *order;
  uint32_t *lcp; /* lcp[i]: root frames order[i - 1] and order[i] share */
  const mp_radix_stack *st;
  const uint32_t *map; /* element -> linear frame id, NULL: the same */
} sorted;

/* Sorts stacks[0..n) root first by frame rank (frames ranked by ascending
 * count, then key; m maps elements to linear frames) into *so, whose
 * order and lcp arrays the caller frees. */
void mp_radix_sort(const mp_radix_stack *stacks, size_t n,
                   const mp_radix_map *m, const uint64_t *count,
                   const uint64_t *key, sorted *so);

#endif
