/* report_pprof.c - pprof's profile.proto, gzipped (what `go tool pprof`
 * reads): sample types alloc_objects/count and alloc_space/bytes (the
 * default), then total_lifetime/milliseconds and accesses/count (0 when
 * the profile has no access counts), then from the roots files
 * (report_roots.c) retained_objects/count, retained_space/bytes,
 * leaked_objects/count and leaked_space/bytes (0 without): every file has
 * the same eight types, so that pprof's -diff_base takes any two;
 * period_type space/bytes with period 1.  One sample per context, labelled
 * with clang-22's verdict, with its leaked blocks at exit; and one per
 * root and context it retains at each process's last census, labelled
 * root:NAME, with only the retained values.  Each context's sample has its
 * locations leaf first, each location one physical frame with the frames
 * inlined into it before it (callee first, as pprof lists a location's
 * lines); functions carry the demangled name, the linkage name as system
 * name, the file and the first line.  A sampled or not instrumented
 * profile says so in the profile's comments (report_facts.c).
 *
 * The protobuf encoding is written by hand: varints and length-delimited
 * fields are all profile.proto needs.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/hashmap.h"
#include "report.h"

/* ---- protobuf ----------------------------------------------------------- */

static void varint(mp_buf *b, uint64_t v) {
  mp_buf_reserve(b, 10);
  while (v >= 0x80) {
    b->data[b->len++] = (unsigned char)(v | 0x80);
    v >>= 7;
  }
  b->data[b->len++] = (unsigned char)v;
}

static void field_varint(mp_buf *b, unsigned field, uint64_t v) {
  varint(b, (uint64_t)field << 3);
  varint(b, v);
}

static void field_bytes(mp_buf *b, unsigned field, const void *p, size_t n) {
  varint(b, (uint64_t)field << 3 | 2);
  varint(b, n);
  mp_buf_put(b, p, n);
}

/* A nested message built in `msg`, appended to `b` and `msg` emptied. */
static void field_msg(mp_buf *b, unsigned field, mp_buf *msg) {
  field_bytes(b, field, msg->data, msg->len);
  msg->len = 0;
}

/* ---- interning ------------------------------------------------------------ */

typedef struct pp {
  rpt *r;
  mp_buf out, msg, tmp;
  mp_map strings, locs; /* by contents */
  mp_map funcs;         /* keyed: (GUID, file) -> function id */
  const char **str; /* string table, in id order */
  size_t n_str, cap_str;
  uint32_t n_funcs, n_locs;
  /* the location being looked up: its model frames */
  const uint32_t *loc_frames;
  uint32_t loc_len;
  uint32_t *loc_first; /* per location id - 1: index into loc_store */
  uint32_t *loc_store; /* frames of every location: len, then frame ids */
  size_t n_store, cap_store, cap_first;
  char **owned; /* strings made here that the table points to */
  size_t n_owned, cap_owned;
} pp;

static int same_string(const void *ctx, uint32_t v, const void *s) {
  const pp *x = ctx;
  return !strcmp(x->str[v], s);
}

/* String table index of s (interned; the table keeps the pointer). */
static uint32_t str_id(pp *x, const char *s);

/* The same for a string that will not outlive the call: a copy is kept. */
static uint32_t str_copy_id(pp *x, const char *s) {
  MP_VEC_RESERVE(x->owned, x->cap_owned, x->n_owned + 1);
  x->owned[x->n_owned++] = mp_xstrndup(s, strlen(s));
  return str_id(x, x->owned[x->n_owned - 1]);
}

static uint32_t str_id(pp *x, const char *s) {
  size_t n = strlen(s);
  x->tmp.len = 0;
  mp_buf_put(&x->tmp, s, n + 1);
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
  h = mp_mix64(h);
  mp_map_slot *slot = mp_map_probe(&x->strings, h, 0, same_string, x, x->tmp.data);
  if (slot->val != MP_MAP_EMPTY) return slot->val;
  MP_VEC_RESERVE(x->str, x->cap_str, x->n_str + 1);
  x->str[x->n_str] = s;
  uint32_t id = (uint32_t)x->n_str++;
  mp_map_insert(&x->strings, slot, h, 0, id);
  return id;
}

/* Function id of a frame's function: one per (GUID, file). */
static uint32_t func_id(pp *x, uint32_t frame) {
  rpt *r = x->r;
  const mp_frame *f = &r->p->frames[frame];
  uint64_t key = f->guid ^ mp_mix64(r->p->syms[frame].file + 1ull);
  uint32_t id = mp_map_get_or_put(&x->funcs, key, x->n_funcs + 1);
  if (id != MP_MAP_EMPTY) return id;
  id = ++x->n_funcs;
  const char *file = rpt_frame_file(r, frame);
  const char *linkage = mp_string(r->p, r->p->syms[frame].name);
  uint32_t line = rpt_frame_line(r, frame);
  field_varint(&x->msg, 1, id);
  field_varint(&x->msg, 2, str_id(x, rpt_frame_name(r, frame)));
  field_varint(&x->msg, 3, str_id(x, linkage ? linkage : rpt_frame_name(r, frame)));
  if (file) {
    field_varint(&x->msg, 4, str_id(x, file));
    if (line >= f->line_offset) field_varint(&x->msg, 5, line - f->line_offset);
  }
  field_msg(&x->out, 5, &x->msg);
  return id;
}

static int same_loc(const void *ctx, uint32_t v, const void *ekey) {
  (void)ekey;
  const pp *x = ctx;
  const uint32_t *s = &x->loc_store[x->loc_first[v - 1]];
  return s[0] == x->loc_len &&
         !memcmp(s + 1, x->loc_frames, x->loc_len * sizeof *s);
}

/* Location id of one physical frame with the frames inlined into it:
 * frames[0..n), callee first. */
static uint32_t loc_id(pp *x, const uint32_t *frames, uint32_t n) {
  uint64_t h = n;
  for (uint32_t i = 0; i < n; i++) h = mp_mix64(h ^ frames[i]);
  x->loc_frames = frames;
  x->loc_len = n;
  mp_map_slot *slot = mp_map_probe(&x->locs, h, 0, same_loc, x, NULL);
  if (slot->val != MP_MAP_EMPTY) return slot->val;
  uint32_t id = ++x->n_locs;
  mp_map_insert(&x->locs, slot, h, 0, id);
  MP_VEC_RESERVE(x->loc_first, x->cap_first, x->n_locs);
  MP_VEC_RESERVE(x->loc_store, x->cap_store, x->n_store + n + 1);
  x->loc_first[id - 1] = (uint32_t)x->n_store;
  x->loc_store[x->n_store++] = n;
  memcpy(x->loc_store + x->n_store, frames, n * sizeof *frames);
  x->n_store += n;
  /* functions first: they write messages of their own */
  uint32_t fids[n ? n : 1];
  for (uint32_t i = 0; i < n; i++) fids[i] = func_id(x, frames[i]);
  mp_buf line = {0};
  field_varint(&x->msg, 1, id);
  for (uint32_t i = 0; i < n; i++) {
    field_varint(&line, 1, fids[i]);
    field_varint(&line, 2, rpt_frame_line(x->r, frames[i]));
    field_varint(&line, 3, rpt_frame_column(x->r, frames[i]));
    field_msg(&x->msg, 4, &line);
  }
  mp_buf_free(&line);
  field_msg(&x->out, 4, &x->msg);
  return id;
}

/* ---- the profile ---------------------------------------------------------- */

static void value_type(pp *x, unsigned field, const char *type,
                       const char *unit) {
  mp_buf vt = {0};
  field_varint(&vt, 1, str_id(x, type));
  field_varint(&vt, 2, str_id(x, unit));
  field_msg(&x->out, field, &vt);
  mp_buf_free(&vt);
}

/* Values of a sample, in the order of the sample types. */
enum { V_ALLOCS, V_BYTES, V_LIFE, V_ACC, V_RET_OBJ, V_RET_SPACE, V_LEAK_OBJ, V_LEAK_SPACE, NV };

static void label(mp_buf *s, uint32_t key, uint32_t value) {
  mp_buf l = {0};
  field_varint(&l, 1, key);
  field_varint(&l, 2, value);
  field_msg(s, 3, &l);
  mp_buf_free(&l);
}

/* A sample of context c with values v, labelled with its verdict and,
 * when not UINT32_MAX, the root (string id) that retains it. */
static void sample(pp *x, const rpt_ctx *c, const uint64_t v[NV], uint32_t root) {
  const mp_profile *p = x->r->p;
  const uint32_t *f = mp_stack_frames(p, c->stack);
  uint32_t n = p->stacks[c->stack].len;
  mp_buf ids = {0}, s = {0}, vals = {0};
  for (uint32_t i = 0; i < n;) {
    uint32_t j = i;
    while (j + 1 < n && p->frames[f[j]].is_inline) j++;
    varint(&ids, loc_id(x, f + i, j - i + 1));
    i = j + 1;
  }
  field_bytes(&s, 1, ids.data, ids.len);
  for (int k = 0; k < NV; k++) varint(&vals, v[k]);
  field_bytes(&s, 2, vals.data, vals.len);
  if (rpt_verdicts_known(x->r))
    label(&s, str_id(x, "verdict"), str_id(x, rpt_verdict_name(c->verdict)));
  if (root != UINT32_MAX) label(&s, str_id(x, "root"), root);
  field_msg(&x->out, 2, &s);
  mp_buf_free(&ids);
  mp_buf_free(&s);
  mp_buf_free(&vals);
}

/* ---- who holds the memory (report_roots.c) --------------------------------- */

/* Bytes and blocks the samples leave out: of stacks without a
 * symbolizable frame, which have no locations. */
typedef struct unplaced {
  uint64_t retained, leaked;
} unplaced;

/* Per context, the blocks no root reaches at exit (each process's exit
 * census), into leaked[ctx][0..1] (blocks, bytes). */
static void leaked_at_exit(const rpt *r, uint64_t (*leaked)[2], unplaced *u) {
  for (size_t k = 0; k < rpt_roots_n_proc(r); k++) {
    const mp_roots *rs = rpt_roots_file(r, k, NULL);
    const mp_roots_census *c = rs->n_census ? &rs->census[rs->n_census - 1] : NULL;
    if (!c || c->kind != MP_ROOTS_AT_EXIT) continue;
    size_t n;
    rpt_roots_val *v = rpt_roots_by_ctx(r, k, c->unreached, c->n_unreached, &n);
    for (size_t i = 0; i < n; i++)
      if (v[i].ctx < r->n_ctx) {
        leaked[v[i].ctx][0] += v[i].blocks;
        leaked[v[i].ctx][1] += v[i].bytes;
      } else {
        u->leaked += v[i].bytes;
      }
    free(v);
  }
}

/* A sample per root and context it retains at each process's last
 * census, with only the retained values, labelled root=NAME. */
static void retained_samples(pp *x, unplaced *u) {
  const rpt *r = x->r;
  char name[600];
  for (size_t k = 0; k < rpt_roots_n_proc(r); k++) {
    const mp_roots *rs = rpt_roots_file(r, k, NULL);
    if (!rs->n_census) continue;
    const mp_roots_census *c = &rs->census[rs->n_census - 1];
    size_t n_ord;
    size_t *ord = rpt_roots_order(c, &n_ord);
    for (size_t i = 0; i < n_ord; i++) {
      const mp_roots_root *root = &c->roots[ord[i]];
      mp_roots_label(c, root, name, sizeof name);
      uint32_t name_id = str_copy_id(x, name);
      size_t n;
      rpt_roots_val *v = rpt_roots_by_ctx(r, k, root->ctx, root->n_ctx, &n);
      for (size_t j = 0; j < n; j++) {
        if (v[j].ctx >= r->n_ctx) {
          u->retained += v[j].bytes;
          continue;
        }
        uint64_t val[NV] = {0};
        val[V_RET_OBJ] = v[j].blocks;
        val[V_RET_SPACE] = v[j].bytes;
        sample(x, &r->ctx[v[j].ctx], val, name_id);
      }
      free(v);
    }
    free(ord);
  }
}

static void samples(pp *x) {
  rpt *r = x->r;
  unplaced u = {0, 0};
  uint64_t (*leaked)[2] = mp_xcalloc(r->n_ctx + 1, sizeof *leaked);
  leaked_at_exit(r, leaked, &u);
  for (size_t i = 0; i < r->n_ctx; i++) {
    const mpf_mib *m = r->ctx[i].mib;
    uint64_t v[NV] = {m->AllocCount, m->TotalSize, m->TotalLifetime, m->TotalAccessCount,
                      0, 0, leaked[i][0], leaked[i][1]};
    sample(x, &r->ctx[i], v, UINT32_MAX);
  }
  free(leaked);
  retained_samples(x, &u);
  if (!rpt_roots_n_proc(r)) return;
  char note[400];
  snprintf(note, sizeof note, "retained_space: bytes only one root reaches at each process's "
                              "last census (label root); leaked_space: bytes no root reaches "
                              "at exit; not in them, of stacks without a symbolizable frame: "
                              "%" PRIu64 " retained, %" PRIu64 " leaked", u.retained, u.leaked);
  field_varint(&x->out, 13, str_copy_id(x, note));
}

static int gzip(const mp_buf *in, mp_buf *out, mp_err *err) {
  z_stream z;
  memset(&z, 0, sizeof z);
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return mp_fail(err, "zlib: cannot start compressing");
  size_t bound = deflateBound(&z, in->len);
  mp_buf_reserve(out, bound);
  z.next_in = in->data;
  z.avail_in = (uInt)in->len;
  z.next_out = out->data + out->len;
  z.avail_out = (uInt)bound;
  int rc = deflate(&z, Z_FINISH);
  out->len += bound - z.avail_out;
  deflateEnd(&z);
  return rc == Z_STREAM_END ? 0 : mp_fail(err, "zlib: compressing failed");
}

int rpt_write_pprof(rpt *r, mp_buf *out, mp_err *err) {
  pp x;
  memset(&x, 0, sizeof x);
  x.r = r;
  mp_map_init(&x.strings, 0);
  mp_map_init(&x.funcs, 1);
  mp_map_init(&x.locs, 0);
  str_id(&x, ""); /* string 0 is empty */
  value_type(&x, 1, "alloc_objects", "count");
  value_type(&x, 1, "alloc_space", "bytes");
  value_type(&x, 1, "total_lifetime", "milliseconds");
  value_type(&x, 1, "accesses", "count");
  value_type(&x, 1, "retained_objects", "count");
  value_type(&x, 1, "retained_space", "bytes");
  value_type(&x, 1, "leaked_objects", "count");
  value_type(&x, 1, "leaked_space", "bytes");
  samples(&x);
  value_type(&x, 11, "space", "bytes");
  field_varint(&x.out, 12, 1);
  field_varint(&x.out, 14, str_id(&x, "alloc_space"));
  /* how the profile was recorded: comments (`pprof -comments`) */
  char note[RPT_NOTE_SIZE];
  if (rpt_sampled_note(r->p, note, sizeof note))
    field_varint(&x.out, 13, str_id(&x, note));
  if (rpt_uninstrumented_note(r->p))
    field_varint(&x.out, 13, str_id(&x, rpt_uninstrumented_note(r->p)));
  /* One program: its mapping, which pprof names in its header ("File:");
   * the locations carry their functions (has_functions), so pprof does
   * not look for the file. */
  if (r->p->n_programs == 1) {
    mp_buf m = {0};
    field_varint(&m, 1, 1);
    field_varint(&m, 5, str_id(&x, r->p->programs[0].path));
    for (unsigned f = 7; f <= 10; f++) field_varint(&m, f, 1); /* has_* */
    field_msg(&x.out, 3, &m);
    mp_buf_free(&m);
  }
  mp_buf programs = {0};
  mp_buf_printf(&programs, "Program%s: ", r->p->n_programs > 1 ? "s" : "");
  if (rpt_programs(r->p, &programs, 0)) {
    mp_buf_u8(&programs, 0);
    field_varint(&x.out, 13, str_copy_id(&x, (const char *)programs.data));
  }
  mp_buf_free(&programs);
  for (size_t i = 0; i < x.n_str; i++)
    field_bytes(&x.out, 6, x.str[i], strlen(x.str[i]));
  int rc = gzip(&x.out, out, err);
  mp_buf_free(&x.out);
  mp_buf_free(&x.msg);
  mp_buf_free(&x.tmp);
  mp_map_free(&x.strings);
  mp_map_free(&x.funcs);
  mp_map_free(&x.locs);
  free(x.str);
  free(x.loc_first);
  free(x.loc_store);
  for (size_t i = 0; i < x.n_owned; i++) free(x.owned[i]);
  free(x.owned);
  return rc;
}
