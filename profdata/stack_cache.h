/* stack_cache.h - the raw reader's cache of normalized call stacks
 * (raw_build.c): for every distinct stack key (raw_keys.c) seen in a
 * merge, its model stack and the alloc sites its MIBs merge into.
 *
 * A lookup of an already-seen stack is the hot path of a merge and misses
 * the CPU caches, so each entry keeps its header, its alloc-site refs and
 * its key back to back: a lookup touches the slot and one run of 2-3
 * cache lines.  Entries are addressed by their offset in the arena (u32
 * words), which stays valid when the arena grows.
 */
#ifndef PROFDATA_STACK_CACHE_H
#define PROFDATA_STACK_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define SC_NONE UINT32_MAX          /* no entry */
#define SC_DROPPED UINT32_MAX       /* model_stack of a stack with no frame */

typedef struct stack_ent {
  uint64_t hash;
  uint32_t key_len;     /* u32 elements */
  uint32_t model_stack; /* or SC_DROPPED */
  uint32_t n_refs;      /* (record, alloc index) pairs filled; 0 until the
                           first MIB */
  uint32_t cap_refs;    /* room for pairs */
  /* then cap_refs pairs, then key_len key elements */
} stack_ent;

typedef struct stack_cache {
  uint32_t *mem; /* entries back to back, each 8-byte aligned */
  size_t used, cap;
  size_t n;       /* entries */
  uint64_t *slots; /* open addressing: hash >> 32 << 32 | entry offset */
  size_t mask;
} stack_cache;

void sc_init(stack_cache *c);
void sc_free(stack_cache *c);

/* Room for about `entries` more entries of `words` u32 words in all, so
 * that a first file is not copied at every doubling; the arena gets
 * `times` that room (reserved, untouched), the slot table only what the
 * entries need (sizing it touches it). */
void sc_reserve(stack_cache *c, size_t entries, size_t words, size_t times);

static inline stack_ent *sc_ent(const stack_cache *c, uint32_t id) {
  return (stack_ent *)(void *)(c->mem + id);
}
static inline uint32_t *sc_refs(stack_ent *e) { return (uint32_t *)(e + 1); }
static inline const uint32_t *sc_key(const stack_ent *e) {
  return (const uint32_t *)(e + 1) + 2 * (size_t)e->cap_refs;
}

/* The entry for key[0..n) with hash h, or SC_NONE. */
uint32_t sc_find(const stack_cache *c, const uint32_t *key, uint32_t n,
                 uint64_t h);
/* Add an entry for a key sc_find did not find; returns its id, or SC_NONE
 * when the arena would outgrow 32-bit offsets. */
uint32_t sc_insert(stack_cache *c, const uint32_t *key, uint32_t n,
                   uint64_t h, uint32_t model_stack, uint32_t cap_refs);

/* For prefetching only: the slot of h, and the entry the probe for h meets
 * first with the same tag (SC_NONE if none). */
static inline const uint64_t *sc_home(const stack_cache *c, uint64_t h) {
  return &c->slots[h & c->mask];
}
uint32_t sc_guess(const stack_cache *c, uint64_t h);
/* Bytes of entry e, for prefetching it whole. */
static inline size_t sc_ent_bytes(const stack_ent *e) {
  return sizeof *e + 8 * (size_t)e->cap_refs + 4 * (size_t)e->key_len;
}

#endif
