/* dap_io.c - the data-access profile of a memprof v4 section
 * (docs/indexed-format.md, section 7.4), written as llvm-profdata-22
 * writes it and read from untrusted bytes:
 *
 *   u64 NumStrings, u64 NumKnownColdSymbols, u64 BlobLen,
 *   blob: the string table then the known-cold symbols, in LLVM's name
 *         encoding (mp_names_encode, zlib), zero padding to a multiple of 8
 *   u64 NumColdHashes, NumColdHashes x u64
 *   u64 NumRecords, per record: u64 string index (symbol) or hash (string
 *       literal), u8 IsStringLiteral, u64 AccessCount, u64 NumLocations,
 *       NumLocations x {u64 file string index, u32 line}
 */
#include <stdlib.h>
#include <string.h>

#include "indexed_priv.h"
#include "profdata/instrprof/instrprof.h"
#include "profdata/model/data_access.h"

void mp_write_dap(mp_buf *out, const mp_profile *p) {
  const mp_dap *d = p->dap;
  size_t n = d->n_strs + d->n_cold_syms;
  const char **names = mp_xmalloc((n + 1) * sizeof *names);
  size_t *lens = mp_xmalloc((n + 1) * sizeof *lens);
  for (size_t i = 0; i < n; i++) {
    uint32_t s = i < d->n_strs ? (uint32_t)i : d->cold_syms[i - d->n_strs];
    names[i] = mp_dap_str(p, d, s);
    lens[i] = strlen(names[i]);
  }
  mp_buf blob = {0};
  if (n) mp_names_encode(names, lens, n, 1, &blob);
  free(names);
  free(lens);
  mp_buf_u64(out, d->n_strs);
  mp_buf_u64(out, d->n_cold_syms);
  mp_buf_u64(out, blob.len);
  if (blob.len) mp_buf_put(out, blob.data, blob.len);
  for (size_t i = blob.len; i % 8; i++) mp_buf_u8(out, 0);
  mp_buf_free(&blob);
  mp_buf_u64(out, d->n_cold_hashes);
  for (size_t i = 0; i < d->n_cold_hashes; i++) mp_buf_u64(out, d->cold_hashes[i]);
  mp_buf_u64(out, d->n_recs);
  for (size_t i = 0; i < d->n_recs; i++) {
    const mp_dap_record *r = &d->recs[i];
    mp_buf_u64(out, r->id);
    mp_buf_u8(out, r->is_literal);
    mp_buf_u64(out, r->count);
    mp_buf_u64(out, r->n_locs);
    for (uint32_t j = 0; j < r->n_locs; j++) {
      mp_buf_u64(out, r->locs[j].file);
      mp_buf_u32(out, r->locs[j].line);
    }
  }
}

/* ---- reading ------------------------------------------------------------- */

typedef struct dap_rd {
  mp_profile *p;
  const unsigned char *d;
  size_t pos, end;
  uint64_t n_map, n_cold, n_seen;
  uint32_t *strs; /* file string index -> our table index */
  size_t cap_strs;
  int bad;        /* a name holds a NUL byte */
} dap_rd;

static int take(dap_rd *r, uint64_t n, const char *what, mp_err *err) {
  if (n > r->end - r->pos)
    return mp_fail(err, "data-access profile: truncated %s at offset 0x%zx",
                   what, r->pos);
  return 0;
}

static uint64_t u64_at(dap_rd *r) {
  uint64_t v = mp_rd64(r->d + r->pos);
  r->pos += 8;
  return v;
}

static void add_name(dap_rd *r, const char *s, size_t n) {
  uint64_t i = r->n_seen++;
  if (memchr(s, 0, n) || (i >= r->n_map && !n)) {
    r->bad = 1; /* a NUL byte, or an empty known-cold symbol */
    return;
  }
  if (i < r->n_map) {
    MP_VEC_RESERVE(r->strs, r->cap_strs, i + 1);
    r->strs[i] = mp_dap_string(r->p, s, n);
  }
  else if (i < r->n_map + r->n_cold)
    mp_dap_add_cold_symbol(r->p, s, n, NULL); /* cannot fail: n > 0 */
}

static void add_chunk(void *ctx, const char *s, size_t n) {
  dap_rd *r = ctx;
  size_t begin = 0;
  for (size_t i = 0; i <= n; i++) {
    if (i < n && s[i] != 1) continue;
    add_name(r, s + begin, i - begin);
    begin = i + 1;
  }
}

static int read_strings(dap_rd *r, mp_err *err) {
  if (take(r, 24, "header", err)) return -1;
  r->n_map = u64_at(r);
  r->n_cold = u64_at(r);
  uint64_t len = u64_at(r);
  uint64_t padded = (len + 7) & ~(uint64_t)7;
  if (len > r->end - r->pos || padded > r->end - r->pos)
    return mp_fail(err, "data-access profile: %llu bytes of names at offset "
                   "0x%zx do not fit in the file", (unsigned long long)len,
                   r->pos);
  if (mp_names_decode(r->d, r->pos, r->pos + len, "data-access names",
                      add_chunk, r, err))
    return -1;
  if (r->n_seen != r->n_map + r->n_cold || r->bad)
    return mp_fail(err, "data-access profile: the name table at offset 0x%zx "
                   "holds %llu names%s, the header says %llu + %llu", r->pos,
                   (unsigned long long)r->n_seen,
                   r->bad ? " (a damaged one among them)" : "",
                   (unsigned long long)r->n_map,
                   (unsigned long long)r->n_cold);
  r->pos += padded;
  return 0;
}

static int read_record(dap_rd *r, mp_err *err) {
  size_t at = r->pos;
  if (take(r, 25, "record", err)) return -1;
  uint64_t id = u64_at(r);
  uint8_t literal = r->d[r->pos++];
  uint64_t count = u64_at(r), n_locs = u64_at(r);
  if (literal > 1 || (!literal && id >= r->n_map))
    return mp_fail(err, "data-access record at offset 0x%zx: %s %llu is not "
                   "a string literal hash or a symbol of the %llu names", at,
                   literal > 1 ? "kind" : "symbol index",
                   (unsigned long long)(literal > 1 ? literal : id),
                   (unsigned long long)r->n_map);
  if (n_locs > (r->end - r->pos) / 12)
    return mp_fail(err, "data-access record at offset 0x%zx: %llu locations "
                   "do not fit in the file", at, (unsigned long long)n_locs);
  long rec;
  if (literal) {
    rec = mp_dap_add_literal(r->p, id, count, err);
  } else {
    const char *name = mp_dap_str(r->p, r->p->dap, r->strs[id]);
    rec = mp_dap_add_symbol(r->p, name, strlen(name), count, err);
  }
  if (rec < 0) {
    mp_err_prefix(err, "data-access profile");
    return -1;
  }
  for (uint64_t j = 0; j < n_locs; j++) {
    uint64_t f = mp_rd64(r->d + r->pos);
    uint32_t line = mp_rd32(r->d + r->pos + 8);
    if (f >= r->n_map)
      return mp_fail(err, "data-access record at offset 0x%zx: file name "
                     "index %llu is not one of the %llu names", at,
                     (unsigned long long)f, (unsigned long long)r->n_map);
    r->pos += 12;
    const char *file = mp_dap_str(r->p, r->p->dap, r->strs[f]);
    mp_dap_add_loc(r->p, (size_t)rec, file, strlen(file), line);
  }
  return 0;
}

static int read_all(dap_rd *r, mp_err *err) {
  if (read_strings(r, err) || take(r, 8, "cold hash count", err)) return -1;
  uint64_t n = u64_at(r);
  if (n > (r->end - r->pos) / 8)
    return mp_fail(err, "data-access profile: %llu known-cold hashes at "
                   "offset 0x%zx do not fit in the file",
                   (unsigned long long)n, r->pos);
  for (uint64_t i = 0; i < n; i++) mp_dap_add_cold_hash(r->p, u64_at(r));
  if (take(r, 8, "record count", err)) return -1;
  n = u64_at(r);
  if (n > (r->end - r->pos) / 25)
    return mp_fail(err, "data-access profile: %llu records at offset 0x%zx "
                   "do not fit in the file", (unsigned long long)n, r->pos);
  for (uint64_t i = 0; i < n; i++)
    if (read_record(r, err)) return -1;
  return 0;
}

int mp_read_dap(mp_profile *p, const unsigned char *d, size_t end,
                uint64_t off, mp_err *err) {
  if (off > end)
    return mp_fail(err, "data-access profile offset 0x%llx is outside the "
                   "file (0x%zx bytes)", (unsigned long long)off, end);
  dap_rd r = {p, d, (size_t)off, end, 0, 0, 0, NULL, 0, 0};
  mp_dap_get(p);
  int rc = read_all(&r, err);
  free(r.strs);
  return rc;
}
