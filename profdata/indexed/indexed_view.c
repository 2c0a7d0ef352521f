/* indexed_view.c - the writer's view of a profile (indexed_priv.h): which
 * stacks and frames get written, in which order, under which 64-bit ids.
 *
 * Order is first use walking records in insertion order, alloc sites then
 * call sites, frames leaf first - the order llvm-profdata gives YAML input.
 * Ids: like llvm-profdata, the first 8 bytes of BLAKE3 over the 17 frame
 * bytes / the leaf-first FrameIds, which (with LLVM's table order) makes our
 * output byte-identical to llvm-profdata's for the same input.  Readers only
 * need unique ids, so on the (astronomically unlikely) collision we fall
 * back to a seeded mixing hash.
 */
#include "indexed_priv.h"

#include "common/blake3.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash_frame(const mp_frame *f, uint64_t seed) {
  if (seed == 0) {
    unsigned char b[MPF_FRAME_SIZE];
    memcpy(b, &f->guid, 8);
    memcpy(b + 8, &f->line_offset, 4);
    memcpy(b + 12, &f->column, 4);
    b[16] = f->is_inline;
    return mp_blake3_u64(b, sizeof b);
  }
  uint64_t h = mp_mix64(seed ^ 0x6d656d70726f6631ULL);
  h = mp_mix64(h ^ f->guid);
  h = mp_mix64(h ^ ((uint64_t)f->line_offset << 32 | f->column));
  return mp_mix64(h ^ f->is_inline);
}

static uint64_t hash_stack(const uint64_t *ids, size_t n, uint64_t seed) {
  if (seed == 0) return mp_blake3_u64(ids, n * 8);
  uint64_t h = mp_mix64(seed ^ 0x6d656d70726f6632ULL ^ n);
  for (size_t i = 0; i < n; i++) h = mp_mix64(h ^ ids[i]);
  return h;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* 1 if ids are pairwise distinct (and none is 0, which some tools treat as
 * "no id"). */
static int all_distinct(const uint64_t *ids, size_t n) {
  uint64_t *s = mp_xmalloc((n + 1) * 8);
  memcpy(s, ids, n * 8);
  qsort(s, n, 8, cmp_u64);
  int ok = 1;
  for (size_t i = 0; i < n && ok; i++)
    ok = s[i] != 0 && (i == 0 || s[i] != s[i - 1]);
  free(s);
  return ok;
}

/* Until every frame has its slot, each new stack's frames are read: they
 * are scattered over the model, so fetch them this many sites ahead. */
#define AHEAD 8

static void prefetch_frames(const mp_profile *p, uint32_t s) {
  __builtin_prefetch(p->stack_frames + p->stacks[s].off);
}

static void use_stack(mp_wview *v, uint32_t s) {
  if (v->stack_slot[s] != UINT32_MAX) return;
  v->stack_slot[s] = (uint32_t)v->n_stacks;
  v->stacks[v->n_stacks++] = s;
  /* Profiles have far fewer frames than stack elements: once every frame
   * has its slot, no later stack can add one. */
  if (v->n_frames == v->p->n_frames) return;
  /* locals: the stores below may alias the fields as far as the compiler
   * knows, and this runs for every element of every stack */
  const uint32_t *f = mp_stack_frames(v->p, s);
  uint32_t len = v->p->stacks[s].len, *slot = v->frame_slot;
  for (uint32_t i = 0; i < len; i++) {
    if (slot[f[i]] != UINT32_MAX) continue;
    slot[f[i]] = (uint32_t)v->n_frames;
    v->frames[v->n_frames++] = f[i];
  }
}

/* Stack ids cost one BLAKE3 per stack; v3/v4 files do not contain them, so
 * they are computed (and checked for collisions) only when written. */
static int assign_ids(mp_wview *v, int want_stack_ids, mp_err *err) {
  const mp_profile *p = v->p;
  uint64_t *buf = NULL;
  size_t cap = 0;
  for (uint64_t seed = 0; seed < 8; seed++) {
    for (size_t i = 0; i < v->n_frames; i++)
      v->frame_id[i] = hash_frame(&p->frames[v->frames[i]], seed);
    if (!all_distinct(v->frame_id, v->n_frames)) continue;
    if (!want_stack_ids) {
      free(buf);
      return 0;
    }
    for (size_t i = 0; i < v->n_stacks; i++) {
      const mp_stack *s = &p->stacks[v->stacks[i]];
      MP_VEC_RESERVE(buf, cap, (size_t)s->len + 1);
      for (uint32_t j = 0; j < s->len; j++)
        buf[j] = v->frame_id[v->frame_slot[p->stack_frames[s->off + j]]];
      v->stack_id[i] = hash_stack(buf, s->len, seed);
    }
    if (all_distinct(v->stack_id, v->n_stacks)) {
      free(buf);
      return 0;
    }
  }
  free(buf);
  return mp_fail(err, "could not find collision-free frame/stack ids");
}

int mp_wview_init(mp_wview *v, const mp_profile *p, int want_stack_ids,
                  mp_err *err) {
  memset(v, 0, sizeof *v);
  v->p = p;
  v->stacks = mp_xmalloc((p->n_stacks + 1) * 4);
  v->stack_slot = mp_xmalloc((p->n_stacks + 1) * 4);
  memset(v->stack_slot, 0xff, (p->n_stacks + 1) * 4);
  v->frames = mp_xmalloc((p->n_frames + 1) * 4);
  v->frame_slot = mp_xmalloc((p->n_frames + 1) * 4);
  memset(v->frame_slot, 0xff, (p->n_frames + 1) * 4);
  for (size_t i = 0; i < p->n_records; i++) {
    const mp_record *r = &p->records[i];
    for (size_t j = 0; j < r->n_allocs; j++) {
      if (j + AHEAD < r->n_allocs && v->n_frames < p->n_frames)
        prefetch_frames(p, mp_alloc_of(r, j + AHEAD)->stack);
      use_stack(v, mp_alloc_of(r, j)->stack);
    }
    for (size_t j = 0; j < r->n_calls; j++) use_stack(v, r->calls[j].stack);
  }
  v->frame_id = mp_xmalloc((v->n_frames + 1) * 8);
  v->stack_id = mp_xcalloc(v->n_stacks + 1, 8);
  if (assign_ids(v, want_stack_ids, err)) {
    mp_wview_free(v);
    return -1;
  }
  return 0;
}

void mp_wview_free(mp_wview *v) {
  free(v->stacks);
  free(v->stack_slot);
  free(v->frames);
  free(v->frame_slot);
  free(v->frame_id);
  free(v->stack_id);
  memset(v, 0, sizeof *v);
}
