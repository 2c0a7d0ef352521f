/* instrprof_index.c - the instrumentation part of an indexed profile (the
 * file llvm-profdata writes and clang's -fprofile-use reads): the
 * function table, whose items hold per PGO name its records (hash,
 * counters, bitmap bytes, value data), and the binary ids, read into an
 * mp_instr as LLVM's IndexedInstrProfReader reads them.  The header was
 * checked by indexed_read.c.  Layout: docs/instrprof-format.md.
 */
#include <string.h>

#include "instrprof.h"
#include "profdata/llvm/odhash.h"

/* Header words by version (as indexed_read.c). */
static unsigned header_words(unsigned v) {
  return v >= 12 ? 9 : v >= 10 ? 8 : v == 9 ? 7 : 6;
}

/* A profile summary at *pos: u64 field count, u64 cutoff count, the
 * fields, then 3 u64 per cutoff.  Skipped: the writer recomputes it. */
static int skip_summary(const unsigned char *d, size_t end, size_t *pos,
                        const char *what, mp_err *err) {
  if (end - *pos < 16)
    return mp_fail(err, "%s at offset 0x%zx is truncated", what, *pos);
  uint64_t nf = mp_rd64(d + *pos), nc = mp_rd64(d + *pos + 8);
  if (nf > end / 8 || nc > end / 24 || 8 * nf + 24 * nc > end - *pos - 16)
    return mp_fail(err, "%s at offset 0x%zx: %llu fields and %llu cutoffs "
                   "do not fit in the file", what, *pos,
                   (unsigned long long)nf, (unsigned long long)nc);
  *pos += 16 + 8 * nf + 24 * nc;
  return 0;
}

/* One record of an item's data at d[*pos, dend). */
static int read_record(const unsigned char *d, size_t *pos, size_t dend,
                       unsigned version, mp_irecord *r, mp_err *err) {
  size_t p = *pos;
  if (dend - p <= 8) return mp_fail(err, "record at offset 0x%zx is truncated", p);
  r->hash = mp_rd64(d + p);
  uint64_t nc = mp_rd64(d + p + 8);
  p += 16;
  if (nc > (dend - p) / 8)
    return mp_fail(err, "record at offset 0x%zx: %llu counters do not fit",
                   *pos, (unsigned long long)nc);
  r->n_counts = (uint32_t)nc;
  r->counts = mp_xmalloc(nc ? nc * 8 : 1);
  memcpy(r->counts, d + p, nc * 8);
  p += nc * 8;
  if (version > 10) {
    if (dend - p < 8)
      return mp_fail(err, "record at offset 0x%zx: truncated bitmap size",
                     *pos);
    uint64_t nb = mp_rd64(d + p);
    p += 8;
    if (nb > (dend - p) / 8)
      return mp_fail(err, "record at offset 0x%zx: %llu bitmap bytes do not "
                     "fit", *pos, (unsigned long long)nb);
    r->n_bitmap = (uint32_t)nb;
    r->bitmap = mp_xmalloc(nb ? nb : 1);
    for (uint64_t i = 0; i < nb; i++) r->bitmap[i] = d[p + 8 * i];
    p += nb * 8;
  }
  uint32_t size = 0;
  if (mp_instr_read_values(r, d + p, dend - p, NULL, NULL, &size, err)) {
    mp_err e = *err;
    return mp_fail(err, "record at offset 0x%zx: value data at offset "
                   "0x%zx: %s", *pos, p, e.msg);
  }
  *pos = p + size;
  return 0;
}

static int read_item(mp_instr *ip, const char *src, const unsigned char *d,
                     const mp_odh_item *it, unsigned version, uint64_t weight,
                     mp_err *err) {
  if (it->data_len % 8 || !it->data_len)
    return mp_fail(err, "function table item at offset 0x%llx: data size "
                   "%llu is not a positive multiple of 8",
                   (unsigned long long)(it->key_off - 24),
                   (unsigned long long)it->data_len);
  size_t pos = it->data_off, dend = it->data_off + it->data_len;
  const char *name = (const char *)d + it->key_off;
  while (pos < dend) {
    mp_irecord r = {0};
    if (read_record(d, &pos, dend, version, &r, err)) {
      mp_irecord_clear(&r);
      mp_err e = *err;
      return mp_fail(err, "function '%.*s': %s", (int)it->key_len, name,
                     e.msg);
    }
    mp_instr_add(ip, src, name, it->key_len, &r, weight);
  }
  return 0;
}

/* A trailing section (binary ids, vtable names) at header word `word`:
 * its u64 size, which must fit. */
static int tail_section(const unsigned char *d, size_t end, unsigned word,
                        const char *what, uint64_t *off, uint64_t *size,
                        mp_err *err) {
  *off = mp_rd64(d + 8 * word);
  if (*off > end || end - *off < 8)
    return mp_fail(err, "truncated profile data: %s section at offset "
                   "0x%llx needs 8 bytes, the file has 0x%zx", what,
                   (unsigned long long)*off, end);
  *size = mp_rd64(d + *off);
  if (*size > end - *off - 8)
    return mp_fail(err, "truncated profile data: %s section at offset 0x%llx "
                   "holds %llu bytes, the file has %llu after it", what,
                   (unsigned long long)*off, (unsigned long long)*size,
                   (unsigned long long)(end - *off - 8));
  return 0;
}

static int read_tail(mp_instr *ip, const unsigned char *d, size_t end,
                     unsigned version, mp_err *err) {
  uint64_t off = 0, size = 0;
  if (version >= 9) {
    if (tail_section(d, end, 6, "binary-id", &off, &size, err) ||
        mp_instr_read_binary_ids(ip, d + off + 8, (size_t)size, off + 8, err))
      return -1;
  }
  if (version >= 12) {
    if (tail_section(d, end, 8, "vtable-names", &off, &size, err)) return -1;
    if (size)
      return mp_fail(err, "vtable names (%llu bytes at offset 0x%llx) are "
                     "not supported", (unsigned long long)size,
                     (unsigned long long)off);
  }
  return 0;
}

int mp_read_instr_indexed(mp_instr *ip, const char *src,
                          const unsigned char *d, size_t end, uint64_t weight,
                          mp_err *err) {
  uint64_t vw = mp_rd64(d + 8);
  unsigned version = (unsigned)(vw & 0xffffffffu);
  if (vw & MP_IVAR_TEMPORAL)
    return mp_fail(err, "temporal profiles are not supported");
  if (mp_rd64(d + 24) != 0)
    return mp_fail(err, "unsupported hash type %llu (0 = MD5 expected)",
                   (unsigned long long)mp_rd64(d + 24));
  size_t pos = 8 * header_words(version);
  if (skip_summary(d, end, &pos, "profile summary", err)) return -1;
  if ((vw & MP_IVAR_CSIR) &&
      skip_summary(d, end, &pos, "context-sensitive profile summary", err))
    return -1;
  mp_odh t;
  if (mp_odh_open(&t, d, end, mp_rd64(d + 32), pos, 1, "function table",
                  err))
    return -1;
  if (read_tail(ip, d, end, version, err)) return -1;
  if (mp_instr_add_kind(ip, vw & MP_IVAR_INDEXED_MASK, err)) return -1;
  mp_odh_iter it;
  mp_odh_iter_init(&it, &t, pos);
  mp_odh_item item;
  int rc;
  while ((rc = mp_odh_iter_next(&it, &item, err)) == 1)
    if (read_item(ip, src, d, &item, version, weight, err)) return -1;
  return rc;
}
