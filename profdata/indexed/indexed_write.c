/* indexed_write.c - mp_write_indexed (indexed.h): the container around the
 * memprof section - header, the instrumentation summary and function table
 * (instrprof_write.c; empty for a memory-only profile), binary-id and
 * vtable-name sections - and, last, our symbolized section with its
 * trailer.  Layout: docs/indexed-format.md.
 */
#include <stdlib.h>
#include <string.h>

#include "indexed_priv.h"
#include "profdata/instrprof/instrprof.h"
#include "profdata/llvm/odhash.h"
#include "symsec.h"

static int check_opts(const mp_index_opts *o, mp_err *err) {
  if (o->index_version < 11 || o->index_version > MPF_INDEXED_VERSION_MAX)
    return mp_fail(err, "indexed format version %u is not supported "
                   "(11, 12 or 13)", o->index_version);
  if (o->memprof_version < 2 || o->memprof_version > 4)
    return mp_fail(err, "memprof version %u is not supported (2, 3 or 4)",
                   o->memprof_version);
  if (o->memprof_version == 4 && o->index_version < 12)
    return mp_fail(err, "memprof version 4 needs indexed format version 12 "
                   "or later (LLVM cannot read it in version %u)",
                   o->index_version);
  return 0;
}

static unsigned header_words(unsigned version) {
  return version >= 12 ? 9 : 8;
}

static int has_syms(const mp_wview *v) {
  for (size_t i = 0; i < v->n_frames; i++) {
    const mp_frame_sym *s = &v->p->syms[v->frames[i]];
    if (s->name != MP_NO_STRING || s->file != MP_NO_STRING) return 1;
  }
  return 0;
}

/* Header word indexes. */
enum { H_MAGIC, H_VERSION, H_UNUSED, H_HASHTYPE, H_HASH_OFF, H_MEMPROF_OFF,
       H_BINID_OFF, H_TEMPORAL_OFF, H_VTABLE_OFF };

/* A memory profile is written unless the inputs were all instrumentation
 * profiles (then, as llvm-profdata, no memprof section and no flag). */
static int has_memprof(const mp_profile *p) {
  return p->input > 0 || !p->instr;
}

static uint64_t variant_flags(const mp_profile *p) {
  uint64_t v = has_memprof(p) ? MPF_INDEXED_VARIANT_MEMPROF : 0;
  if (p->instr) v |= p->instr->variant & MP_IVAR_INDEXED_MASK & ~MP_IVAR_MEMPROF;
  return v;
}

static int write_body(const mp_wview *v, const mp_index_opts *o, mp_buf *out,
                      uint64_t *sym_key, uint64_t *stack_key, mp_err *err) {
  unsigned hw = header_words(o->index_version);
  uint64_t hdr[9] = {MPF_INDEXED_MAGIC,
                     variant_flags(v->p) | o->index_version};
  for (unsigned i = 0; i < hw; i++) mp_buf_u64(out, 0);
  hdr[H_HASH_OFF] = mp_instr_write(out, v->p->instr, o->sparse, err);
  if (!hdr[H_HASH_OFF]) return -1;
  if (has_memprof(v->p)) {
    hdr[H_MEMPROF_OFF] = out->len;
    if (mp_write_memprof(out, v, o, sym_key, stack_key, err)) return -1;
  }
  hdr[H_BINID_OFF] = out->len;
  mp_instr_write_binary_ids(out, v->p->instr);
  if (o->index_version >= 12) {
    hdr[H_VTABLE_OFF] = out->len;
    mp_buf_u64(out, 0); /* no vtable names */
  }
  for (unsigned i = 0; i < hw; i++) mp_buf_set_u64(out, 8 * i, hdr[i]);
  return 0;
}

int mp_write_indexed(const mp_profile *p, const mp_index_opts *o, mp_buf *out,
                     mp_err *err) {
  if (check_opts(o, err)) return -1;
  mp_wview v;
  if (mp_wview_init(&v, p, o->memprof_version == 2, err)) return -1;
  uint64_t *sym_key = mp_xmalloc((v.n_frames + 1) * 8);
  uint64_t *stack_key = mp_xmalloc((v.n_stacks + 1) * 8);
  size_t start = out->len;
  int rc = -1;
  if (start != 0) {
    mp_fail(err, "internal: indexed output must start an empty buffer");
    goto done;
  }
  if (write_body(&v, o, out, sym_key, stack_key, err)) goto done;
  mp_symsec_keys k = {v.frames, sym_key, v.n_frames, v.stacks, stack_key,
                      v.n_stacks,
                      o->memprof_version == 2 ? MP_SYMSEC_KEY_FRAME_ID
                                              : MP_SYMSEC_KEY_LINEAR};
  /* the section also keeps how the inputs were recorded and their
   * temporary allocations, which LLVM's format has no room for */
  if (o->symbolized_section && has_memprof(p) &&
      (has_syms(&v) || mp_symsec_has_facts(p) ||
       mp_symsec_has_temporaries(p, &k) || mp_symsec_has_programs(p)))
    mp_symsec_write(out, p, &k);
  rc = 0;
done:
  free(sym_key);
  free(stack_key);
  mp_wview_free(&v);
  return rc;
}
