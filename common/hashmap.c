/* hashmap.c - the tools' one hash map (hashmap.h): memprof-profdata's
 * model and the symbolizer's memo. */
#include "hashmap.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"

static void alloc_slots(mp_map *m, size_t n) {
  m->slots = mp_xmalloc(n * sizeof *m->slots);
  /* all ones: every val is MP_MAP_EMPTY */
  memset(m->slots, 0xff, n * sizeof *m->slots);
  m->mask = n - 1;
}

void mp_map_init(mp_map *m, int keyed) {
  m->keyed = keyed;
  m->used = 0;
  alloc_slots(m, 64);
}

void mp_map_free(mp_map *m) {
  free(m->slots);
  m->slots = NULL;
  m->mask = m->used = 0;
}

/* Rehash into n slots (a power of two, more than used). */
static void resize(mp_map *m, size_t n) {
  mp_map_slot *old = m->slots;
  size_t old_n = m->used ? m->mask + 1 : 0;
  alloc_slots(m, n);
  for (size_t i = 0; i < old_n; i++) {
    if (old[i].val == MP_MAP_EMPTY) continue;
    uint64_t hk = old[i].hk;
    size_t j = (m->keyed ? mp_mix64(hk) : hk) & m->mask;
    while (m->slots[j].val != MP_MAP_EMPTY) j = (j + 1) & m->mask;
    m->slots[j] = old[i];
  }
  free(old);
}

void mp_map_reserve(mp_map *m, size_t n) {
  size_t size = m->mask + 1;
  while (n * 4 > size * 3 && n < SIZE_MAX / 8) size *= 2;
  if (size > m->mask + 1) resize(m, size);
}

mp_map_slot *mp_map_probe(const mp_map *m, uint64_t hash, uint64_t key,
                          mp_map_eq eq, const void *ctx, const void *ekey) {
  size_t i = hash & m->mask;
  for (;;) {
    mp_map_slot *s = &m->slots[i];
    if (s->val == MP_MAP_EMPTY) return s;
    if (eq ? s->hk == hash && eq(ctx, s->val, ekey) : s->hk == key) return s;
    i = (i + 1) & m->mask;
  }
}

void mp_map_insert(mp_map *m, mp_map_slot *s, uint64_t hash, uint64_t key,
                   uint32_t val) {
  s->hk = m->keyed ? key : hash;
  s->val = val;
  if (++m->used * 4 > (m->mask + 1) * 3) resize(m, (m->mask + 1) * 2);
}

/* The slot of `key` in a keyed map, or the free slot where it belongs:
 * mp_map_probe without the callback, for the keyed calls below (the raw
 * reader makes one per stack of every input). */
static inline mp_map_slot *probe_key(const mp_map *m, uint64_t key) {
  size_t i = mp_mix64(key) & m->mask;
  for (;;) {
    mp_map_slot *s = &m->slots[i];
    if (s->val == MP_MAP_EMPTY || s->hk == key) return s;
    i = (i + 1) & m->mask;
  }
}

uint32_t mp_map_get(const mp_map *m, uint64_t key) {
  return probe_key(m, key)->val;
}

uint32_t mp_map_get_or_put(mp_map *m, uint64_t key, uint32_t val) {
  mp_map_slot *s = probe_key(m, key);
  if (s->val != MP_MAP_EMPTY) return s->val;
  mp_map_insert(m, s, 0, key, val);
  return MP_MAP_EMPTY;
}

void mp_map_put(mp_map *m, uint64_t key, uint32_t val) {
  mp_map_slot *s = probe_key(m, key);
  if (s->val != MP_MAP_EMPTY) {
    s->val = val;
    return;
  }
  mp_map_insert(m, s, 0, key, val);
}
