/* stack_cache.c - the raw reader's stack cache (stack_cache.h). */
#include "stack_cache.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"

#define SLOT_EMPTY UINT64_MAX
#define SLOT_TAG(h) ((h) >> 32 << 32)
#define SLOT_ID(v) ((uint32_t)(v))
#define HEAD_WORDS (sizeof(stack_ent) / 4)

static void new_slots(stack_cache *c, size_t slots) {
  c->slots = mp_xmalloc(slots * sizeof *c->slots);
  memset(c->slots, 0xff, slots * sizeof *c->slots);
  c->mask = slots - 1;
}

void sc_init(stack_cache *c) {
  memset(c, 0, sizeof *c);
  c->chunk = mp_xcalloc(SC_MAX_CHUNKS, sizeof *c->chunk);
  new_slots(c, 1024);
}

void sc_free(stack_cache *c) {
  for (size_t i = 0; i < c->n_chunks; i++) free(c->chunk[i]);
  free(c->chunk);
  free(c->slots);
  memset(c, 0, sizeof *c);
}

/* Entry sizes in words; every size is even, so headers stay 8-aligned. */
static size_t ent_words(uint32_t n_sites) {
  return HEAD_WORDS + 4 * (size_t)n_sites;
}

static void put_slot(stack_cache *c, uint64_t h, uint32_t id) {
  size_t i = h & c->mask;
  while (c->slots[i] != SLOT_EMPTY) i = (i + 1) & c->mask;
  c->slots[i] = SLOT_TAG(h) | id;
}

/* The new table is filled from the old one's slots: no entry is read but
 * for its hash. */
static void rehash(stack_cache *c, size_t slots) {
  uint64_t *old = c->slots;
  size_t old_n = c->mask + 1;
  new_slots(c, slots);
  for (size_t i = 0; i < old_n; i++)
    if (old[i] != SLOT_EMPTY)
      put_slot(c, sc_ent(c, SLOT_ID(old[i]))->hash, SLOT_ID(old[i]));
  free(old);
}

void sc_reserve(stack_cache *c, size_t entries) {
  size_t slots = c->mask + 1;
  while ((c->n + entries) * 4 > slots * 3 && slots < SIZE_MAX / 16)
    slots *= 2;
  if (slots != c->mask + 1) rehash(c, slots);
}

uint32_t sc_find(const stack_cache *c, uint32_t n, uint64_t h, uint64_t h2) {
  size_t i = h & c->mask;
  for (;;) {
    uint64_t v = c->slots[i];
    if (v == SLOT_EMPTY) return SC_NONE;
    if (SLOT_TAG(v) == SLOT_TAG(h)) {
      const stack_ent *e = sc_ent(c, SLOT_ID(v));
      if (e->hash == h && e->hash2 == h2 && e->key_len == n)
        return SLOT_ID(v);
    }
    i = (i + 1) & c->mask;
  }
}

uint32_t sc_guess(const stack_cache *c, uint64_t h) {
  size_t i = h & c->mask;
  for (;;) {
    uint64_t v = c->slots[i];
    if (v == SLOT_EMPTY) return SC_NONE;
    if (SLOT_TAG(v) == SLOT_TAG(h)) return SLOT_ID(v);
    i = (i + 1) & c->mask;
  }
}

/* Room for w words: in the current chunk, else in a new one (one of its
 * own, as large as needed, for an entry bigger than a chunk: nothing
 * follows it there).  Its id, or SC_NONE when the chunks are exhausted. */
static uint32_t room(stack_cache *c, size_t w) {
  if (c->n_chunks && c->chunk_used + w <= c->chunk_cap) {
    uint32_t id =
        (uint32_t)((c->n_chunks - 1) << SC_CHUNK_BITS | c->chunk_used);
    c->chunk_used += w;
    return id;
  }
  if (c->n_chunks == SC_MAX_CHUNKS) return SC_NONE;
  size_t cap = w > SC_CHUNK_WORDS ? w : SC_CHUNK_WORDS;
  c->chunk[c->n_chunks++] = mp_xmalloc(cap * 4);
  c->chunk_cap = cap;
  c->chunk_used = w;
  return (uint32_t)((c->n_chunks - 1) << SC_CHUNK_BITS);
}

uint32_t sc_insert(stack_cache *c, uint32_t n, uint64_t h, uint64_t h2,
                   uint32_t model_stack, const uint64_t *guids,
                   uint32_t n_sites) {
  uint32_t id = room(c, ent_words(n_sites));
  if (id == SC_NONE) return SC_NONE;
  stack_ent *e = sc_ent(c, id);
  *e = (stack_ent){h, h2, n, model_stack, 0, n_sites};
  if (n_sites)
    memcpy((uint64_t *)sc_guids(e), guids, (size_t)n_sites * 8);
  c->n++;
  if (c->n * 4 > (c->mask + 1) * 3) rehash(c, (c->mask + 1) * 2);
  put_slot(c, h, id);
  return id;
}
