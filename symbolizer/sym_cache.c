/* sym_cache.c - per-module memo: vaddr -> frames, so each unique PC is
 * symbolized once.  The index is the tools' hash map (common/hashmap.h)
 * from vaddr to an entry.  Frames live in an arena of chunks that never
 * move, because msym_symbolize hands out pointers valid until msym_free;
 * the strings in them point into libdw's data for the module and live as
 * long.
 */
#include <stdlib.h>
#include <string.h>

#include "sym_internal.h"

enum { CHUNK_FRAMES = 4096 };

const sym_cache_entry *sym_cache_get(const sym_cache *c, uint64_t vaddr) {
  if (!c->index.slots)
    return NULL;
  uint32_t i = mp_map_get(&c->index, vaddr);
  return i == MP_MAP_EMPTY ? NULL : &c->entries[i];
}

static msym_frame *arena_alloc(sym_cache *c, size_t n) {
  sym_arena_chunk *k = c->chunks;
  if (!k || k->cap - k->used < n) {
    size_t cap = n > CHUNK_FRAMES ? n : CHUNK_FRAMES;
    k = mp_xmalloc(sizeof *k + cap * sizeof k->frames[0]);
    k->cap = cap;
    k->used = 0;
    k->next = c->chunks;
    c->chunks = k;
  }
  msym_frame *f = &k->frames[k->used];
  k->used += n;
  return f;
}

const sym_cache_entry *sym_cache_put(sym_cache *c, uint64_t vaddr,
                                     const msym_frame *frames, size_t n) {
  if (!c->index.slots)
    mp_map_init(&c->index, 1);
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 256;
    c->entries = mp_xrealloc(c->entries, c->cap * sizeof *c->entries);
  }
  sym_cache_entry *e = &c->entries[c->n];
  e->n = (uint32_t)n;
  e->frames = NULL;
  if (n) {
    msym_frame *copy = arena_alloc(c, n);
    memcpy(copy, frames, n * sizeof *frames);
    e->frames = copy;
  }
  mp_map_put(&c->index, vaddr, (uint32_t)c->n++);
  return e;
}

void sym_cache_free(sym_cache *c) {
  for (sym_arena_chunk *k = c->chunks, *next; k; k = next) {
    next = k->next;
    free(k);
  }
  if (c->index.slots)
    mp_map_free(&c->index);
  free(c->entries);
  memset(c, 0, sizeof *c);
}
