/* test_stack_cache.c - the raw reader's stack cache (profdata/stack_cache.c):
 * every inserted key is found again with its own model stack and alloc
 * site GUIDs, through several chunks of entries and rehashes, also when
 * many keys share a hash (or only its tag); absent keys are not found;
 * refs, GUIDs and keys of an entry do not overlap; entries never move. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "stack_cache.h"


/* Key i: (i % 7) + 1 elements derived from i, so lengths differ too. */
static uint32_t make_key(uint32_t i, uint32_t *key) {
  uint32_t n = i % 7 + 1;
  for (uint32_t j = 0; j < n; j++) key[j] = i * 2654435761u + j;
  return n;
}

/* Hash of key i: every 16 keys share one full hash, so finds must compare
 * keys; the low half varies within a group so tags collide too. */
static uint64_t hash_of(uint32_t i) { return (uint64_t)(i / 16) * 0x9e3779b97f4a7c15ULL; }

int main(void) {
  enum { N = 20000 };
  stack_cache c;
  sc_init(&c);
  uint32_t key[8], ids[N];
  const stack_ent *first = NULL;
  for (uint32_t i = 0; i < N; i++) {
    uint32_t n = make_key(i, key);
    CHECK(sc_find(&c, key, n, hash_of(i)) == SC_NONE, "key %u found before insert", i);
    if (i == 1) first = sc_ent(&c, ids[0]);
    uint64_t guids[3] = {i * 3ULL, i * 3ULL + 1, i * 3ULL + 2};
    ids[i] = sc_insert(&c, key, n, hash_of(i), i + 100, guids, 1 + i % 3);
    CHECK(ids[i] != SC_NONE, "insert %u", i);
    /* refs must not overlap the GUIDs or the key */
    for (uint32_t k = 0; k < 2 * (1 + i % 3); k++)
      sc_refs(sc_ent(&c, ids[i]))[k] = 0xdeadbeef;
  }
  CHECK(c.n == N, "count %zu", c.n);
  CHECK(c.n_chunks >= 2, "only %zu chunks", c.n_chunks);
  for (uint32_t i = 0; i < N; i++) {
    uint32_t n = make_key(i, key);
    uint32_t id = sc_find(&c, key, n, hash_of(i));
    CHECK(id == ids[i], "key %u: id %u, want %u", i, id, ids[i]);
    if (id == SC_NONE) continue;
    const stack_ent *e = sc_ent(&c, id);
    CHECK(e->model_stack == i + 100 && e->key_len == n &&
              !memcmp(sc_key(e), key, n * 4),
          "entry %u", i);
    CHECK(e->n_sites == 1 + i % 3 && sc_guids(e)[0] == i * 3ULL &&
              sc_guids(e)[e->n_sites - 1] == i * 3ULL + e->n_sites - 1,
          "sites of entry %u", i);
    CHECK(sc_guess(&c, hash_of(i)) != SC_NONE, "guess %u", i);
  }
  CHECK(sc_ent(&c, ids[0]) == first, "entries moved");
  /* An entry larger than a chunk gets one of its own; the next goes on. */
  enum { HUGE_LEN = 300000 };
  uint32_t *huge = malloc(HUGE_LEN * 4);
  for (uint32_t j = 0; j < HUGE_LEN; j++) huge[j] = j * 40503u;
  uint32_t hid = sc_insert(&c, huge, HUGE_LEN, 77, 7, NULL, 0);
  uint32_t after = sc_insert(&c, huge, 5, 78, 8, NULL, 0);
  CHECK(hid != SC_NONE && sc_find(&c, huge, HUGE_LEN, 77) == hid,
        "huge entry not found");
  CHECK(after != SC_NONE && sc_find(&c, huge, 5, 78) == after &&
            (after >> SC_CHUNK_BITS) != (hid >> SC_CHUNK_BITS),
        "entry after the huge one");
  CHECK(sc_find(&c, huge, HUGE_LEN, 78) == SC_NONE, "huge key, other hash");
  free(huge);
  /* A key differing only in its last element, and one with a new hash. */
  uint32_t n = make_key(5, key);
  key[n - 1]++;
  CHECK(sc_find(&c, key, n, hash_of(5)) == SC_NONE, "changed key found");
  CHECK(sc_find(&c, key, n, 0x1234567ULL) == SC_NONE, "unknown hash found");
  sc_free(&c);
  printf("stack cache: %d keys\n", N);
  return check_result();
}
