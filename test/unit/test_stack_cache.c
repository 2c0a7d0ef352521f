/* test_stack_cache.c - the raw reader's stack cache (profdata/stack_cache.c):
 * every inserted key is found again with its own model stack, through
 * growth of the arena and several rehashes, also when many keys share a
 * hash (or only its tag); absent keys are not found; refs and keys of an
 * entry do not overlap. */
#include <stdio.h>
#include <string.h>

#include "stack_cache.h"

static int failures;

#define CHECK(cond, ...)                                                     \
  do {                                                                       \
    if (!(cond)) {                                                           \
      printf("FAIL " __VA_ARGS__);                                           \
      printf("\n");                                                          \
      failures++;                                                            \
    }                                                                        \
  } while (0)

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
  for (uint32_t i = 0; i < N; i++) {
    uint32_t n = make_key(i, key);
    CHECK(sc_find(&c, key, n, hash_of(i)) == SC_NONE, "key %u found before insert", i);
    ids[i] = sc_insert(&c, key, n, hash_of(i), i + 100, 1 + i % 3);
    CHECK(ids[i] != SC_NONE, "insert %u", i);
    sc_refs(sc_ent(&c, ids[i]))[0] = 0xdeadbeef; /* must not touch the key */
  }
  CHECK(c.n == N, "count %zu", c.n);
  for (uint32_t i = 0; i < N; i++) {
    uint32_t n = make_key(i, key);
    uint32_t id = sc_find(&c, key, n, hash_of(i));
    CHECK(id == ids[i], "key %u: id %u, want %u", i, id, ids[i]);
    if (id == SC_NONE) continue;
    const stack_ent *e = sc_ent(&c, id);
    CHECK(e->model_stack == i + 100 && e->key_len == n &&
              !memcmp(sc_key(e), key, n * 4),
          "entry %u", i);
    CHECK(sc_guess(&c, hash_of(i)) != SC_NONE, "guess %u", i);
  }
  /* A key differing only in its last element, and one with a new hash. */
  uint32_t n = make_key(5, key);
  key[n - 1]++;
  CHECK(sc_find(&c, key, n, hash_of(5)) == SC_NONE, "changed key found");
  CHECK(sc_find(&c, key, n, 0x1234567ULL) == SC_NONE, "unknown hash found");
  sc_free(&c);
  if (failures) {
    printf("%d failures\n", failures);
    return 1;
  }
  printf("stack cache: %d keys ok\n", N);
  return 0;
}
