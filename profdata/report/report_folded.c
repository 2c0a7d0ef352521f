/* report_folded.c - folded stacks, the input of flamegraph.pl and inferno:
 * one line per context, "root;...;leaf VALUE", frames named by their
 * demangled function (inline frames are frames of their own), VALUE the
 * --sort key's total (bytes, allocations, lifetime in ms, lifetime access
 * density x 100, accesses).  Contexts whose value is 0 are left out, as
 * those tools draw nothing for them.
 */
#include <inttypes.h>
#include <string.h>

#include "report.h"

/* ';' separates frames and a newline ends the line: neither may appear in
 * a name (C++ names have neither; a GUID never). */
static void put_frame(mp_buf *out, const char *name) {
  size_t n = strlen(name);
  mp_buf_reserve(out, n);
  for (size_t i = 0; i < n; i++)
    out->data[out->len++] = name[i] == ';' || name[i] == '\n' ? '_' : name[i];
}

void rpt_write_folded(rpt *r, mp_buf *out) {
  const mp_profile *p = r->p;
  for (size_t i = 0; i < r->n_ctx; i++) {
    const rpt_ctx *c = &r->ctx[i];
    uint64_t v = rpt_value(c, r->opts.sort);
    if (!v) continue;
    const uint32_t *f = mp_stack_frames(p, c->stack);
    for (uint32_t k = p->stacks[c->stack].len; k-- > 0;) {
      put_frame(out, rpt_frame_name(r, f[k]));
      mp_buf_u8(out, k ? ';' : ' ');
    }
    mp_buf_printf(out, "%" PRIu64 "\n", v);
  }
}
