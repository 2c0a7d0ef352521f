/* test_model_sites.c - alloc sites and the index tables of the in-memory
 * profile (profdata/model/model.c): sites added to several records,
 * interleaved, are found again in insertion order through every segment
 * boundary (4, 12, 28, ... sites) with their own MIBs; a site never moves
 * once added; adding the same (record, stack) again merges into it, by index
 * and by mp_merge_alloc_at; records, stacks and frames are found again
 * through tables that grew many times; the context count counts a stack
 * shared by two records once. */
#include <stdio.h>
#include <string.h>

#include "test/unit/check.h"
#include "profdata/model/model.h"

enum { RECORDS = 3, SITES = 5000 };

static mpf_mib mib_of(uint32_t count, uint32_t size) {
  mpf_mib m;
  memset(&m, 0, sizeof m);
  m.AllocCount = count;
  m.TotalSize = (uint64_t)count * size;
  m.MinSize = m.MaxSize = size;
  return m;
}

/* Stack i: two frames derived from i. */
static uint32_t stack_of(mp_profile *p, uint32_t i) {
  mp_frame f[2] = {{0x1000 + i, i % 7, i % 5, 0}, {0x2000 + i / 3, 1, 2, 1}};
  uint32_t ids[2] = {mp_intern_frame(p, &f[0]), mp_intern_frame(p, &f[1])};
  return mp_intern_stack(p, ids, 2);
}

int main(void) {
  mp_profile *p = mp_profile_new();
  static uint32_t stacks[SITES];
  static const mp_alloc_site *where[SITES];
  /* record r gets sites r, r + RECORDS, ...: the records grow interleaved */
  for (uint32_t i = 0; i < SITES; i++) {
    stacks[i] = stack_of(p, i);
    mpf_mib m = mib_of(1, i + 1);
    uint32_t rec, idx;
    mp_add_alloc_site_at(p, 100 + i % RECORDS, stacks[i], &m, NULL, &rec,
                         &idx);
    CHECK(rec == i % RECORDS && idx == i / RECORDS, "site %u at %u/%u", i,
          rec, idx);
    where[i] = mp_alloc_of(&p->records[rec], idx);
  }
  CHECK(p->n_records == RECORDS, "records %zu", p->n_records);
  CHECK(p->n_stacks == SITES, "stacks %zu", p->n_stacks);
  for (uint32_t i = 0; i < SITES; i++) {
    const mp_record *r = mp_record_find(p, 100 + i % RECORDS);
    CHECK(r == &p->records[i % RECORDS], "record of site %u", i);
    const mp_alloc_site *a = mp_alloc_of(r, i / RECORDS);
    CHECK(a == where[i], "site %u moved", i);
    CHECK(a->stack == stacks[i] && a->mib.AllocCount == 1 &&
              a->mib.MinSize == i + 1 && a->hist == NULL,
          "site %u: stack %u count %u size %u", i, a->stack, a->mib.AllocCount,
          a->mib.MinSize);
    CHECK(stack_of(p, i) == stacks[i], "stack %u interned again", i);
  }
  /* the same context again merges, found by its (record, stack) */
  mpf_mib two = mib_of(2, 4000);
  mp_add_alloc_site(p, 100 + 4999 % RECORDS, stacks[4999], &two, NULL);
  mp_merge_alloc_at(p, 0, 7, &two, NULL); /* site 21 */
  const mp_alloc_site *a = where[4999], *b = where[21];
  CHECK(a->mib.AllocCount == 3 && a->mib.TotalSize == 5000 + 8000 &&
            a->mib.MinSize == 4000 && a->mib.MaxSize == 5000,
        "merged site 4999: %u %llu %u %u", a->mib.AllocCount,
        (unsigned long long)a->mib.TotalSize, a->mib.MinSize, a->mib.MaxSize);
  CHECK(b->mib.AllocCount == 3 && b->mib.MinSize == 22 &&
            b->mib.MaxSize == 4000,
        "merged site 21: %u %u %u", b->mib.AllocCount, b->mib.MinSize,
        b->mib.MaxSize);
  size_t total = 0;
  for (size_t r = 0; r < p->n_records; r++) total += p->records[r].n_allocs;
  CHECK(total == SITES, "sites %zu after merges", total);
  /* one stack in two records is one context */
  mpf_mib one = mib_of(1, 8);
  mp_add_alloc_site(p, 999, stacks[0], &one, NULL);
  CHECK(mp_profile_num_contexts(p) == SITES, "contexts %zu",
        mp_profile_num_contexts(p));
  CHECK(mp_record_find(p, 12345) == NULL, "absent record found");
  mp_profile_free(p);
  return check_result();
}
