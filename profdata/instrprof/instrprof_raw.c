/* instrprof_raw.c - reading the raw profiles that clang's instrumentation
 * runtimes write (-fprofile-generate, -fprofile-instr-generate; raw
 * version 10, written by clang 19 to 22) into an mp_instr, as LLVM's
 * RawInstrProfReader does: per data record its name (from the name table,
 * zlib-compressed or plain), structural hash, counters, bitmap bytes and
 * value data, with indirect-call targets turned from function addresses
 * into name MD5s.  The name table is decoded only when a record names a
 * function the profile does not have yet (a merge of many runs of one
 * program decodes it once).  Layout: docs/instrprof-format.md.
 *
 * The file is untrusted: every size and offset is checked against the
 * file, and a failure says what is wrong and where.  64-bit little-endian
 * files only; several profiles back to back (zero padding between) are
 * read in turn.
 */
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "common/guid.h"
#include "instrprof.h"

#define RAW_MAGIC 0xff6c70726f667281ULL /* "\x81rforpl\xff" */
#define RAW_MAGIC_32 0xff6c70726f665281ULL
#define RAW_VERSION 10
#define HEADER_SIZE 128 /* 16 u64 */
#define DATA_SIZE 64    /* one per-function record */

enum { H_MAGIC, H_VERSION, H_BINIDS, H_NUM_DATA, H_PAD_BEFORE_COUNTERS,
       H_NUM_COUNTERS, H_PAD_AFTER_COUNTERS, H_NUM_BITMAP, H_PAD_AFTER_BITMAP,
       H_NAMES_SIZE, H_COUNTERS_DELTA, H_BITMAP_DELTA, H_NAMES_DELTA,
       H_NUM_VTABLES, H_VNAMES_SIZE, H_VALUE_KIND_LAST };

int mp_is_instr_raw(const void *data, size_t len) {
  uint64_t m;
  if (len < 8) return 0;
  memcpy(&m, data, 8);
  return m == RAW_MAGIC || m == RAW_MAGIC_32 ||
         m == __builtin_bswap64(RAW_MAGIC) ||
         m == __builtin_bswap64(RAW_MAGIC_32);
}

/* What one profile in the file says, resolved to file offsets. */
typedef struct rawprof {
  const unsigned char *d;
  size_t len, base; /* whole file; this profile's header offset */
  uint64_t h[16];
  size_t data, counters, bitmap, names, values; /* section offsets */
  size_t counters_size;
  unsigned counter_size;
  /* names: MD5 -> name, decoded from the name table */
  char *name_buf;
  size_t name_len, name_cap;
  uint32_t *name_off, *name_sz;
  size_t n_names, cap_names;
  mp_map name_index;
  int names_read; /* decoded on the first NameRef the profile lacks */
  /* function address -> name MD5, sorted, for indirect-call targets */
  uint64_t (*addr)[2];
  size_t n_addr;
} rawprof;

static void rawprof_free(rawprof *r) {
  free(r->name_buf);
  free(r->name_off);
  free(r->name_sz);
  free(r->addr);
  if (r->names_read) mp_map_free(&r->name_index);
}

/* ---- the name table ------------------------------------------------------ */

static void add_names(rawprof *r, const char *s, size_t n) {
  size_t start = r->name_len;
  MP_VEC_RESERVE(r->name_buf, r->name_cap, r->name_len + n + 1);
  memcpy(r->name_buf + start, s, n);
  r->name_buf[start + n] = 1; /* a separator after the last name too */
  size_t begin = start, end = start + n;
  for (size_t i = start; i <= end; i++) {
    if (r->name_buf[i] != 1 && i != end) continue;
    size_t cap = r->cap_names;
    MP_VEC_RESERVE(r->name_off, r->cap_names, r->n_names + 1);
    if (r->cap_names != cap) /* name_sz follows name_off's capacity */
      r->name_sz = mp_xrealloc(r->name_sz, r->cap_names * sizeof *r->name_sz);
    r->name_off[r->n_names] = (uint32_t)begin;
    r->name_sz[r->n_names++] = (uint32_t)(i - begin);
    begin = i + 1;
  }
  r->name_len = end + 1;
}

static void add_chunk(void *r, const char *s, size_t n) {
  add_names(r, s, n);
}

/* The name table (mp_names_decode), indexed by the names' MD5s. */
static int read_names(rawprof *r, mp_err *err) {
  if (mp_names_decode(r->d, r->names, r->names + r->h[H_NAMES_SIZE],
                      "name table", add_chunk, r, err))
    return -1;
  mp_map_init(&r->name_index, 1);
  mp_map_reserve(&r->name_index, r->n_names);
  for (size_t i = 0; i < r->n_names; i++)
    mp_map_get_or_put(&r->name_index,
                      mp_md5_low(r->name_buf + r->name_off[i], r->name_sz[i]),
                      (uint32_t)i);
  return 0;
}

/* ---- indirect-call targets ------------------------------------------------ */

static int cmp_pair(const void *a, const void *b) {
  const uint64_t *x = a, *y = b;
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return x[1] < y[1] ? -1 : x[1] > y[1];
}

static void build_addr_map(rawprof *r) {
  uint64_t n = r->h[H_NUM_DATA];
  r->addr = mp_xmalloc((n + 1) * sizeof *r->addr);
  for (uint64_t i = 0; i < n; i++) {
    const unsigned char *p = r->d + r->data + DATA_SIZE * i;
    uint64_t fptr = mp_rd64(p + 32);
    if (!fptr) continue;
    r->addr[r->n_addr][0] = fptr;
    r->addr[r->n_addr++][1] = mp_rd64(p);
  }
  qsort(r->addr, r->n_addr, sizeof *r->addr, cmp_pair);
}

/* A target address becomes the MD5 of the function there, or 0 when no
 * profiled function starts there; vtable targets become 0 (no vtables). */
static uint64_t remap(const void *ctx, uint32_t kind, uint64_t value) {
  const rawprof *r = ctx;
  if (kind == MP_IPVK_MEMOP) return value;
  if (kind == MP_IPVK_VTABLE) return 0;
  size_t lo = 0, hi = r->n_addr;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (r->addr[mid][0] < value)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < r->n_addr && r->addr[lo][0] == value ? r->addr[lo][1] : 0;
}

/* ---- the header ----------------------------------------------------------- */

/* off += n, refusing to pass the file's end. */
static int advance(size_t *off, uint64_t n, size_t len) {
  if (n > len || *off > len - n) return -1;
  *off += (size_t)n;
  return 0;
}

static int read_header(rawprof *r, mp_instr *ip, mp_err *err) {
  if (r->len - r->base < HEADER_SIZE)
    return mp_fail(err, "truncated raw instrprof header at offset 0x%zx: "
                   "needs %d bytes, %zu remain", r->base, HEADER_SIZE,
                   r->len - r->base);
  for (int i = 0; i < 16; i++) r->h[i] = mp_rd64(r->d + r->base + 8 * i);
  if (r->h[H_MAGIC] != RAW_MAGIC)
    return mp_fail(err, r->h[H_MAGIC] == RAW_MAGIC_32
                            ? "32-bit raw instrprof profiles are not supported"
                            : "raw instrprof profile at offset 0x%zx has the "
                              "wrong byte order or magic", r->base);
  uint64_t v = r->h[H_VERSION] & 0xffffffffu;
  if (v != RAW_VERSION)
    return mp_fail(err, "unsupported raw instrprof version %llu at offset "
                   "0x%zx (supported: 10, written by clang 19 to 22)",
                   (unsigned long long)v, r->base);
  uint64_t var = r->h[H_VERSION] & ~0xffffffffULL;
  if (var & MP_IVAR_TEMPORAL)
    return mp_fail(err, "temporal profiles are not supported");
  if (r->h[H_NUM_VTABLES] || r->h[H_VNAMES_SIZE])
    return mp_fail(err, "vtable value profiles (%llu vtables) are not "
                   "supported", (unsigned long long)r->h[H_NUM_VTABLES]);
  if (r->h[H_VALUE_KIND_LAST] != MP_IPVK_NUM - 1)
    return mp_fail(err, "raw instrprof header names %llu value kinds, "
                   "expected %d", (unsigned long long)r->h[H_VALUE_KIND_LAST]
                   + 1, MP_IPVK_NUM);
  r->counter_size = (var & MP_IVAR_BYTE_COVERAGE) ? 1 : 8;
  uint64_t nd = r->h[H_NUM_DATA], nc = r->h[H_NUM_COUNTERS];
  size_t off = r->base + HEADER_SIZE;
  uint64_t ids = r->h[H_BINIDS];
  if (ids % 8)
    return mp_fail(err, "binary-id section size %llu is not a multiple of 8",
                   (unsigned long long)ids);
  if (advance(&off, ids, r->len))
    return mp_fail(err, "binary-id section of %llu bytes does not fit in "
                   "the file", (unsigned long long)ids);
  if (mp_instr_read_binary_ids(ip, r->d + off - ids, ids, off - ids, err))
    return -1;
  r->data = off;
  const char *what = "data records";
  if (nd > r->len / DATA_SIZE || advance(&off, nd * DATA_SIZE, r->len))
    goto past_end;
  what = "counters";
  if (advance(&off, r->h[H_PAD_BEFORE_COUNTERS], r->len)) goto past_end;
  r->counters = off;
  if (nc > r->len / r->counter_size ||
      advance(&off, nc * r->counter_size, r->len) ||
      advance(&off, r->h[H_PAD_AFTER_COUNTERS], r->len))
    goto past_end;
  r->counters_size = (size_t)(nc * r->counter_size);
  what = "bitmap";
  r->bitmap = off;
  if (advance(&off, r->h[H_NUM_BITMAP], r->len) ||
      advance(&off, r->h[H_PAD_AFTER_BITMAP], r->len))
    goto past_end;
  what = "names";
  r->names = off;
  uint64_t ns = r->h[H_NAMES_SIZE];
  if (advance(&off, ns, r->len) || advance(&off, (8 - ns % 8) % 8, r->len))
    goto past_end;
  r->values = off;
  return mp_instr_add_kind(ip, var & MP_IVAR_INDEXED_MASK, err);
past_end:
  return mp_fail(err, "raw instrprof profile at offset 0x%zx: the %s end "
                 "past the end of the file (size 0x%zx; truncated file?)",
                 r->base, what, r->len);
}

/* ---- data records ---------------------------------------------------------- */

static int read_counts(rawprof *r, const unsigned char *p, uint64_t i,
                       mp_irecord *rec, mp_err *err) {
  uint32_t n = mp_rd32(p + 48);
  if (n == 0)
    return mp_fail(err, "data record %llu: number of counters is zero",
                   (unsigned long long)i);
  /* Counter pointers are relative to their record: the delta in the
   * header is the first record's, and shrinks by a record each. */
  int64_t off = (int64_t)(mp_rd64(p + 16) -
                          (r->h[H_COUNTERS_DELTA] - DATA_SIZE * i));
  if (off < 0 || (uint64_t)off >= r->counters_size)
    return mp_fail(err, "data record %llu: counter offset %lld is outside "
                   "the %zu bytes of counters", (unsigned long long)i,
                   (long long)off, r->counters_size);
  if (n > (r->counters_size - (size_t)off) / r->counter_size)
    return mp_fail(err, "data record %llu: %u counters at offset %lld do "
                   "not fit in the %zu bytes of counters",
                   (unsigned long long)i, n, (long long)off,
                   r->counters_size);
  const unsigned char *c = r->d + r->counters + off;
  rec->counts = mp_xmalloc((size_t)n * 8);
  rec->n_counts = n;
  for (uint32_t k = 0; k < n; k++)
    rec->counts[k] = r->counter_size == 1 ? c[k] == 0 : mp_rd64(c + 8 * k);
  return 0;
}

static int read_bitmap(rawprof *r, const unsigned char *p, uint64_t i,
                       mp_irecord *rec, mp_err *err) {
  uint32_t n = mp_rd32(p + 60);
  if (!n) return 0;
  uint64_t size = r->h[H_NUM_BITMAP];
  int64_t off = (int64_t)(mp_rd64(p + 24) -
                          (r->h[H_BITMAP_DELTA] - DATA_SIZE * i));
  if (off < 0 || (uint64_t)off >= size || n > size - (uint64_t)off)
    return mp_fail(err, "data record %llu: %u bitmap bytes at offset %lld "
                   "do not fit in the %llu bytes of bitmap",
                   (unsigned long long)i, n, (long long)off,
                   (unsigned long long)size);
  rec->bitmap = mp_xmalloc(n);
  memcpy(rec->bitmap, r->d + r->bitmap + off, n);
  rec->n_bitmap = n;
  return 0;
}

/* Where record i goes: a function the profile has (found by NameRef), or
 * the name the table gives for NameRef (*k; MP_MAP_EMPTY: none, the empty
 * name, as in LLVM).  The name table is decoded only when needed. */
static int find_func(rawprof *r, mp_instr *ip, uint64_t ref, uint32_t *fid,
                     uint32_t *k, mp_err *err) {
  *fid = mp_instr_find_md5(ip, ref);
  *k = MP_MAP_EMPTY;
  if (*fid != UINT32_MAX) return 0;
  if (!r->names_read) {
    r->names_read = 1;
    if (read_names(r, err)) return -1;
  }
  *k = mp_map_get(&r->name_index, ref);
  return 0;
}

static int read_record(rawprof *r, mp_instr *ip, const char *src,
                       uint64_t i, size_t *vpos, uint64_t weight,
                       mp_err *err) {
  const unsigned char *p = r->d + r->data + DATA_SIZE * i;
  uint64_t ref = mp_rd64(p);
  uint32_t fid, k;
  if (find_func(r, ip, ref, &fid, &k, err)) return -1;
  const char *name = k == MP_MAP_EMPTY ? "" : r->name_buf + r->name_off[k];
  size_t name_len = k == MP_MAP_EMPTY ? 0 : r->name_sz[k];
  mp_irecord rec = {0};
  rec.hash = mp_rd64(p + 8);
  int rc = read_counts(r, p, i, &rec, err);
  if (rc == 0) rc = read_bitmap(r, p, i, &rec, err);
  if (rc == 0 && (mp_rd16(p + 52) | mp_rd16(p + 54) | mp_rd16(p + 56))) {
    uint32_t size = 0;
    rc = mp_instr_read_values(&rec, r->d + *vpos, r->len - *vpos, remap, r,
                              &size, err);
    if (rc) {
      mp_err e = *err;
      mp_fail(err, "data record %llu: value data at offset 0x%zx: %s",
              (unsigned long long)i, *vpos, e.msg);
    }
    *vpos += size;
  }
  if (rc) {
    mp_irecord_clear(&rec);
    return -1;
  }
  /* a found name's MD5 is the NameRef (the index is keyed by it) */
  if (fid != UINT32_MAX)
    mp_instr_add_to(ip, src, fid, &rec, weight);
  else if (k == MP_MAP_EMPTY)
    mp_instr_add(ip, src, name, name_len, &rec, weight);
  else
    mp_instr_add_md5(ip, src, name, name_len, ref, &rec, weight);
  return 0;
}

/* One profile at r->base; *next receives where the following one may
 * start (after its value data). */
static int read_profile(rawprof *r, mp_instr *ip, const char *src,
                        uint64_t weight, size_t *next, mp_err *err) {
  if (read_header(r, ip, err)) return -1;
  build_addr_map(r);
  /* (The names' bytes, when compressed, are more than the section's.) */
  mp_instr_reserve(ip, r->h[H_NUM_DATA], r->h[H_NAMES_SIZE]);
  size_t vpos = r->values;
  for (uint64_t i = 0; i < r->h[H_NUM_DATA]; i++)
    if (read_record(r, ip, src, i, &vpos, weight, err)) {
      mp_err e = *err;
      mp_fail(err, "raw instrprof profile at offset 0x%zx: %s", r->base,
              e.msg);
      return -1;
    }
  *next = vpos;
  return 0;
}

int mp_read_instr_raw(mp_instr *ip, const char *src, const void *data,
                      size_t len, uint64_t weight, mp_err *err) {
  size_t pos = 0;
  do {
    rawprof r = {.d = data, .len = len, .base = pos};
    int rc = read_profile(&r, ip, src, weight, &pos, err);
    rawprof_free(&r);
    if (rc) return -1;
    while (pos < len && ((const unsigned char *)data)[pos] == 0) pos++;
    if (pos < len && pos % 8)
      return mp_fail(err, "raw instrprof data at offset 0x%zx: the next "
                     "profile is not 8-byte aligned", pos);
  } while (pos < len);
  return 0;
}
