/* report_out.c - what the report's formats share: a u64 -> u32 table
 * (rpt_map), JSON string escaping safe inside an HTML <script> block, fast
 * decimal output, and dense numbers for the frames the contexts use.
 */
#include <stdlib.h>
#include <string.h>

#include "report.h"

void rpt_json_str(mp_buf *out, const char *s) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      mp_buf_u8(out, '\\');
      mp_buf_u8(out, c);
    } else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
      /* < > & as \u escapes keep "</script>" out of an HTML page */
      mp_buf_printf(out, "\\u%04x", c);
    } else {
      mp_buf_u8(out, c);
    }
  }
}

void rpt_put_u64(mp_buf *out, uint64_t v) {
  char tmp[24];
  size_t n = 0;
  do tmp[n++] = (char)('0' + v % 10);
  while (v /= 10);
  mp_buf_reserve(out, n);
  while (n) out->data[out->len++] = (unsigned char)tmp[--n];
}

void rpt_map_init(rpt_map *m, size_t n) {
  size_t cap = 64;
  while (cap < n * 2) cap *= 2;
  m->keys = mp_xmalloc(cap * 8);
  m->vals = mp_xmalloc(cap * 4);
  memset(m->vals, 0xff, cap * 4);
  m->mask = cap - 1;
  m->used = 0;
}

void rpt_map_free(rpt_map *m) {
  free(m->keys);
  free(m->vals);
}

uint32_t *rpt_map_slot(rpt_map *m, uint64_t key,
                       int (*same)(void *ctx, uint32_t val), void *ctx) {
  size_t h = mp_mix64(key) & m->mask;
  while (m->vals[h] != UINT32_MAX &&
         (m->keys[h] != key || (same && !same(ctx, m->vals[h]))))
    h = (h + 1) & m->mask;
  m->keys[h] = key;
  return &m->vals[h];
}

/* Keep the table half empty; the stored keys are all a rehash needs. */
void rpt_map_added(rpt_map *m) {
  if (++m->used * 2 <= m->mask) return;
  rpt_map old = *m;
  rpt_map_init(m, old.mask + 1);
  m->used = old.used;
  for (size_t i = 0; i <= old.mask; i++) {
    if (old.vals[i] == UINT32_MAX) continue;
    size_t h = mp_mix64(old.keys[i]) & m->mask;
    while (m->vals[h] != UINT32_MAX) h = (h + 1) & m->mask;
    m->keys[h] = old.keys[i];
    m->vals[h] = old.vals[i];
  }
  rpt_map_free(&old);
}

uint32_t *rpt_frame_index(const rpt *r, uint32_t first, uint32_t *n_out) {
  const mp_profile *p = r->p;
  uint32_t *index = mp_xmalloc((p->n_frames + 1) * sizeof *index);
  memset(index, 0xff, (p->n_frames + 1) * sizeof *index);
  for (size_t i = 0; i < r->n_ctx; i++) {
    const uint32_t *f = mp_stack_frames(p, r->ctx[i].stack);
    for (uint32_t j = 0; j < p->stacks[r->ctx[i].stack].len; j++) index[f[j]] = 0;
  }
  uint32_t n = first;
  for (size_t f = 0; f < p->n_frames; f++)
    if (index[f] != UINT32_MAX) index[f] = n++;
  *n_out = n;
  return index;
}
