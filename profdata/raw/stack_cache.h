/* stack_cache.h - the raw reader's cache of normalized call stacks
 * (raw_build.c): for every distinct stack key (raw_keys.c) seen in a
 * merge, its model stack, the functions its MIBs make alloc sites in and
 * where those sites live.
 *
 * A key is identified by its length and two independent 64-bit hashes of
 * its elements, not by its elements: 128 bits make a collision among even
 * a billion distinct stacks less likely than 10^-20 (llvm-profdata itself
 * tells call stacks apart by one 64-bit hash), while keeping the keys
 * cost a merge a noticeable share of its CPU time (comparing them and
 * fetching their cache lines at every lookup) and of its memory.
 *
 * A lookup of an already-seen stack is the hot path of a merge and misses
 * the CPU caches, so each entry keeps its header, its alloc-site refs and
 * the GUIDs of those sites back to back: a lookup touches the slot and
 * mostly one cache line.
 *
 * Entries live in chunks that never move, so one thread may add entries
 * (the slots are its alone) while another fills the refs of entries it
 * was handed earlier: nothing else of an entry changes once it is added.
 */
#ifndef PROFDATA_STACK_CACHE_H
#define PROFDATA_STACK_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define SC_NONE UINT32_MAX          /* no entry */
#define SC_DROPPED UINT32_MAX       /* model_stack of a stack with no frame */

/* Entry ids: chunk index << SC_CHUNK_BITS | word offset in the chunk. */
#define SC_CHUNK_BITS 18
#define SC_CHUNK_WORDS ((size_t)1 << SC_CHUNK_BITS)
#define SC_MAX_CHUNKS ((size_t)1 << (32 - SC_CHUNK_BITS))

typedef struct stack_ent {
  uint64_t hash, hash2; /* the key's (see above) */
  uint32_t key_len;     /* u32 elements */
  uint32_t model_stack; /* or SC_DROPPED */
  uint32_t n_refs;      /* (record, alloc index) pairs filled; 0 until the
                           first MIB, then n_sites */
  uint32_t n_sites;     /* alloc sites a MIB of the stack goes to */
  /* then n_sites ref pairs (u32) and n_sites GUIDs (u64) */
} stack_ent;

typedef struct stack_cache {
  uint32_t **chunk;  /* SC_MAX_CHUNKS pointers; entries are 8-byte aligned */
  size_t n_chunks;   /* chunk[n_chunks - 1] is being filled */
  size_t chunk_used; /* words used in it */
  size_t chunk_cap;  /* its size in words (larger for a huge entry) */
  size_t n;          /* entries */
  uint64_t *slots;   /* open addressing: hash >> 32 << 32 | entry id */
  size_t mask;
} stack_cache;

void sc_init(stack_cache *c);
void sc_free(stack_cache *c);

/* Room in the slot table for about `entries` more entries, so that a
 * first file does not rehash at every doubling. */
void sc_reserve(stack_cache *c, size_t entries);

static inline stack_ent *sc_ent(const stack_cache *c, uint32_t id) {
  return (stack_ent *)(void *)(c->chunk[id >> SC_CHUNK_BITS] +
                               (id & (SC_CHUNK_WORDS - 1)));
}
static inline uint32_t *sc_refs(stack_ent *e) { return (uint32_t *)(e + 1); }
static inline const uint64_t *sc_guids(const stack_ent *e) {
  return (const uint64_t *)(const void *)((const uint32_t *)(e + 1) +
                                          2 * (size_t)e->n_sites);
}
/* The entry for the key of n elements and hashes h, h2, or SC_NONE. */
uint32_t sc_find(const stack_cache *c, uint32_t n, uint64_t h, uint64_t h2);
/* Add an entry for a key sc_find did not find, with the GUIDs of its
 * alloc sites; returns its id, or SC_NONE when the ids are exhausted. */
uint32_t sc_insert(stack_cache *c, uint32_t n, uint64_t h, uint64_t h2,
                   uint32_t model_stack, const uint64_t *guids,
                   uint32_t n_sites);

/* For prefetching only: the slot of h, and the entry the probe for h
 * meets first with the same tag (SC_NONE if none). */
static inline const uint64_t *sc_home(const stack_cache *c, uint64_t h) {
  return &c->slots[h & c->mask];
}
uint32_t sc_guess(const stack_cache *c, uint64_t h);

#endif
