/* report_speedscope.c - speedscope's file format
 * (https://www.speedscope.app/file-format-schema.json): the frames every
 * context uses in `shared.frames` (name, file, line, col), and one
 * "sampled" profile per value - bytes, allocations, lifetime (ms) and, when
 * the profile has them, accesses - whose samples are the contexts'
 * stacks, root first, weighted by the context's total.  The file's name
 * says when the profile was sampled or not instrumented.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "report.h"

static void frames(rpt *r, mp_buf *out, const uint32_t *index) {
  mp_buf_printf(out, "\"shared\":{\"frames\":[");
  size_t n = 0;
  for (size_t f = 0; f < r->p->n_frames; f++) {
    if (index[f] == UINT32_MAX) continue;
    mp_buf_printf(out, "%s{\"name\":\"", n++ ? "," : "");
    rpt_json_str(out, rpt_frame_name(r, (uint32_t)f));
    mp_buf_printf(out, "\"");
    const char *file = rpt_frame_file(r, (uint32_t)f);
    if (file) {
      mp_buf_printf(out, ",\"file\":\"");
      rpt_json_str(out, file);
      mp_buf_printf(out, "\",\"line\":%" PRIu32 ",\"col\":%" PRIu32,
                    rpt_frame_line(r, (uint32_t)f),
                    rpt_frame_column(r, (uint32_t)f));
    }
    mp_buf_printf(out, "}");
  }
  mp_buf_printf(out, "]}");
}

static void profile(rpt *r, mp_buf *out, const uint32_t *index, rpt_key k,
                    const char *name, const char *unit) {
  const mp_profile *p = r->p;
  uint64_t total = 0;
  for (size_t i = 0; i < r->n_ctx; i++) total += rpt_value(&r->ctx[i], k);
  mp_buf_printf(out, "{\"type\":\"sampled\",\"name\":\"%s\",\"unit\":\"%s\","
                     "\"startValue\":0,\"endValue\":%" PRIu64 ",\"samples\":[",
                name, unit, total);
  for (size_t i = 0; i < r->n_ctx; i++) {
    const rpt_ctx *c = &r->ctx[i];
    const uint32_t *f = mp_stack_frames(p, c->stack);
    if (i) mp_buf_u8(out, ',');
    mp_buf_u8(out, '[');
    for (uint32_t j = p->stacks[c->stack].len; j-- > 0;) {
      rpt_put_u64(out, index[f[j]]);
      if (j) mp_buf_u8(out, ',');
    }
    mp_buf_u8(out, ']');
  }
  mp_buf_printf(out, "],\"weights\":[");
  for (size_t i = 0; i < r->n_ctx; i++) {
    if (i) mp_buf_u8(out, ',');
    rpt_put_u64(out, rpt_value(&r->ctx[i], k));
  }
  mp_buf_printf(out, "]}");
}

void rpt_write_speedscope(rpt *r, mp_buf *out) {
  /* speedscope frame index of each model frame a context uses */
  uint32_t n;
  uint32_t *index = rpt_frame_index(r, 0, &n);
  mp_buf_printf(out, "{\"$schema\":\"https://www.speedscope.app/"
                     "file-format-schema.json\",");
  frames(r, out, index);
  mp_buf_printf(out, ",\"profiles\":[");
  profile(r, out, index, RPT_BYTES, "allocated bytes", "bytes");
  mp_buf_printf(out, ",");
  profile(r, out, index, RPT_ALLOCS, "allocations", "none");
  if (r->has_lifetime) {
    mp_buf_printf(out, ",");
    profile(r, out, index, RPT_LIFETIME, "total lifetime", "milliseconds");
  }
  if (r->has_accesses) {
    mp_buf_printf(out, ",");
    profile(r, out, index, RPT_ACCESSES, "accesses", "none");
  }
  mp_buf_printf(out, "],\"name\":\"memory profile");
  if (r->p->n_programs) {
    mp_buf_printf(out, " of ");
    rpt_programs(r->p, out, 1);
  }
  rpt_json_notes(r->p, out, ": ", "");
  mp_buf_printf(out, "\",\"activeProfileIndex\":0,"
                     "\"exporter\":\"memprof-profdata\"}\n");
  free(index);
}
