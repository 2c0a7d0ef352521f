/* report_out.c - what the report's formats share: JSON string escaping
 * safe inside an HTML <script> block, fast decimal output, and dense
 * numbers for the frames the contexts use (report_format.c writes values
 * for people).
 */
#include <inttypes.h>
#include <stdio.h>
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
