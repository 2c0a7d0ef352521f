/* stack_cache.c - the raw reader's stack cache (stack_cache.h). */
#include "stack_cache.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

#define SLOT_EMPTY UINT64_MAX
#define SLOT_TAG(h) ((h) >> 32 << 32)
#define HEAD_WORDS (sizeof(stack_ent) / 4)

void sc_init(stack_cache *c) {
  memset(c, 0, sizeof *c);
  c->mask = 1023;
  c->slots = mp_xmalloc((c->mask + 1) * sizeof *c->slots);
  memset(c->slots, 0xff, (c->mask + 1) * sizeof *c->slots);
}

void sc_free(stack_cache *c) {
  free(c->mem);
  free(c->slots);
  memset(c, 0, sizeof *c);
}

/* Entry sizes in words, rounded up to keep every header 8-byte aligned. */
static size_t ent_words(uint32_t n, uint32_t cap_refs) {
  size_t w = HEAD_WORDS + 2 * (size_t)cap_refs + n;
  return (w + 1) & ~(size_t)1;
}

static void rehash(stack_cache *c, size_t slots) {
  free(c->slots);
  c->slots = mp_xmalloc(slots * sizeof *c->slots);
  memset(c->slots, 0xff, slots * sizeof *c->slots);
  c->mask = slots - 1;
  for (size_t at = 0; at < c->used;) {
    const stack_ent *e = sc_ent(c, (uint32_t)at);
    size_t i = e->hash & c->mask;
    while (c->slots[i] != SLOT_EMPTY) i = (i + 1) & c->mask;
    c->slots[i] = SLOT_TAG(e->hash) | at;
    at += ent_words(e->key_len, e->cap_refs);
  }
}

void sc_reserve(stack_cache *c, size_t entries, size_t words,
                size_t times) {
  size_t slots = c->mask + 1;
  while ((c->n + entries) * 4 > slots * 3 && slots < SIZE_MAX / 16)
    slots *= 2;
  if (slots != c->mask + 1) rehash(c, slots);
  words += entries * (HEAD_WORDS + 3); /* a ref and alignment each */
  words = words <= SIZE_MAX / times ? words * times : SIZE_MAX;
  if (c->used + words > c->cap && c->used + words <= UINT32_MAX) {
    c->mem = mp_xrealloc(c->mem, (c->used + words) * 4);
    c->cap = c->used + words;
  }
}

uint32_t sc_find(const stack_cache *c, const uint32_t *key, uint32_t n,
                 uint64_t h) {
  size_t i = h & c->mask;
  for (;;) {
    uint64_t v = c->slots[i];
    if (v == SLOT_EMPTY) return SC_NONE;
    if (SLOT_TAG(v) == SLOT_TAG(h)) {
      const stack_ent *e = sc_ent(c, (uint32_t)v);
      if (e->hash == h && e->key_len == n &&
          (n == 0 || !memcmp(sc_key(e), key, (size_t)n * 4)))
        return (uint32_t)v;
    }
    i = (i + 1) & c->mask;
  }
}

uint32_t sc_guess(const stack_cache *c, uint64_t h) {
  size_t i = h & c->mask;
  for (;;) {
    uint64_t v = c->slots[i];
    if (v == SLOT_EMPTY) return SC_NONE;
    if (SLOT_TAG(v) == SLOT_TAG(h)) return (uint32_t)v;
    i = (i + 1) & c->mask;
  }
}

uint32_t sc_insert(stack_cache *c, const uint32_t *key, uint32_t n,
                   uint64_t h, uint32_t model_stack, uint32_t cap_refs) {
  size_t w = ent_words(n, cap_refs);
  if (c->used + w >= UINT32_MAX) return SC_NONE;
  MP_VEC_RESERVE(c->mem, c->cap, c->used + w);
  uint32_t id = (uint32_t)c->used;
  stack_ent *e = sc_ent(c, id);
  *e = (stack_ent){h, n, model_stack, 0, cap_refs};
  if (n) memcpy((uint32_t *)sc_key(e), key, (size_t)n * 4);
  c->used += w;
  c->n++;
  if (c->n * 4 > (c->mask + 1) * 3) {
    rehash(c, (c->mask + 1) * 2);
  } else {
    size_t i = h & c->mask;
    while (c->slots[i] != SLOT_EMPTY) i = (i + 1) & c->mask;
    c->slots[i] = SLOT_TAG(h) | id;
  }
  return id;
}
