/* test_stack_cache.c - the raw reader's stack cache
 * (profdata/raw/stack_cache.c): every inserted key (length and two hashes)
 * is found again with its own model stack and alloc site GUIDs, through
 * several chunks of entries and rehashes, also when many keys share their
 * first hash (or only its tag); keys differing in either hash or in length
 * are told apart; absent keys are not found; refs and GUIDs of an entry do
 * not overlap; entries never move; an entry larger than a chunk gets one of
 * its own. */
#include <stdio.h>
#include <stdlib.h>

#include "test/unit/check.h"
#include "profdata/raw/stack_cache.h"


/* Key i: (i % 7) + 1 elements; every 16 keys share their first hash, so
 * finds must compare the second; the low half of the first varies within a
 * group so tags collide too. */
static uint32_t len_of(uint32_t i) { return i % 7 + 1; }
static uint64_t hash_of(uint32_t i) { return (uint64_t)(i / 16) * 0x9e3779b97f4a7c15ULL; }
static uint64_t hash2_of(uint32_t i) { return i * 0xc2b2ae3d27d4eb4fULL + 1; }

int main(void) {
  enum { N = 20000 };
  stack_cache c;
  sc_init(&c);
  uint32_t ids[N];
  const stack_ent *first = NULL;
  for (uint32_t i = 0; i < N; i++) {
    CHECK(sc_find(&c, len_of(i), hash_of(i), hash2_of(i)) == SC_NONE,
          "key %u found before insert", i);
    if (i == 1) first = sc_ent(&c, ids[0]);
    uint64_t guids[3] = {i * 3ULL, i * 3ULL + 1, i * 3ULL + 2};
    ids[i] = sc_insert(&c, len_of(i), hash_of(i), hash2_of(i), i + 100, guids,
                       1 + i % 3);
    CHECK(ids[i] != SC_NONE, "insert %u", i);
    /* refs must not overlap the GUIDs */
    for (uint32_t k = 0; k < 2 * (1 + i % 3); k++)
      sc_refs(sc_ent(&c, ids[i]))[k] = 0xdeadbeef;
  }
  CHECK(c.n == N, "count %zu", c.n);
  CHECK(c.n_chunks >= 2, "only %zu chunks", c.n_chunks);
  for (uint32_t i = 0; i < N; i++) {
    uint32_t id = sc_find(&c, len_of(i), hash_of(i), hash2_of(i));
    CHECK(id == ids[i], "key %u: id %u, want %u", i, id, ids[i]);
    if (id == SC_NONE) continue;
    const stack_ent *e = sc_ent(&c, id);
    CHECK(e->model_stack == i + 100 && e->key_len == len_of(i) &&
              e->hash == hash_of(i) && e->hash2 == hash2_of(i),
          "entry %u", i);
    CHECK(e->n_sites == 1 + i % 3 && sc_guids(e)[0] == i * 3ULL &&
              sc_guids(e)[e->n_sites - 1] == i * 3ULL + e->n_sites - 1,
          "sites of entry %u", i);
    CHECK(sc_guess(&c, hash_of(i)) != SC_NONE, "guess %u", i);
  }
  CHECK(sc_ent(&c, ids[0]) == first, "entries moved");
  /* Keys that differ from key 5 in one part only are other keys. */
  CHECK(sc_find(&c, len_of(5) + 1, hash_of(5), hash2_of(5)) == SC_NONE,
        "other length found");
  CHECK(sc_find(&c, len_of(5), hash_of(5), hash2_of(5) + 1) == SC_NONE,
        "other second hash found");
  CHECK(sc_find(&c, len_of(5), 0x1234567ULL, hash2_of(5)) == SC_NONE,
        "other first hash found");
  /* An entry larger than a chunk gets one of its own; the next goes on. */
  enum { HUGE_SITES = SC_CHUNK_WORDS / 4 + 10 };
  uint64_t *guids = malloc(HUGE_SITES * sizeof *guids);
  for (uint32_t j = 0; j < HUGE_SITES; j++) guids[j] = j * 40503u;
  uint32_t hid = sc_insert(&c, 3, 77, 1, 7, guids, HUGE_SITES);
  uint32_t after = sc_insert(&c, 3, 78, 1, 8, NULL, 0);
  CHECK(hid != SC_NONE && sc_find(&c, 3, 77, 1) == hid &&
            sc_guids(sc_ent(&c, hid))[HUGE_SITES - 1] ==
                (HUGE_SITES - 1) * 40503ULL,
        "huge entry not found");
  CHECK(after != SC_NONE && sc_find(&c, 3, 78, 1) == after &&
            (after >> SC_CHUNK_BITS) != (hid >> SC_CHUNK_BITS),
        "entry after the huge one");
  free(guids);
  sc_free(&c);
  printf("stack cache: %d keys\n", N);
  return check_result();
}
