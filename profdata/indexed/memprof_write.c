/* memprof_write.c - the memprof section of an indexed profile, versions 2,
 * 3 and 4 (docs/indexed-format.md): header, schema, frames and call stacks
 * (v2: two hash tables keyed by FrameId / CallStackId; v3/v4: a frame
 * array and a radix array), the record hash table keyed by function GUID,
 * and for v4 the MemProf summary and the data-access profile (dap_io.c).
 */
#include "indexed_priv.h"

#include <stdlib.h>
#include <string.h>

#include "profdata/model/alloc_type.h"
#include "profdata/model/data_access.h"
#include "profdata/llvm/mib_schema.h"
#include "profdata/llvm/odhash.h"
#include "profdata/llvm/radix.h"

typedef struct rec_ctx {
  const mp_wview *v;
  const mp_schema *schema;
  unsigned version;
  const uint32_t *lin; /* v3/v4: view stack -> linear call-stack id */
} rec_ctx;

static size_t rec_data_len(const rec_ctx *c, const mp_record *r) {
  size_t mib = mp_schema_mib_size(c->schema);
  size_t id = c->version == 2 ? 8 : 4;
  size_t n = 8 + r->n_allocs * (id + mib) + 8;
  for (size_t j = 0; j < r->n_calls; j++)
    n += id + (c->version == 4 ? 8 + 8 * (size_t)r->calls[j].n_callees : 0);
  return n;
}

static void put_stack_ref(mp_buf *out, const rec_ctx *c, uint32_t stack) {
  uint32_t s = c->v->stack_slot[stack];
  if (c->version == 2)
    mp_buf_u64(out, c->v->stack_id[s]);
  else
    mp_buf_u32(out, c->lin[s]);
}

static void emit_record(mp_buf *out, size_t i, void *ctx) {
  const rec_ctx *c = ctx;
  const mp_record *r = &c->v->p->records[i];
  mp_buf_u64(out, r->guid);
  mp_buf_u64(out, 8);
  mp_buf_u64(out, rec_data_len(c, r));
  mp_buf_u64(out, r->guid);
  mp_buf_u64(out, r->n_allocs);
  for (size_t j = 0; j < r->n_allocs; j++) {
    const mp_alloc_site *a = mp_alloc_of(r, j);
    put_stack_ref(out, c, a->stack);
    mp_mib_write(out, c->schema, &a->mib);
  }
  mp_buf_u64(out, r->n_calls);
  for (size_t j = 0; j < r->n_calls; j++) {
    put_stack_ref(out, c, r->calls[j].stack);
    if (c->version != 4) continue;
    mp_buf_u64(out, r->calls[j].n_callees);
    for (uint32_t k = 0; k < r->calls[j].n_callees; k++)
      mp_buf_u64(out, r->calls[j].callees[k]);
  }
}

/* An upper bound on the bytes write_records adds: items, bucket counts,
 * padding and a table of at most 2 * (n * 4 / 3 + 1) buckets. */
static size_t records_size(const rec_ctx *c) {
  const mp_profile *p = c->v->p;
  size_t n = p->n_records, total = 8 + 16 + 8 * (2 * (n * 4 / 3 + 1) + 1);
  for (size_t i = 0; i < n; i++)
    total += 2 + 32 + rec_data_len(c, &p->records[i]);
  return total;
}

static uint64_t write_records(mp_buf *out, const rec_ctx *c, mp_err *err) {
  const mp_profile *p = c->v->p;
  uint64_t *h = mp_xmalloc((p->n_records + 1) * 8);
  for (size_t i = 0; i < p->n_records; i++) h[i] = p->records[i].guid;
  uint64_t off = mp_odh_emit(out, h, p->n_records, emit_record, (void *)c, err);
  free(h);
  return off;
}

static void put_frame(mp_buf *out, const mp_frame *f) {
  mp_buf_u64(out, f->guid);
  mp_buf_u32(out, f->line_offset);
  mp_buf_u32(out, f->column);
  mp_buf_u8(out, f->is_inline);
}

/* ---- version 2 ------------------------------------------------------------ */

static void emit_frame(mp_buf *out, size_t i, void *ctx) {
  const mp_wview *v = ctx;
  mp_buf_u64(out, v->frame_id[i]);
  mp_buf_u64(out, 8);
  mp_buf_u64(out, MPF_FRAME_SIZE);
  mp_buf_u64(out, v->frame_id[i]);
  put_frame(out, &v->p->frames[v->frames[i]]);
}

static void emit_stack(mp_buf *out, size_t i, void *ctx) {
  const mp_wview *v = ctx;
  const mp_stack *s = &v->p->stacks[v->stacks[i]];
  mp_buf_u64(out, v->stack_id[i]);
  mp_buf_u64(out, (uint64_t)s->len * 8);
  mp_buf_u64(out, v->stack_id[i]);
  for (uint32_t j = 0; j < s->len; j++)
    mp_buf_u64(out, v->frame_id[v->frame_slot[v->p->stack_frames[s->off + j]]]);
}

static int write_v2(mp_buf *out, const mp_wview *v, const mp_schema *schema,
                    uint64_t *sym_key, uint64_t *stack_key, mp_err *err) {
  size_t hdr = out->len;
  mp_buf_u64(out, 2);
  for (int i = 0; i < 5; i++) mp_buf_u64(out, 0); /* patched below */
  mp_schema_write(out, schema);
  rec_ctx c = {v, schema, 2, NULL};
  uint64_t rec_table = write_records(out, &c, err);
  if (!rec_table) return -1;
  uint64_t frame_payload = out->len;
  uint64_t frame_table =
      mp_odh_emit(out, v->frame_id, v->n_frames, emit_frame, (void *)v, err);
  if (!frame_table) return -1;
  uint64_t stack_payload = out->len;
  uint64_t stack_table =
      mp_odh_emit(out, v->stack_id, v->n_stacks, emit_stack, (void *)v, err);
  if (!stack_table) return -1;
  uint64_t f[5] = {rec_table, frame_payload, frame_table, stack_payload,
                   stack_table};
  for (int i = 0; i < 5; i++) mp_buf_set_u64(out, hdr + 8 + 8 * i, f[i]);
  memcpy(sym_key, v->frame_id, v->n_frames * 8);
  memcpy(stack_key, v->stack_id, v->n_stacks * 8);
  return 0;
}

/* ---- versions 3 and 4 ----------------------------------------------------- */

typedef struct frame_stat {
  uint64_t count, pos_sum, id;
  uint32_t view;
} frame_stat;

static int cmp_frame_stat(const void *pa, const void *pb) {
  const frame_stat *a = pa, *b = pb;
  if (a->count != b->count) return a->count > b->count ? -1 : 1;
  if (a->pos_sum != b->pos_sum) return a->pos_sum < b->pos_sum ? -1 : 1;
  return a->id < b->id ? -1 : a->id > b->id;
}

/* View stacks come in first-use order, scattered over the model: fetch
 * a stack's frames (its first two cache lines) this many stacks ahead. */
#define AHEAD 8

static void prefetch_stack(const mp_profile *p, uint32_t s) {
  const uint32_t *f = p->stack_frames + p->stacks[s].off;
  __builtin_prefetch(f);
  if (p->stacks[s].len > 16) __builtin_prefetch(f + 16);
}

/* One pass over every view stack: each frame's occurrence count and sum
 * of positions; rs[i] is view stack i's frames in the model, which the
 * radix builder reads through a map instead of a copy. */
static void collect_stacks(const mp_wview *v, frame_stat *st,
                           mp_radix_stack *rs) {
  const uint32_t *slot = v->frame_slot;
  for (size_t i = 0; i < v->n_stacks; i++) {
    if (i + AHEAD < v->n_stacks) prefetch_stack(v->p, v->stacks[i + AHEAD]);
    const mp_stack *s = &v->p->stacks[v->stacks[i]];
    const uint32_t *fr = v->p->stack_frames + s->off;
    for (uint32_t j = 0; j < s->len; j++) {
      frame_stat *f = &st[slot[fr[j]]];
      f->count++;
      f->pos_sum += j;
    }
    rs[i] = (mp_radix_stack){fr, s->len};
  }
}

/* LLVM's frame array order: popular frames first, then frames that sit
 * nearer the leaf, then by FrameId.  Sorts st; returns view frame ->
 * linear id. */
static uint32_t *order_frames(const mp_wview *v, frame_stat *st) {
  for (size_t i = 0; i < v->n_frames; i++) {
    st[i].id = v->frame_id[i];
    st[i].view = (uint32_t)i;
  }
  qsort(st, v->n_frames, sizeof *st, cmp_frame_stat);
  uint32_t *lin = mp_xmalloc((v->n_frames + 1) * 4);
  for (size_t i = 0; i < v->n_frames; i++) lin[st[i].view] = (uint32_t)i;
  return lin;
}

/* Model frame -> linear id (0 for frames no view stack uses). */
static uint32_t *model_to_linear(const mp_wview *v, const uint32_t *flin) {
  size_t n = v->p->n_frames;
  uint32_t *m = mp_xmalloc((n + 1) * 4);
  for (size_t f = 0; f < n; f++) {
    uint32_t k = v->frame_slot[f];
    m[f] = k == UINT32_MAX ? 0 : flin[k];
  }
  return m;
}

/* What the radix array is built from: the frame array order (st, in
 * linear order, and flin: view frame -> linear id) and every view stack
 * with the map of its model frames to linear ids. */
typedef struct radix_input {
  frame_stat *st;
  uint32_t *flin, *map;
  uint64_t *count, *key;
  mp_radix_stack *rs;
} radix_input;

static void radix_prepare(const mp_wview *v, radix_input *in) {
  in->st = mp_xcalloc(v->n_frames + 1, sizeof *in->st);
  in->rs = mp_xmalloc((v->n_stacks + 1) * sizeof *in->rs);
  collect_stacks(v, in->st, in->rs);
  in->flin = order_frames(v, in->st);
  in->map = model_to_linear(v, in->flin);
  in->count = mp_xmalloc((v->n_frames + 1) * 8);
  in->key = mp_xmalloc((v->n_frames + 1) * 8);
  for (size_t i = 0; i < v->n_frames; i++) {
    in->count[i] = in->st[i].count; /* st is in linear order */
    in->key[i] = in->st[i].id;
  }
}

/* The radix array appended to out, which has room for it; returns view
 * stack -> linear id. */
static uint32_t *radix_append(const mp_wview *v, const radix_input *in,
                              mp_buf *out) {
  uint32_t *pos = mp_xmalloc((v->n_stacks + 1) * 4);
  mp_radix_map m = {in->map, (uint32_t)v->p->n_frames, (uint32_t)v->n_frames};
  out->len += 4 * mp_radix_build_into(in->rs, v->n_stacks, &m, in->count,
                                      in->key, out->data + out->len, pos);
  return pos;
}

static void radix_input_free(radix_input *in) {
  free(in->st);
  free(in->flin);
  free(in->map);
  free(in->count);
  free(in->key);
  free(in->rs);
}

typedef struct summary {
  uint64_t contexts, cold, hot, max_cold, max_warm, max_hot;
} summary;

/* Every distinct context counted once, at its first alloc site. */
static summary compute_summary(const mp_wview *v) {
  /* clang's default thresholds, as llvm-profdata's summary counts */
  static const mp_alloc_thresholds defaults = MP_ALLOC_THRESHOLDS_DEFAULT;
  summary s = {0};
  unsigned char *seen = mp_xcalloc(v->n_stacks + 1, 1);
  for (size_t i = 0; i < v->p->n_records; i++) {
    const mp_record *r = &v->p->records[i];
    for (size_t j = 0; j < r->n_allocs; j++) {
      const mp_alloc_site *a = mp_alloc_of(r, j);
      uint32_t k = v->stack_slot[a->stack];
      if (seen[k]) continue;
      seen[k] = 1;
      s.contexts++;
      uint64_t size = a->mib.TotalSize;
      if (mp_alloc_type(&defaults, a->mib.TotalLifetimeAccessDensity,
                        a->mib.AllocCount,
                        a->mib.TotalLifetime) == MP_ALLOC_COLD) {
        s.cold++;
        if (size > s.max_cold) s.max_cold = size;
      } else if (size > s.max_warm) {
        s.max_warm = size;
      }
    }
  }
  free(seen);
  return s;
}

static int write_v3v4(mp_buf *out, const mp_wview *v, unsigned version,
                      const mp_schema *schema, uint64_t *sym_key,
                      uint64_t *stack_key, mp_err *err) {
  size_t hdr = out->len;
  mp_buf_u64(out, version);
  for (int i = 0; i < 3; i++) mp_buf_u64(out, 0); /* patched below */
  if (version == 4) {
    summary s = compute_summary(v);
    mp_buf_u64(out, 0); /* DataAccessProfOffset, patched below */
    mp_buf_u32(out, 6);
    uint64_t f[6] = {s.contexts, s.cold, s.hot, s.max_cold, s.max_warm,
                     s.max_hot};
    for (int i = 0; i < 6; i++) mp_buf_u64(out, f[i]);
  }
  mp_schema_write(out, schema);

  radix_input in;
  radix_prepare(v, &in);
  rec_ctx c = {v, schema, version, NULL};
  /* The section is most of the file: one allocation instead of a copy at
   * every doubling, with room for the radix array's worst case, as it is
   * built in place. */
  mp_buf_reserve(out, v->n_frames * (size_t)MPF_FRAME_SIZE +
                          mp_radix_max_len(in.rs, v->n_stacks) * 4 +
                          records_size(&c));
  for (size_t i = 0; i < v->n_frames; i++)
    put_frame(out, &v->p->frames[v->frames[in.st[i].view]]);
  for (size_t i = 0; i < v->n_frames; i++) sym_key[i] = in.flin[i];

  uint64_t cs_payload = out->len;
  uint32_t *lin = radix_append(v, &in, out); /* u32 little-endian, as the host */
  radix_input_free(&in);
  c.lin = lin;
  uint64_t rec_payload = out->len;
  uint64_t rec_table = write_records(out, &c, err);
  for (size_t i = 0; i < v->n_stacks; i++) stack_key[i] = lin[i];
  free(lin);
  if (!rec_table) return -1;
  mp_buf_set_u64(out, hdr + 8, cs_payload);
  mp_buf_set_u64(out, hdr + 16, rec_payload);
  mp_buf_set_u64(out, hdr + 24, rec_table);
  if (version == 4 && !mp_dap_empty(v->p->dap)) {
    mp_buf_set_u64(out, hdr + 32, out->len);
    mp_write_dap(out, v->p);
  }
  return 0;
}

int mp_write_memprof(mp_buf *out, const mp_wview *v, const mp_index_opts *o,
                     uint64_t *sym_key, uint64_t *stack_key, mp_err *err) {
  mp_schema schema;
  if (o->full_schema)
    mp_schema_full(&schema);
  else
    mp_schema_hot_cold(&schema);
  if (o->memprof_version == 2)
    return write_v2(out, v, &schema, sym_key, stack_key, err);
  return write_v3v4(out, v, o->memprof_version, &schema, sym_key, stack_key,
                    err);
}
