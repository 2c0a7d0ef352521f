/* odhash.c - emitting and reading LLVM OnDiskChainedHashTables (odhash.h).
 *
 * The emitter replays LLVM's generator: 64 initial buckets, doubling when
 * 4*entries >= 3*buckets, head insertion, and a final resize to
 * bit_ceil(n*4/3 + 1) (1 bucket for n <= 2).  Readers accept any valid
 * table; replaying the generator only buys byte-identical output.
 */
#include "common/io.h"
#include "odhash.h"

#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

typedef struct chains {
  uint32_t *head, *next;
  const uint64_t *hashes;
  size_t nb;
} chains;

static void chain_insert(uint32_t *head, uint32_t *next, size_t nb,
                         const uint64_t *hashes, uint32_t i) {
  size_t b = hashes[i] & (nb - 1);
  next[i] = head[b];
  head[b] = i;
}

static void chains_resize(chains *c, size_t nb) {
  uint32_t *nh = mp_xmalloc(nb * sizeof *nh);
  for (size_t b = 0; b < nb; b++) nh[b] = NONE;
  for (size_t b = 0; b < c->nb; b++)
    for (uint32_t e = c->head[b]; e != NONE;) {
      uint32_t nx = c->next[e];
      chain_insert(nh, c->next, nb, c->hashes, e);
      e = nx;
    }
  free(c->head);
  c->head = nh;
  c->nb = nb;
}

static size_t bit_ceil(size_t v) {
  size_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

uint64_t mp_odh_emit(mp_buf *out, const uint64_t *hashes, size_t n,
                     mp_odh_item_fn item, void *ctx, mp_err *err) {
  chains c = {NULL, mp_xmalloc((n + 1) * sizeof(uint32_t)), hashes, 0};
  c.head = mp_xmalloc(64 * sizeof *c.head);
  for (size_t b = 0; b < 64; b++) c.head[b] = NONE;
  c.nb = 64;
  for (size_t i = 0; i < n; i++) {
    if (4 * (i + 1) >= 3 * c.nb) chains_resize(&c, c.nb * 2);
    chain_insert(c.head, c.next, c.nb, hashes, (uint32_t)i);
  }
  size_t target = n <= 2 ? 1 : bit_ceil(n * 4 / 3 + 1);
  if (target != c.nb) chains_resize(&c, target);

  uint64_t *boff = mp_xcalloc(c.nb, sizeof *boff);
  uint64_t ret = 0;
  for (size_t b = 0; b < c.nb; b++) {
    if (c.head[b] == NONE) continue;
    size_t cnt = 0;
    for (uint32_t e = c.head[b]; e != NONE; e = c.next[e]) cnt++;
    if (cnt > UINT16_MAX) {
      mp_fail(err, "hash table bucket %zu would hold %zu items (max 65535)",
              b, cnt);
      goto out;
    }
    boff[b] = out->len;
    mp_buf_u16(out, (uint16_t)cnt);
    for (uint32_t e = c.head[b]; e != NONE; e = c.next[e]) item(out, e, ctx);
  }
  while (out->len % 8) mp_buf_u8(out, 0);
  ret = out->len;
  mp_buf_u64(out, c.nb);
  mp_buf_u64(out, n);
  for (size_t b = 0; b < c.nb; b++) mp_buf_u64(out, boff[b]);
out:
  free(boff);
  free(c.head);
  free(c.next);
  return ret;
}

/* ---- reading ------------------------------------------------------------ */

/* Smallest item: hash, datalen, 8-byte key (and keylen). */
static uint64_t min_item(const mp_odh *t) { return t->has_keylen ? 32 : 24; }

int mp_odh_open(mp_odh *t, const void *data, size_t len, uint64_t table_off,
                uint64_t payload_off, int has_keylen, const char *what,
                mp_err *err) {
  memset(t, 0, sizeof *t);
  t->data = data;
  t->len = len;
  t->has_keylen = has_keylen;
  t->what = what;
  t->table_off = table_off;
  if (table_off > len || len - table_off < 16)
    return mp_fail(err, "%s at offset 0x%llx is outside the file (size 0x%zx)",
                   what, (unsigned long long)table_off, len);
  t->num_buckets = mp_rd64(t->data + table_off);
  t->num_entries = mp_rd64(t->data + table_off + 8);
  uint64_t nb = t->num_buckets;
  if (nb == 0 || (nb & (nb - 1)))
    return mp_fail(err, "%s at offset 0x%llx: bucket count %llu is not a "
                   "power of two", what, (unsigned long long)table_off,
                   (unsigned long long)nb);
  if (nb > (len - table_off - 16) / 8)
    return mp_fail(err, "%s at offset 0x%llx: %llu buckets do not fit in "
                   "the file", what, (unsigned long long)table_off,
                   (unsigned long long)nb);
  if (payload_off > table_off ||
      t->num_entries > (table_off - payload_off) / min_item(t))
    return mp_fail(err, "%s at offset 0x%llx: %llu entries do not fit in "
                   "its payload (0x%llx..0x%llx)", what,
                   (unsigned long long)table_off,
                   (unsigned long long)t->num_entries,
                   (unsigned long long)payload_off,
                   (unsigned long long)table_off);
  return 0;
}

/* Parse the item header at *pos, bounded by `end`; advances *pos. */
static int read_item(const mp_odh *t, uint64_t *pos, uint64_t end,
                     mp_odh_item *it, mp_err *err) {
  uint64_t p = *pos, hdr = t->has_keylen ? 24 : 16;
  if (end - p < hdr)
    return mp_fail(err, "%s: item at offset 0x%llx is truncated", t->what,
                   (unsigned long long)p);
  it->hash = mp_rd64(t->data + p);
  it->key_len = t->has_keylen ? mp_rd64(t->data + p + 8) : 8;
  it->data_len = mp_rd64(t->data + p + hdr - 8);
  p += hdr;
  if (it->key_len > end - p || it->data_len > end - p - it->key_len)
    return mp_fail(err, "%s: item at offset 0x%llx claims %llu+%llu bytes, "
                   "only %llu left", t->what, (unsigned long long)*pos,
                   (unsigned long long)it->key_len,
                   (unsigned long long)it->data_len,
                   (unsigned long long)(end - p));
  it->key_off = p;
  it->data_off = p + it->key_len;
  *pos = it->data_off + it->data_len;
  return 0;
}

void mp_odh_iter_init(mp_odh_iter *it, const mp_odh *t, uint64_t payload_off) {
  it->t = t;
  it->pos = payload_off;
  it->end = t->table_off;
  it->left_in_bucket = 0;
  it->left = t->num_entries;
}

int mp_odh_iter_next(mp_odh_iter *it, mp_odh_item *item, mp_err *err) {
  const mp_odh *t = it->t;
  if (!it->left) return 0;
  while (!it->left_in_bucket) {
    if (it->end - it->pos < 2)
      return mp_fail(err, "%s: bucket count at offset 0x%llx is past the "
                     "payload end 0x%llx", t->what,
                     (unsigned long long)it->pos,
                     (unsigned long long)it->end);
    it->left_in_bucket = mp_rd16(t->data + it->pos);
    it->pos += 2;
  }
  if (read_item(t, &it->pos, it->end, item, err)) return -1;
  it->left_in_bucket--;
  it->left--;
  return 1;
}

int mp_odh_lookup(const mp_odh *t, uint64_t hash, mp_odh_item *item,
                  mp_err *err) {
  uint64_t b = hash & (t->num_buckets - 1);
  uint64_t off = mp_rd64(t->data + t->table_off + 16 + 8 * b);
  if (!off) return 0;
  if (off >= t->table_off || t->table_off - off < 2)
    return mp_fail(err, "%s: bucket %llu offset 0x%llx is outside the "
                   "payload", t->what, (unsigned long long)b,
                   (unsigned long long)off);
  uint64_t pos = off + 2;
  for (uint16_t n = mp_rd16(t->data + off); n; n--) {
    if (read_item(t, &pos, t->table_off, item, err)) return -1;
    if (item->hash == hash) return 1;
  }
  return 0;
}
