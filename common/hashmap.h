/* hashmap.h - the tools' one hash map: open addressing with linear
 * probing, one 16-byte slot per entry holding a 64-bit word and a 32-bit
 * value (MP_MAP_EMPTY marks a free slot, so it is never a value).
 *
 * Two uses of the same table:
 *  - keyed (u64 -> u32): the word is the key itself; mp_map_get/put.
 *  - by contents: the word is the contents' hash and the caller says
 *    whether an entry's value names equal contents (the model interns
 *    frames, stacks and strings this way); mp_map_probe/insert.
 * The table keeps at most 3/4 of its slots used, doubling as it fills.
 */
#ifndef MEMPROF_HASHMAP_H
#define MEMPROF_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

#define MP_MAP_EMPTY UINT32_MAX

/* A 64-bit finalizer (MurmurHash3's fmix64): the hash of keys, and the
 * mixer for whatever the tool hashes. */
static inline uint64_t mp_mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

typedef struct mp_map_slot {
  uint64_t hk;  /* the key (keyed maps), else the contents' hash */
  uint32_t val; /* MP_MAP_EMPTY = free */
} mp_map_slot;

typedef struct mp_map {
  mp_map_slot *slots;
  size_t mask, used;
  int keyed;
} mp_map;

/* keyed: a u64 -> u32 map; else entries are found by contents. */
void mp_map_init(mp_map *m, int keyed);
void mp_map_free(mp_map *m);
/* Room for `n` entries in all without growing: one rehash instead of
 * one per doubling. */
void mp_map_reserve(mp_map *m, size_t n);

/* Keyed maps. */
uint32_t mp_map_get(const mp_map *m, uint64_t key); /* MP_MAP_EMPTY: absent */
void mp_map_put(mp_map *m, uint64_t key, uint32_t val);
/* The value of `key`; if absent, stores `val` and returns MP_MAP_EMPTY. */
uint32_t mp_map_get_or_put(mp_map *m, uint64_t key, uint32_t val);

/* Maps by contents: `eq(ctx, val, ekey)` says whether the entry of value
 * `val` holds the contents `ekey`.  Returns the slot holding the match, or
 * the free slot where it belongs, for mp_map_insert (no other call may
 * come in between).  A keyed map passes eq NULL and the key as `key`. */
typedef int (*mp_map_eq)(const void *ctx, uint32_t val, const void *ekey);
mp_map_slot *mp_map_probe(const mp_map *m, uint64_t hash, uint64_t key,
                          mp_map_eq eq, const void *ctx, const void *ekey);
void mp_map_insert(mp_map *m, mp_map_slot *s, uint64_t hash, uint64_t key,
                   uint32_t val);

/* Brings the first slot `hash` probes into the cache. */
static inline void mp_map_prefetch(const mp_map *m, uint64_t hash) {
  __builtin_prefetch(&m->slots[hash & m->mask]);
}

#endif
