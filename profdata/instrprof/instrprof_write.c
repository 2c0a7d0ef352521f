/* instrprof_write.c - the instrumentation part of the indexed file, as
 * llvm-profdata-22's InstrProfWriter writes it: the profile summary (and a
 * context-sensitive one), the function table and the binary-id section;
 * and the summary lines `show` prints.  Layout: docs/instrprof-format.md.
 *
 * Byte identity with LLVM needs its orders: functions enter the table
 * sorted by name; the records of one name come in the order of LLVM's
 * SmallDenseMap<u64, record> (4 inline buckets, then 64 and doubling;
 * quadratic probing on a splitmix64-style mix of the hash), which differs from
 * insertion order only when two hashes of one name meet in a bucket.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instrprof_priv.h"
#include "profdata/llvm/odhash.h"

#define NONE UINT32_MAX
#define CS_FLAG_IN_HASH (1ULL << 60)

static const uint64_t CUTOFFS[16] = {
    10000,  100000, 200000, 300000, 400000, 500000, 600000, 700000,
    800000, 900000, 950000, 990000, 999000, 999900, 999990, 999999};

/* ---- the summary (ProfileSummaryBuilder) --------------------------------- */

/* Counts are kept as LLVM's CountFrequencies: each distinct count once,
 * with how often it occurs (profiles repeat counts, zeros above all). */
typedef struct summary {
  uint64_t *value; /* distinct counts */
  uint32_t *freq;
  size_t n_distinct, cap;
  mp_map index; /* count -> its slot */
  uint64_t n, total, max_count, max_func, max_internal, n_funcs;
} summary;

static void summary_init(summary *s) {
  memset(s, 0, sizeof *s);
  mp_map_init(&s->index, 1);
}

static void summary_free(summary *s) {
  free(s->value);
  free(s->freq);
  mp_map_free(&s->index);
}

static void add_count(summary *s, uint64_t c) {
  uint32_t slot = mp_map_get_or_put(&s->index, c, (uint32_t)s->n_distinct);
  if (slot == MP_MAP_EMPTY) {
    MP_VEC_RESERVE(s->value, s->cap, s->n_distinct + 1);
    s->freq = mp_xrealloc(s->freq, s->cap * sizeof *s->freq);
    s->value[s->n_distinct] = c;
    s->freq[s->n_distinct++] = 1;
  } else {
    s->freq[slot]++;
  }
  s->n++;
  s->total += c;
  if (c > s->max_count) s->max_count = c;
}

/* The first counter counts as the function's entry, the rest as internal
 * blocks; records holding pseudo counts are left out. */
static void add_record(summary *s, const mp_irecord *r) {
  if (!r->n_counts || r->counts[0] >= UINT64_MAX - 1) return;
  s->n_funcs++;
  add_count(s, r->counts[0]);
  if (r->counts[0] > s->max_func) s->max_func = r->counts[0];
  for (uint32_t i = 1; i < r->n_counts; i++) {
    add_count(s, r->counts[i]);
    if (r->counts[i] > s->max_internal) s->max_internal = r->counts[i];
  }
}

static int desc(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* Per cutoff, walking the distinct counts from the largest: the smallest
 * count reached and how many counts reach the cutoff's share of the
 * total. */
static void write_summary(mp_buf *out, summary *s) {
  if (s->n_distinct)
    qsort(s->value, s->n_distinct, sizeof *s->value, desc);
  mp_buf_u64(out, 6);
  mp_buf_u64(out, 16);
  uint64_t fields[6] = {s->n_funcs, s->n, s->max_func, s->max_count,
                        s->max_internal, s->total};
  for (int i = 0; i < 6; i++) mp_buf_u64(out, fields[i]);
  size_t i = 0;
  uint64_t sum = 0, count = 0;
  uint32_t seen = 0;
  for (int c = 0; c < 16; c++) {
    uint64_t want =
        (uint64_t)((unsigned __int128)s->total * CUTOFFS[c] / 1000000);
    while (sum < want && i < s->n_distinct) {
      count = s->value[i++];
      uint32_t f = s->freq[mp_map_get(&s->index, count)];
      sum += count * (uint64_t)f;
      seen += f;
    }
    mp_buf_u64(out, CUTOFFS[c]);
    mp_buf_u64(out, count);
    mp_buf_u64(out, seen);
  }
}

/* ---- the table ------------------------------------------------------------ */

typedef struct tbl {
  const mp_instr *ip;
  uint32_t *funcs; /* in table insertion order (by name) */
  size_t n;
  uint32_t *order; /* per record slot: records of funcs[i] in map order */
  size_t *first;   /* funcs[i]'s records start at order[first[i]] */
} tbl;

static const mp_instr *sort_ip;
static int by_name(const void *a, const void *b) {
  const mp_ifunc *x = &sort_ip->funcs[*(const uint32_t *)a];
  const mp_ifunc *y = &sort_ip->funcs[*(const uint32_t *)b];
  size_t n = x->name_len < y->name_len ? x->name_len : y->name_len;
  int c = memcmp(mp_ifunc_name(sort_ip, x), mp_ifunc_name(sort_ip, y), n);
  if (c) return c;
  return x->name_len < y->name_len ? -1 : x->name_len > y->name_len;
}

static int all_zero(const mp_instr *ip, const mp_ifunc *f) {
  for (uint32_t r = f->first; r != NONE; r = ip->recs[r].next) {
    const mp_irecord *x = &ip->recs[r];
    for (uint32_t i = 0; i < x->n_counts; i++)
      if (x->counts[i]) return 0;
    for (uint32_t i = 0; i < x->n_bitmap; i++)
      if (x->bitmap[i]) return 0;
  }
  return 1;
}

/* LLVM 22's DenseMapInfo<uint64_t> hash (densemap::detail::mix: one
 * multiply by splitmix64's constant and a xor-shift), truncated. */
static unsigned dense_hash(uint64_t v) {
  v *= 0xbf58476d1ce4e5b9ULL;
  v ^= v >> 31;
  return (unsigned)v;
}

static void dense_place(uint32_t *slot, size_t nb, const mp_instr *ip,
                        uint32_t rec) {
  size_t b = dense_hash(ip->recs[rec].hash) & (nb - 1);
  for (size_t probe = 1; slot[b] != NONE; probe++) b = (b + probe) & (nb - 1);
  slot[b] = rec;
}

/* The records of f in the iteration order of LLVM's map after inserting
 * them in order; written to out, returns how many. */
static size_t map_order(const mp_instr *ip, const mp_ifunc *f,
                        uint32_t *out) {
  size_t nb = 4, n = 0;
  uint32_t *slot = mp_xmalloc(nb * sizeof *slot);
  for (size_t b = 0; b < nb; b++) slot[b] = NONE;
  for (uint32_t r = f->first; r != NONE; r = ip->recs[r].next) {
    if ((n + 1) * 4 >= nb * 3) {
      size_t nnb = nb < 64 ? 64 : nb * 2; /* SmallDenseMap::grow */
      uint32_t *ns = mp_xmalloc(nnb * sizeof *ns);
      for (size_t b = 0; b < nnb; b++) ns[b] = NONE;
      for (size_t b = 0; b < nb; b++)
        if (slot[b] != NONE) dense_place(ns, nnb, ip, slot[b]);
      free(slot);
      slot = ns;
      nb = nnb;
    }
    dense_place(slot, nb, ip, r);
    n++;
  }
  size_t k = 0;
  for (size_t b = 0; b < nb; b++)
    if (slot[b] != NONE) out[k++] = slot[b];
  free(slot);
  return k;
}

static uint64_t record_size(const mp_irecord *r) {
  return 24 + 8 * (uint64_t)r->n_counts + 8 * (uint64_t)r->n_bitmap +
         mp_ivalues_size(r);
}

static void write_item(mp_buf *out, size_t i, void *ctx) {
  const tbl *t = ctx;
  const mp_instr *ip = t->ip;
  const mp_ifunc *f = &ip->funcs[t->funcs[i]];
  uint64_t data = 0;
  for (size_t k = t->first[i]; k < t->first[i + 1]; k++)
    data += record_size(&ip->recs[t->order[k]]);
  mp_buf_u64(out, f->md5);
  mp_buf_u64(out, f->name_len);
  mp_buf_u64(out, data);
  mp_buf_put(out, mp_ifunc_name(ip, f), f->name_len);
  for (size_t k = t->first[i]; k < t->first[i + 1]; k++) {
    const mp_irecord *r = &ip->recs[t->order[k]];
    mp_buf_u64(out, r->hash);
    mp_buf_u64(out, r->n_counts);
    mp_buf_put(out, r->counts, 8 * (size_t)r->n_counts);
    mp_buf_u64(out, r->n_bitmap);
    for (uint32_t b = 0; b < r->n_bitmap; b++) mp_buf_u64(out, r->bitmap[b]);
    mp_ivalues_write(out, r);
  }
}

static void build_table(tbl *t, const mp_instr *ip, int sparse) {
  t->ip = ip;
  t->funcs = mp_xmalloc((ip->n_funcs + 1) * sizeof *t->funcs);
  t->n = 0;
  for (size_t i = 0; i < ip->n_funcs; i++)
    if (!sparse || !all_zero(ip, &ip->funcs[i])) t->funcs[t->n++] = (uint32_t)i;
  sort_ip = ip;
  qsort(t->funcs, t->n, sizeof *t->funcs, by_name);
  t->order = mp_xmalloc((ip->n_recs + 1) * sizeof *t->order);
  t->first = mp_xmalloc((t->n + 1) * sizeof *t->first);
  size_t k = 0;
  for (size_t i = 0; i < t->n; i++) {
    t->first[i] = k;
    k += map_order(ip, &ip->funcs[t->funcs[i]], t->order + k);
  }
  t->first[t->n] = k;
}

uint64_t mp_instr_write(mp_buf *out, const mp_instr *ip, int sparse,
                        mp_err *err) {
  tbl t = {0};
  if (ip) build_table(&t, ip, sparse);
  summary s, cs;
  summary_init(&s);
  summary_init(&cs);
  /* The bytes of the items plus room for the hash table's buckets: the
   * output grows once rather than doubling its way there. */
  uint64_t bytes = 4096 + 40 * (uint64_t)t.n;
  for (size_t k = 0; ip && k < t.first[t.n]; k++) {
    const mp_irecord *r = &ip->recs[t.order[k]];
    add_record(r->hash & CS_FLAG_IN_HASH ? &cs : &s, r);
    bytes += record_size(r);
  }
  for (size_t i = 0; i < t.n; i++) bytes += ip->funcs[t.funcs[i]].name_len;
  if (bytes < SIZE_MAX / 2) mp_buf_reserve(out, (size_t)bytes);
  write_summary(out, &s);
  if (ip && (ip->variant & MP_IVAR_CSIR)) write_summary(out, &cs);
  summary_free(&s);
  summary_free(&cs);
  uint64_t *hashes = mp_xmalloc((t.n + 1) * sizeof *hashes);
  for (size_t i = 0; i < t.n; i++) hashes[i] = ip->funcs[t.funcs[i]].md5;
  uint64_t off = mp_odh_emit(out, hashes, t.n, write_item, &t, err);
  free(hashes);
  free(t.funcs);
  free(t.order);
  free(t.first);
  return off;
}

/* ---- binary ids -------------------------------------------------------------- */

static const mp_instr *id_ip;
static int by_bytes(const void *a, const void *b) {
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  uint32_t lx = id_ip->id_len[x], ly = id_ip->id_len[y];
  int c = memcmp(id_ip->ids[x], id_ip->ids[y], lx < ly ? lx : ly);
  if (c) return c;
  return lx < ly ? -1 : lx > ly;
}

void mp_instr_write_binary_ids(mp_buf *out, const mp_instr *ip) {
  size_t n = ip ? ip->n_ids : 0, m = 0;
  size_t *idx = mp_xmalloc((n + 1) * sizeof *idx);
  for (size_t i = 0; i < n; i++) idx[i] = i;
  id_ip = ip;
  qsort(idx, n, sizeof *idx, by_bytes);
  for (size_t i = 0; i < n; i++) /* unique */
    if (!m || by_bytes(&idx[m - 1], &idx[i])) idx[m++] = idx[i];
  uint64_t size = 0;
  for (size_t i = 0; i < m; i++) size += 8 + ((ip->id_len[idx[i]] + 7) & ~7u);
  mp_buf_u64(out, size);
  for (size_t i = 0; i < m; i++) {
    uint32_t len = ip->id_len[idx[i]];
    mp_buf_u64(out, len);
    mp_buf_put(out, ip->ids[idx[i]], len);
    for (uint32_t p = len; p % 8; p++) mp_buf_u8(out, 0);
  }
  free(idx);
}

/* ---- show ------------------------------------------------------------------- */

void mp_instr_summary_text(const mp_instr *ip, mp_buf *out) {
  summary s;
  summary_init(&s);
  for (size_t i = 0; i < ip->n_recs; i++)
    if (!(ip->recs[i].hash & CS_FLAG_IN_HASH)) add_record(&s, &ip->recs[i]);
  summary_free(&s);
  int ir = (ip->variant & MP_IVAR_IR) != 0;
  mp_buf_printf(out, "# Instrumentation level: %s  entry_first = %d\n",
                ir ? ((ip->variant & MP_IVAR_CSIR) ? "IR (CS)" : "IR")
                   : "Front-end",
                (ip->variant & MP_IVAR_ENTRY_FIRST) != 0);
  mp_buf_printf(out,
                "# Total functions: %" PRIu64 "\n"
                "# Maximum function count: %" PRIu64 "\n"
                "# Maximum internal block count: %" PRIu64 "\n"
                "# Total number of blocks: %" PRIu64 "\n"
                "# Total count: %" PRIu64 "\n",
                s.n_funcs, s.max_func, s.max_internal, s.n, s.total);
}
