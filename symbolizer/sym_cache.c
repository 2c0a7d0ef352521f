/* sym_cache.c - per-module memo: vaddr -> frames, so each unique PC is
 * symbolized once.  Open addressing with linear probing, kept at most half
 * full.  Frames live in an arena of chunks that never move, because
 * msym_symbolize hands out pointers valid until msym_free; the strings in
 * them point into libdw's data for the module and live as long.
 */
#include <stdlib.h>
#include <string.h>

#include "sym_internal.h"

enum { CHUNK_FRAMES = 4096 };

static size_t slot_of(uint64_t vaddr, size_t nslots) {
  uint64_t h = vaddr * 0x9e3779b97f4a7c15ull;
  return (size_t)(h >> 32) & (nslots - 1);
}

const sym_cache_slot *sym_cache_get(const sym_cache *c, uint64_t vaddr) {
  if (!c->nslots)
    return NULL;
  for (size_t i = slot_of(vaddr, c->nslots);; i = (i + 1) & (c->nslots - 1)) {
    const sym_cache_slot *s = &c->slots[i];
    if (!s->used)
      return NULL;
    if (s->vaddr == vaddr)
      return s;
  }
}

static sym_cache_slot *free_slot(sym_cache_slot *slots, size_t nslots,
                                 uint64_t vaddr) {
  size_t i = slot_of(vaddr, nslots);
  while (slots[i].used)
    i = (i + 1) & (nslots - 1);
  return &slots[i];
}

static void grow(sym_cache *c) {
  size_t n = c->nslots ? 2 * c->nslots : 1024;
  sym_cache_slot *slots = mp_xcalloc(n, sizeof *slots);
  for (size_t i = 0; i < c->nslots; i++)
    if (c->slots[i].used)
      *free_slot(slots, n, c->slots[i].vaddr) = c->slots[i];
  free(c->slots);
  c->slots = slots;
  c->nslots = n;
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

const sym_cache_slot *sym_cache_put(sym_cache *c, uint64_t vaddr,
                                    const msym_frame *frames, size_t n) {
  if (2 * (c->count + 1) > c->nslots)
    grow(c);
  sym_cache_slot *s = free_slot(c->slots, c->nslots, vaddr);
  s->vaddr = vaddr;
  s->n = (uint32_t)n;
  s->used = 1;
  s->frames = NULL;
  if (n) {
    msym_frame *copy = arena_alloc(c, n);
    memcpy(copy, frames, n * sizeof *frames);
    s->frames = copy;
  }
  c->count++;
  return s;
}

void sym_cache_free(sym_cache *c) {
  for (sym_arena_chunk *k = c->chunks, *next; k; k = next) {
    next = k->next;
    free(k);
  }
  free(c->slots);
  memset(c, 0, sizeof *c);
}
