/* odhash.h - LLVM's OnDiskChainedHashTable as the indexed profile uses it
 * (u64 hashes, u64 offsets, identity hash = key): emitting one, and walking
 * or looking up items in one read from an untrusted buffer.
 *
 * On disk: payload (per non-empty bucket: u16 item count, then the items),
 * zero padding to an 8-byte file offset, then the table: u64 NumBuckets,
 * u64 NumEntries, NumBuckets x u64 absolute bucket offset (0 = empty).
 */
#ifndef PROFDATA_ODHASH_H
#define PROFDATA_ODHASH_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/io.h"

/* Writes item `i` (everything after nothing: hash, lengths, key, data). */
typedef void (*mp_odh_item_fn)(mp_buf *out, size_t i, void *ctx);

/* Emit a table of `n` items inserted in index order with `hashes[i]` at
 * out->len (the buffer holds the file from offset 0).  Bucket count and
 * chain order follow LLVM's generator, so equal input gives equal bytes.
 * Returns the file offset of the table part (never 0), or 0 with a message
 * when a bucket would hold more items than its u16 count can say. */
uint64_t mp_odh_emit(mp_buf *out, const uint64_t *hashes, size_t n,
                     mp_odh_item_fn item, void *ctx, mp_err *err);

/* ---- reading ------------------------------------------------------------ */

typedef struct mp_odh {
  const unsigned char *data;
  size_t len;            /* whole file */
  uint64_t table_off;    /* NumBuckets word */
  uint64_t num_buckets;  /* power of two */
  uint64_t num_entries;
  int has_keylen;        /* item = hash, [keylen,] datalen, key, data */
  const char *what;      /* "record table", ... for messages */
} mp_odh;

typedef struct mp_odh_item {
  uint64_t hash;
  uint64_t key_off, key_len;   /* absolute offsets into the file */
  uint64_t data_off, data_len;
} mp_odh_item;

/* Validate the table header at `table_off` (bounds, power-of-two bucket
 * count, entry count not above what `payload_off`..table_off can hold). */
int mp_odh_open(mp_odh *t, const void *data, size_t len, uint64_t table_off,
                uint64_t payload_off, int has_keylen, const char *what,
                mp_err *err);

/* Sequential walk of the payload, as LLVM's iterable tables do. */
typedef struct mp_odh_iter {
  const mp_odh *t;
  uint64_t pos, end;      /* payload cursor, table_off */
  uint64_t left_in_bucket;
  uint64_t left;          /* entries still to read */
} mp_odh_iter;

void mp_odh_iter_init(mp_odh_iter *it, const mp_odh *t, uint64_t payload_off);
/* 1 = item read, 0 = all NumEntries read, -1 = damaged (message set). */
int mp_odh_iter_next(mp_odh_iter *it, mp_odh_item *item, mp_err *err);

/* Find the first item with this hash through the bucket array: 1 found,
 * 0 absent, -1 damaged. */
int mp_odh_lookup(const mp_odh *t, uint64_t hash, mp_odh_item *item,
                  mp_err *err);

#endif
