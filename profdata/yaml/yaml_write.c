/* yaml_write.c - writes a profile as LLVM's memprof YAML (yaml_io.h), byte
 * for byte what `llvm-profdata-22 show --memory` prints for an indexed file
 * merged with --memprof-full-schema, minus its leading "# MemProfSummary"
 * comment document (derived data that needs the hot/cold thresholds; the
 * CLI may print it before our output, LLVM's reader skips it either way).
 *
 * What we copy from LLVM's yaml::Output: keys padded to 16 columns in block
 * mappings, frames and CalleeGuids as flow collections that wrap once the
 * column passes 80 (measured: a ", " ending at column 80 stays, at 81 wraps),
 * continuation lines indented 2 past the opening bracket, empty sequences
 * as "[]", empty AllocSites/CallSites/CalleeGuids left out, GUIDs as
 * unpadded lowercase hex, the document closed by "...".  All 27 MIB fields
 * are printed in tag order: LLVM prints the schema's fields and the full
 * schema is all 27.  AccessHistogram (a pointer in LLVM, garbage in its full
 * schema files) is always 0 in our model.
 *
 * The data-access profile follows the records as show prints it: records
 * by access count (most first), known-cold symbols by name and hashes by
 * value, strings quoted as LLVM's YAML output quotes them.
 *
 * With `symbolized`, a frame with symbol info ends with a comment
 * "# name file:line:column" ("??" for an unknown name or file).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "yaml_io.h"
#include "yaml_scalar.h"
#include "profdata/model/data_access.h"

#define WRAP_COLUMN 80

/* Output that knows its column, for LLVM's flow wrapping. */
typedef struct ywriter {
  mp_buf *out;
  size_t col;
  int symbolized;
  const mp_profile *p;
} ywriter;

static void put(ywriter *w, const char *s) {
  size_t n = strlen(s);
  mp_buf_put(w->out, s, n);
  for (size_t i = 0; i < n; i++) w->col = s[i] == '\n' ? 0 : w->col + 1;
}

static void put_spaces(ywriter *w, size_t n) {
  for (size_t i = 0; i < n; i++) put(w, " ");
}

static void put_hex(ywriter *w, uint64_t v) {
  char tmp[24];
  snprintf(tmp, sizeof tmp, "0x%" PRIx64, v);
  put(w, tmp);
}

static void put_u64(ywriter *w, uint64_t v) {
  char tmp[24];
  snprintf(tmp, sizeof tmp, "%" PRIu64, v);
  put(w, tmp);
}

/* "key:" padded so the value starts at column indent+17 (LLVM paddedKey). */
static void padded_key(ywriter *w, const char *key) {
  size_t n = strlen(key);
  put(w, key);
  put(w, ":");
  put_spaces(w, n < 16 ? 16 - n : 1);
}

/* Separator between flow items: ", ", then a wrap if past WRAP_COLUMN. */
static void flow_sep(ywriter *w, size_t flow_start) {
  put(w, ", ");
  if (w->col > WRAP_COLUMN) {
    put(w, "\n");
    put_spaces(w, flow_start + 2);
  }
}

/* Length of the valid, printable UTF-8 sequence at `s`, 0 if there is none
 * (YAML readers refuse invalid UTF-8 and C0/C1 controls, even in comments). */
static size_t printable_utf8(const unsigned char *s) {
  if (s[0] >= 0x20 && s[0] < 0x7f) return 1;
  size_t n = s[0] >= 0xf0 && s[0] < 0xf5   ? 4
             : s[0] >= 0xe0 && s[0] < 0xf0 ? 3
             : s[0] >= 0xc2 && s[0] < 0xe0 ? 2
                                           : 0;
  for (size_t i = 1; i < n; i++)
    if ((s[i] & 0xc0) != 0x80) return 0;
  if (n == 2 && s[0] == 0xc2 && s[1] < 0xa0) return 0; /* C1 controls */
  if (n == 3 && s[0] == 0xe0 && s[1] < 0xa0) return 0; /* overlong */
  if (n == 3 && s[0] == 0xed && s[1] >= 0xa0) return 0; /* surrogates */
  if (n == 4 && s[0] == 0xf0 && s[1] < 0x90) return 0; /* overlong */
  if (n == 4 && s[0] == 0xf4 && s[1] >= 0x90) return 0; /* > U+10FFFF */
  return n;
}

/* Comments must stay one line of valid text: anything else becomes '?'. */
static void put_comment_text(ywriter *w, const char *s) {
  const unsigned char *u = (const unsigned char *)s;
  while (*u) {
    size_t n = printable_utf8(u);
    if (n) {
      char c[5] = {0};
      memcpy(c, u, n);
      put(w, c);
      u += n;
    } else {
      put(w, "?");
      u++;
    }
  }
}

static void frame_comment(ywriter *w, uint32_t frame) {
  const mp_frame_sym *s = &w->p->syms[frame];
  if (s->name == MP_NO_STRING && s->file == MP_NO_STRING) return;
  const char *name = mp_string(w->p, s->name);
  const char *file = mp_string(w->p, s->file);
  char pos[32];
  put(w, " # ");
  put_comment_text(w, name ? name : "??");
  put(w, " ");
  put_comment_text(w, file ? file : "??");
  snprintf(pos, sizeof pos, ":%" PRIu32 ":%" PRIu32, s->line, s->column);
  put(w, pos);
}

/* "          - { Function: ..., IsInlineFrame: ... }" at `indent`. */
static void write_frame(ywriter *w, size_t indent, uint32_t id) {
  const mp_frame *f = &w->p->frames[id];
  put_spaces(w, indent);
  put(w, "- ");
  size_t start = w->col;
  put(w, "{ Function: ");
  put_hex(w, f->guid);
  flow_sep(w, start);
  put(w, "LineOffset: ");
  put_u64(w, f->line_offset);
  flow_sep(w, start);
  put(w, "Column: ");
  put_u64(w, f->column);
  flow_sep(w, start);
  put(w, "IsInlineFrame: ");
  put(w, f->is_inline ? "true" : "false");
  put(w, " }");
  if (w->symbolized) frame_comment(w, id);
  put(w, "\n");
}

/* "<key>:" and the frames of `stack` below it, or "<key>: []". */
static void write_stack(ywriter *w, size_t indent, const char *key,
                        uint32_t stack) {
  const mp_stack *s = &w->p->stacks[stack];
  if (s->len == 0) {
    padded_key(w, key);
    put(w, "[]\n");
    return;
  }
  put(w, key);
  put(w, ":\n");
  const uint32_t *frames = mp_stack_frames(w->p, stack);
  for (uint32_t i = 0; i < s->len; i++) write_frame(w, indent + 4, frames[i]);
}

/* Only the fields the inputs carried (an indexed file's schema), as
 * llvm-profdata shows them. */
static void write_mib(ywriter *w, size_t indent, const mpf_mib *m) {
  uint32_t mask = w->p->mib_fields ? w->p->mib_fields : MP_MIB_ALL_FIELDS;
#define MIB_FIELD(Tag, Name, CType, Merge) \
  if (mask & (1u << Tag)) {                \
    put_spaces(w, indent);                 \
    padded_key(w, #Name);                  \
    put_u64(w, (uint64_t)m->Name);         \
    put(w, "\n");                          \
  }
#include "include/MIBDef.inc"
#undef MIB_FIELD
}

static void write_callees(ywriter *w, size_t indent, const mp_call_site *c) {
  if (c->n_callees == 0) return;
  put_spaces(w, indent);
  padded_key(w, "CalleeGuids");
  size_t start = w->col;
  put(w, "[ ");
  for (uint32_t i = 0; i < c->n_callees; i++) {
    if (i) flow_sep(w, start);
    put_hex(w, c->callees[i]);
  }
  put(w, " ]\n");
}

static void write_record(ywriter *w, const mp_record *r) {
  put(w, "  - ");
  padded_key(w, "GUID");
  put_hex(w, r->guid);
  put(w, "\n");
  if (r->n_allocs) put(w, "    AllocSites:\n");
  for (size_t i = 0; i < r->n_allocs; i++) {
    put(w, "      - ");
    const mp_alloc_site *a = mp_alloc_of(r, i);
    write_stack(w, 6, "Callstack", a->stack);
    put(w, "        MemInfoBlock:\n");
    write_mib(w, 10, &a->mib);
  }
  if (r->n_calls) put(w, "    CallSites:\n");
  for (size_t i = 0; i < r->n_calls; i++) {
    put(w, "      - ");
    write_stack(w, 6, "Frames", r->calls[i].stack);
    write_callees(w, 8, &r->calls[i]);
  }
}

/* ---- DataAccessProfiles ---------------------------------------------------- */

static void put_string(ywriter *w, const char *str) {
  mp_buf t = {0};
  mp_yaml_put_string(str, strlen(str), &t);
  mp_buf_u8(&t, 0);
  put(w, (const char *)t.data);
  mp_buf_free(&t);
}

/* show's order: records by access count, most first, ties in file order;
 * known-cold symbols by name, hashes by value. */
static const mp_profile *g_sort_p;
static int by_count(const void *a, const void *b) {
  const mp_dap_record *x = *(const mp_dap_record *const *)a;
  const mp_dap_record *y = *(const mp_dap_record *const *)b;
  if (x->count != y->count) return x->count > y->count ? -1 : 1;
  return x < y ? -1 : x > y;
}
static int by_name(const void *a, const void *b) {
  const mp_dap *d = g_sort_p->dap;
  return strcmp(mp_dap_str(g_sort_p, d, *(const uint32_t *)a),
                mp_dap_str(g_sort_p, d, *(const uint32_t *)b));
}
static int by_value(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void write_dap_record(ywriter *w, const mp_dap_record *r) {
  const mp_dap *d = w->p->dap;
  put(w, "    - ");
  padded_key(w, r->is_literal ? "Hash" : "Symbol");
  if (r->is_literal)
    put_u64(w, r->id);
  else
    put_string(w, mp_dap_str(w->p, d, (uint32_t)r->id));
  put(w, "\n      ");
  padded_key(w, "AccessCount");
  put_u64(w, r->count);
  put(w, "\n");
  if (r->n_locs) put(w, "      Locations:\n");
  for (uint32_t i = 0; i < r->n_locs; i++) {
    put(w, "        - ");
    padded_key(w, "FileName");
    put_string(w, mp_dap_str(w->p, d, r->locs[i].file));
    put(w, "\n          ");
    padded_key(w, "Line");
    put_u64(w, r->locs[i].line);
    put(w, "\n");
  }
}

static void write_dap(ywriter *w) {
  const mp_dap *d = w->p->dap;
  put(w, "DataAccessProfiles:\n");
  if (d->n_recs) put(w, "  SampledRecords:\n");
  const mp_dap_record **recs = mp_xmalloc((d->n_recs + 1) * sizeof *recs);
  for (size_t i = 0; i < d->n_recs; i++) recs[i] = &d->recs[i];
  if (d->n_recs) qsort(recs, d->n_recs, sizeof *recs, by_count);
  for (size_t i = 0; i < d->n_recs; i++) write_dap_record(w, recs[i]);
  free(recs);
  uint32_t *syms = mp_xmalloc((d->n_cold_syms + 1) * 4);
  g_sort_p = w->p;
  if (d->n_cold_syms) {
    memcpy(syms, d->cold_syms, d->n_cold_syms * 4);
    qsort(syms, d->n_cold_syms, 4, by_name);
  }
  if (d->n_cold_syms) put(w, "  KnownColdSymbols:\n");
  for (size_t i = 0; i < d->n_cold_syms; i++) {
    put(w, "    - ");
    put_string(w, mp_dap_str(w->p, d, syms[i]));
    put(w, "\n");
  }
  free(syms);
  if (!d->n_cold_hashes) return;
  uint64_t *h = mp_xmalloc(d->n_cold_hashes * 8);
  memcpy(h, d->cold_hashes, d->n_cold_hashes * 8);
  qsort(h, d->n_cold_hashes, 8, by_value);
  put(w, "  ");
  padded_key(w, "KnownColdStrHashes");
  size_t start = w->col;
  put(w, "[ ");
  for (size_t i = 0; i < d->n_cold_hashes; i++) {
    if (i) flow_sep(w, start);
    put_u64(w, h[i]);
  }
  put(w, " ]\n");
  free(h);
}

void mp_write_yaml(const mp_profile *p, int symbolized, mp_buf *out) {
  ywriter w = {out, 0, symbolized, p};
  int dap = !mp_dap_empty(p->dap);
  if (p->n_records == 0 && !dap) {
    put(&w, "--- {}\n...\n");
    return;
  }
  put(&w, "---\n");
  if (p->n_records) put(&w, "HeapProfileRecords:\n");
  for (size_t i = 0; i < p->n_records; i++) write_record(&w, &p->records[i]);
  if (dap) write_dap(&w);
  put(&w, "...\n");
}
