/* memprof_read.c - reading the memprof section of an indexed profile,
 * versions 2, 3 and 4, from untrusted bytes (indexed_priv.h).
 *
 * Every offset and count is checked against the bytes that are really
 * there before it is used; radix decoding is bounded (radix.h) and its
 * total work is capped, so no input makes the reader hang, crash or
 * allocate more than a small multiple of the file size.
 */
#include <stdlib.h>
#include <string.h>

#include "common/io.h"
#include "indexed_priv.h"
#include "profdata/llvm/mib_schema.h"
#include "profdata/llvm/odhash.h"
#include "profdata/llvm/radix.h"

#define NONE UINT32_MAX
#define MAX_CALLEES 65536u

typedef struct rd {
  mp_profile *p;
  const unsigned char *d;
  size_t end;
  unsigned version;
  mp_schema schema;
  size_t mib_size;
  mp_frame_keys *keys, *stack_keys;
  /* v3/v4 */
  uint64_t frames_off, n_frames;
  uint32_t *frame_map; /* linear frame id -> model frame */
  const unsigned char *radix;
  size_t n_radix;
  mp_map stack_cache;    /* radix position -> model stack, for the positions
                            records name (sized by them, not by the radix
                            array, which may be huge) */
  uint64_t budget;       /* frames we still agree to decode */
  /* v2 */
  mp_frame_keys v2_frames, v2_stacks; /* FrameId / CSId -> model id */
  uint32_t *tmp;
  size_t tmp_cap;
} rd;

/* ---- frame keys ----------------------------------------------------------- */

void mp_frame_keys_add(mp_frame_keys *k, uint64_t key, uint32_t frame) {
  size_t cap = k->cap;
  MP_VEC_RESERVE(k->keys, k->cap, k->n + 1);
  k->cap = cap;
  MP_VEC_RESERVE(k->frames, k->cap, k->n + 1);
  k->keys[k->n] = key;
  k->frames[k->n++] = frame;
}

static mp_frame_keys *g_sort_keys;

static int cmp_idx(const void *a, const void *b) {
  uint64_t x = g_sort_keys->keys[*(const size_t *)a];
  uint64_t y = g_sort_keys->keys[*(const size_t *)b];
  return x < y ? -1 : x > y;
}

void mp_frame_keys_sort(mp_frame_keys *k) {
  size_t *idx = mp_xmalloc((k->n + 1) * sizeof *idx);
  for (size_t i = 0; i < k->n; i++) idx[i] = i;
  g_sort_keys = k;
  qsort(idx, k->n, sizeof *idx, cmp_idx);
  uint64_t *nk = mp_xmalloc((k->n + 1) * 8);
  uint32_t *nf = mp_xmalloc((k->n + 1) * 4);
  for (size_t i = 0; i < k->n; i++) {
    nk[i] = k->keys[idx[i]];
    nf[i] = k->frames[idx[i]];
  }
  free(idx);
  free(k->keys);
  free(k->frames);
  k->keys = nk;
  k->frames = nf;
  k->cap = k->n + 1;
}

uint32_t mp_frame_keys_find(const mp_frame_keys *k, uint64_t key) {
  size_t lo = 0, hi = k->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (k->keys[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo < k->n && k->keys[lo] == key ? k->frames[lo] : NONE;
}

void mp_frame_keys_free(mp_frame_keys *k) {
  free(k->keys);
  free(k->frames);
  memset(k, 0, sizeof *k);
}

/* ---- common pieces -------------------------------------------------------- */

static int need(const rd *r, uint64_t off, uint64_t n, const char *what,
                mp_err *err) {
  if (off > r->end || n > r->end - off)
    return mp_fail(err, "truncated %s: needs %llu bytes at offset 0x%llx, "
                   "file has 0x%zx", what, (unsigned long long)n,
                   (unsigned long long)off, r->end);
  return 0;
}

static int read_schema(rd *r, uint64_t *pos, mp_err *err) {
  if (need(r, *pos, 8, "memprof schema", err)) return -1;
  uint64_t n = mp_rd64(r->d + *pos);
  if (n > MP_SCHEMA_MAX_TAGS)
    return mp_fail(err, "memprof schema at offset 0x%llx has %llu fields "
                   "(at most %u)", (unsigned long long)*pos,
                   (unsigned long long)n, MP_SCHEMA_MAX_TAGS);
  if (need(r, *pos + 8, 8 * n, "memprof schema", err)) return -1;
  r->schema.n = (uint32_t)n;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t tag = mp_rd64(r->d + *pos + 8 + 8 * i);
    if (tag == 0 || tag > MPF_MIB_NUM_FIELDS)
      return mp_fail(err, "memprof schema at offset 0x%llx: field tag %llu "
                     "is not a MemInfoBlock field (1..%d)",
                     (unsigned long long)*pos, (unsigned long long)tag,
                     MPF_MIB_NUM_FIELDS);
    r->schema.tags[i] = (uint8_t)tag;
    r->p->mib_fields |= 1u << tag;
  }
  r->mib_size = mp_schema_mib_size(&r->schema);
  *pos += 8 + 8 * n;
  return 0;
}

static mp_frame frame_at(const unsigned char *b) {
  mp_frame f;
  f.guid = mp_rd64(b);
  f.line_offset = mp_rd32(b + 8);
  f.column = mp_rd32(b + 12);
  f.is_inline = b[16] != 0;
  return f;
}

/* ---- v3/v4 call stacks ----------------------------------------------------- */

static uint32_t linear_frame(rd *r, uint32_t lin) {
  if (r->frame_map[lin] == NONE) {
    mp_frame f = frame_at(r->d + r->frames_off + (uint64_t)lin * MPF_FRAME_SIZE);
    r->frame_map[lin] = mp_intern_frame(r->p, &f);
    mp_frame_keys_add(r->keys, lin, r->frame_map[lin]);
  }
  return r->frame_map[lin];
}

static int radix_stack(rd *r, uint32_t at, uint32_t *stack, mp_err *err) {
  uint32_t hit = mp_map_get(&r->stack_cache, at);
  if (hit != UINT32_MAX) {
    *stack = hit;
    return 0;
  }
  /* Room for the stack's length word (the decoder checks it fits). */
  if (at < r->n_radix) {
    uint64_t len = mp_rd32(r->radix + 4 * (uint64_t)at);
    if (len > r->n_radix) len = r->n_radix;
    MP_VEC_RESERVE(r->tmp, r->tmp_cap, len + 1);
  }
  long n = mp_radix_decode(r->radix, r->n_radix, at, r->n_frames, r->tmp,
                           r->tmp_cap, err);
  if (n < 0) return -1;
  if ((uint64_t)n > r->budget)
    return mp_fail(err, "radix array decodes to implausibly many frames "
                   "(call stack %u)", at);
  r->budget -= (uint64_t)n;
  for (long i = 0; i < n; i++) r->tmp[i] = linear_frame(r, r->tmp[i]);
  *stack = mp_intern_stack(r->p, r->tmp, (uint32_t)n);
  mp_map_put(&r->stack_cache, at, *stack);
  mp_frame_keys_add(r->stack_keys, at, *stack);
  return 0;
}

/* ---- v2 frame and call-stack tables --------------------------------------- */

static int read_v2_frames(rd *r, uint64_t payload, uint64_t table,
                          mp_err *err) {
  mp_odh t;
  mp_odh_iter it;
  mp_odh_item item;
  int rc;
  if (mp_odh_open(&t, r->d, r->end, table, payload, 1, "memprof frame table",
                  err))
    return -1;
  mp_odh_iter_init(&it, &t, payload);
  while ((rc = mp_odh_iter_next(&it, &item, err)) == 1) {
    if (item.key_len != 8 || item.data_len < MPF_FRAME_SIZE)
      return mp_fail(err, "memprof frame table: entry at offset 0x%llx has "
                     "key/data length %llu/%llu (want 8/17)",
                     (unsigned long long)item.key_off,
                     (unsigned long long)item.key_len,
                     (unsigned long long)item.data_len);
    mp_frame f = frame_at(r->d + item.data_off);
    uint32_t id = mp_intern_frame(r->p, &f);
    uint64_t key = mp_rd64(r->d + item.key_off);
    mp_frame_keys_add(&r->v2_frames, key, id);
    mp_frame_keys_add(r->keys, key, id);
  }
  mp_frame_keys_sort(&r->v2_frames);
  return rc;
}

static int read_v2_stacks(rd *r, uint64_t payload, uint64_t table,
                          mp_err *err) {
  mp_odh t;
  mp_odh_iter it;
  mp_odh_item item;
  int rc;
  if (mp_odh_open(&t, r->d, r->end, table, payload, 0,
                  "memprof call stack table", err))
    return -1;
  mp_odh_iter_init(&it, &t, payload);
  while ((rc = mp_odh_iter_next(&it, &item, err)) == 1) {
    if (item.data_len % 8)
      return mp_fail(err, "memprof call stack table: entry at offset 0x%llx "
                     "has data length %llu (not a multiple of 8)",
                     (unsigned long long)item.key_off,
                     (unsigned long long)item.data_len);
    uint64_t n = item.data_len / 8;
    MP_VEC_RESERVE(r->tmp, r->tmp_cap, n + 1);
    for (uint64_t i = 0; i < n; i++) {
      uint64_t fid = mp_rd64(r->d + item.data_off + 8 * i);
      r->tmp[i] = mp_frame_keys_find(&r->v2_frames, fid);
      if (r->tmp[i] == NONE)
        return mp_fail(err, "memprof call stack at offset 0x%llx: frame id "
                       "0x%llx is not in the frame table",
                       (unsigned long long)item.key_off,
                       (unsigned long long)fid);
    }
    uint64_t key = mp_rd64(r->d + item.key_off);
    uint32_t stack = mp_intern_stack(r->p, r->tmp, (uint32_t)n);
    mp_frame_keys_add(&r->v2_stacks, key, stack);
    mp_frame_keys_add(r->stack_keys, key, stack);
  }
  mp_frame_keys_sort(&r->v2_stacks);
  return rc;
}

/* ---- records -------------------------------------------------------------- */

typedef struct cursor {
  const unsigned char *d;
  uint64_t pos, end; /* absolute */
} cursor;

static int take(cursor *c, uint64_t n, const unsigned char **p, mp_err *err) {
  if (n > c->end - c->pos)
    return mp_fail(err, "memprof record data at offset 0x%llx is truncated "
                   "(needs %llu more bytes)", (unsigned long long)c->pos,
                   (unsigned long long)n);
  *p = c->d + c->pos;
  c->pos += n;
  return 0;
}

static int stack_ref(rd *r, cursor *c, uint32_t *stack, mp_err *err) {
  const unsigned char *b = NULL;
  if (r->version == 2) {
    if (take(c, 8, &b, err)) return -1;
    *stack = mp_frame_keys_find(&r->v2_stacks, mp_rd64(b));
    if (*stack == NONE)
      return mp_fail(err, "memprof record at offset 0x%llx: call stack id "
                     "0x%llx is not in the call stack table",
                     (unsigned long long)(c->pos - 8),
                     (unsigned long long)mp_rd64(b));
    return 0;
  }
  if (take(c, 4, &b, err)) return -1;
  return radix_stack(r, mp_rd32(b), stack, err);
}

/* A count followed by at least `each` bytes per element. */
static int count(cursor *c, uint64_t each, uint64_t *n, mp_err *err) {
  const unsigned char *b = NULL;
  if (take(c, 8, &b, err)) return -1;
  *n = mp_rd64(b);
  if (*n > (c->end - c->pos) / each)
    return mp_fail(err, "memprof record at offset 0x%llx: count %llu does "
                   "not fit in the record", (unsigned long long)(c->pos - 8),
                   (unsigned long long)*n);
  return 0;
}

static int read_record(rd *r, uint64_t guid, cursor *c, mp_err *err) {
  uint64_t id = r->version == 2 ? 8 : 4, n;
  const unsigned char *b = NULL;
  mp_record_get(r->p, guid);
  if (count(c, id + r->mib_size, &n, err)) return -1;
  for (uint64_t i = 0; i < n; i++) {
    uint32_t stack;
    mpf_mib mib;
    if (stack_ref(r, c, &stack, err) || take(c, r->mib_size, &b, err))
      return -1;
    mp_mib_read(b, &r->schema, &mib);
    if (mib.AccessHistogramSize > MP_HIST_MAX_ENTRIES)
      return mp_fail(err, "record 0x%llx: AccessHistogramSize %u is larger "
                     "than %u", (unsigned long long)guid,
                     mib.AccessHistogramSize, MP_HIST_MAX_ENTRIES);
    mp_add_alloc_site(r->p, guid, stack, &mib, NULL);
  }
  if (count(c, id, &n, err)) return -1;
  uint64_t *callees = NULL;
  for (uint64_t i = 0; i < n; i++) {
    uint32_t stack;
    uint64_t nc = 0;
    if (stack_ref(r, c, &stack, err)) goto fail;
    if (r->version >= 4) {
      if (count(c, 8, &nc, err) || take(c, 8 * nc, &b, err)) goto fail;
      /* the model deduplicates callees pairwise; real profiles have a few */
      if (nc > MAX_CALLEES) {
        mp_fail(err, "memprof record at offset 0x%llx: call site lists %llu "
                "callee GUIDs (at most %u are accepted)",
                (unsigned long long)(c->pos - 8 * nc - 8),
                (unsigned long long)nc, MAX_CALLEES);
        goto fail;
      }
      callees = mp_xrealloc(callees, (nc + 1) * 8);
      memcpy(callees, b, 8 * nc);
    }
    mp_add_call_site(r->p, guid, stack, callees, (uint32_t)nc);
  }
  free(callees);
  return 0;
fail:
  free(callees);
  return -1;
}

static int read_records(rd *r, uint64_t payload, uint64_t table,
                        mp_err *err) {
  mp_odh t;
  mp_odh_iter it;
  mp_odh_item item;
  int rc;
  if (mp_odh_open(&t, r->d, r->end, table, payload, 1, "memprof record table",
                  err))
    return -1;
  mp_odh_iter_init(&it, &t, payload);
  while ((rc = mp_odh_iter_next(&it, &item, err)) == 1) {
    if (item.key_len != 8)
      return mp_fail(err, "memprof record at offset 0x%llx: key length %llu "
                     "(want 8)", (unsigned long long)item.key_off,
                     (unsigned long long)item.key_len);
    cursor c = {r->d, item.data_off, item.data_off + item.data_len};
    if (read_record(r, mp_rd64(r->d + item.key_off), &c, err)) return -1;
  }
  return rc;
}

/* ---- section headers ------------------------------------------------------ */

static int read_v2(rd *r, uint64_t off, mp_err *err) {
  if (need(r, off, 48, "memprof v2 header", err)) return -1;
  uint64_t h[5];
  for (int i = 0; i < 5; i++) h[i] = mp_rd64(r->d + off + 8 + 8 * i);
  uint64_t pos = off + 48;
  if (read_schema(r, &pos, err) ||
      read_v2_frames(r, h[1], h[2], err) ||
      read_v2_stacks(r, h[3], h[4], err))
    return -1;
  return read_records(r, pos, h[0], err);
}

static int read_v3v4(rd *r, uint64_t off, mp_err *err) {
  uint64_t hsize = r->version == 4 ? 40 + 4 : 32;
  if (need(r, off, hsize, "memprof header", err)) return -1;
  uint64_t cspo = mp_rd64(r->d + off + 8), rpo = mp_rd64(r->d + off + 16),
           rto = mp_rd64(r->d + off + 24), pos = off + hsize,
           dapo = r->version == 4 ? mp_rd64(r->d + off + 32) : 0;
  if (r->version == 4) {
    uint32_t nsum = mp_rd32(r->d + off + 40);
    if (need(r, pos, 8ULL * nsum, "memprof summary", err)) return -1;
    pos += 8ULL * nsum; /* the summary is recomputed, never trusted */
  }
  if (read_schema(r, &pos, err)) return -1;
  if (cspo < pos || rpo < cspo || rto < rpo || rto > r->end)
    return mp_fail(err, "memprof v%u header at offset 0x%llx: offsets out of "
                   "order or outside the file (frames 0x%llx, call stacks "
                   "0x%llx, records 0x%llx, record table 0x%llx, end 0x%zx)",
                   r->version, (unsigned long long)off,
                   (unsigned long long)pos, (unsigned long long)cspo,
                   (unsigned long long)rpo, (unsigned long long)rto, r->end);
  r->frames_off = pos;
  r->n_frames = (cspo - pos) / MPF_FRAME_SIZE;
  r->radix = r->d + cspo;
  r->n_radix = (rpo - cspo) / 4;
  r->frame_map = mp_xmalloc((r->n_frames + 1) * 4);
  memset(r->frame_map, 0xff, (r->n_frames + 1) * 4);
  r->budget = 64 * (uint64_t)r->end + (1u << 20);
  if (read_records(r, rpo, rto, err)) return -1;
  if (!dapo) return 0;
  if (dapo <= rto)
    return mp_fail(err, "memprof v4 header at offset 0x%llx: data-access "
                   "profile offset 0x%llx is not after the record table "
                   "(0x%llx)", (unsigned long long)off,
                   (unsigned long long)dapo, (unsigned long long)rto);
  return mp_read_dap(r->p, r->d, r->end, dapo, err);
}

int mp_read_memprof(mp_profile *p, const unsigned char *data, size_t end,
                    uint64_t off, mp_frame_keys *keys,
                    mp_frame_keys *stack_keys, unsigned *version, mp_err *err) {
  rd r = {0};
  r.p = p;
  r.d = data;
  r.end = end;
  r.keys = keys;
  r.stack_keys = stack_keys;
  if (need(&r, off, 8, "memprof section", err)) return -1;
  uint64_t v = mp_rd64(data + off);
  if (v < 2 || v > 4)
    return mp_fail(err, "memprof section at offset 0x%llx has version %llu "
                   "(2, 3 and 4 are supported)", (unsigned long long)off,
                   (unsigned long long)v);
  mp_map_init(&r.stack_cache, 1);
  r.version = (unsigned)v;
  *version = r.version;
  int rc = r.version == 2 ? read_v2(&r, off, err) : read_v3v4(&r, off, err);
  free(r.frame_map);
  mp_map_free(&r.stack_cache);
  free(r.tmp);
  mp_frame_keys_free(&r.v2_frames);
  mp_frame_keys_free(&r.v2_stacks);
  mp_frame_keys_sort(keys);
  mp_frame_keys_sort(stack_keys);
  return rc;
}
