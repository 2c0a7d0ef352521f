/* indexed_read.c - mp_read_indexed (indexed.h): the indexed profile header
 * (index versions 8-13), dispatch to the memprof section reader
 * (memprof_read.c) and to the instrumentation part's (instrprof_index.c),
 * and attaching our symbolized section's symbol info to the frames it
 * names (and the in_library mark of the contexts whose leaf frame it
 * flags), its facts (how the inputs were recorded) and its temporary
 * allocations to the profile.
 */
#include <stdlib.h>
#include <string.h>

#include "common/io.h"
#include "indexed_priv.h"
#include "profdata/instrprof/instrprof.h"
#include "symsec.h"

/* Header words by version: magic, version, unused, hash type, hash offset,
 * then memprof (>= 8), binary ids (>= 9), temporal traces (>= 10), vtable
 * names (>= 12). */
static unsigned header_words(unsigned v) {
  return v >= 12 ? 9 : v >= 10 ? 8 : v == 9 ? 7 : 6;
}

static uint32_t intern_opt(mp_profile *p, const char *s) {
  return s ? mp_intern_string(p, s, strlen(s)) : MP_NO_STRING;
}

/* The contexts whose leaf frame the section marks as a call into a
 * library that allocated (MP_SYMSEC_ENTRY_LIBRARY_CALL) get in_library,
 * as the raw reader gave them. */
static void mark_library_calls(mp_profile *p, const uint8_t *lib) {
  for (size_t i = 0; i < p->n_records; i++)
    for (size_t j = 0; j < p->records[i].n_allocs; j++) {
      mp_alloc_site *a = mp_alloc_of(&p->records[i], j);
      if (p->stacks[a->stack].len && lib[mp_stack_frames(p, a->stack)[0]])
        a->in_library = 1;
    }
}

static int attach_syms(mp_profile *p, const mp_symsec *s, unsigned memprof_v,
                       const mp_frame_keys *keys, mp_err *err) {
  unsigned want = memprof_v == 2 ? MP_SYMSEC_KEY_FRAME_ID : MP_SYMSEC_KEY_LINEAR;
  if (s->key_kind != want)
    return mp_fail(err, "symbolized section keys frames by %s, but the "
                   "memprof section is version %u",
                   s->key_kind == MP_SYMSEC_KEY_LINEAR ? "linear id"
                                                       : "frame id",
                   memprof_v);
  uint8_t *lib = mp_xcalloc(p->n_frames + 1, 1);
  for (size_t i = 0; i < s->n_entries; i++) {
    const mp_symsec_entry *e = &s->entries[i];
    uint32_t f = mp_frame_keys_find(keys, e->key);
    if (f == UINT32_MAX) continue; /* a frame no record uses */
    mp_frame_sym sym = {intern_opt(p, e->name), intern_opt(p, e->file),
                        e->line, e->column, e->discriminator};
    mp_set_frame_sym(p, f, &sym);
    lib[f] = (e->flags & MP_SYMSEC_ENTRY_LIBRARY_CALL) != 0;
  }
  mark_library_calls(p, lib);
  free(lib);
  return 0;
}

/* The section's temporary allocations, added to the call stacks its keys
 * name (the keys of attach_syms, already checked); a key that names no call
 * stack of the memprof section is damage. */
static int attach_temporaries(mp_profile *p, const mp_symsec *s,
                              const mp_frame_keys *stack_keys, mp_err *err) {
  for (uint32_t i = 0; i < s->n_temporaries; i++)
    if (mp_frame_keys_find(stack_keys, s->temp_keys[i]) == UINT32_MAX)
      return mp_fail(err, "symbolized section at offset 0x%llx: temporary "
                     "allocation entry %u names call stack 0x%llx, which the "
                     "memprof section does not have",
                     (unsigned long long)s->llvm_end, i,
                     (unsigned long long)s->temp_keys[i]);
  for (uint32_t i = 0; i < s->n_temporaries; i++)
    mp_add_temporaries(p, mp_frame_keys_find(stack_keys, s->temp_keys[i]),
                       s->temp_counts[i]);
  return 0;
}

/* How the input was recorded: the section's facts, or, without them (no
 * section, a 1.0 one, LLVM's file), every allocation. */
static void add_facts(mp_profile *p, const mp_symsec *s) {
  if (!s || !s->has_facts) {
    mp_intervals_add(&p->intervals, 0);
    return;
  }
  for (uint32_t i = 0; i < s->n_intervals; i++)
    mp_intervals_add(&p->intervals, s->intervals[i]);
  p->uninstrumented |= s->uninstrumented;
  for (uint32_t i = 0; i < s->n_programs; i++)
    mp_add_program(p, s->programs[i].path, strlen(s->programs[i].path), s->programs[i].inputs);
}

static int read_header(const unsigned char *d, size_t len, uint64_t *memprof,
                       mp_err *err) {
  if (!mp_is_indexed(d, len))
    return mp_fail(err, "not an indexed profile (bad magic)");
  if (len < 16) return mp_fail(err, "truncated indexed header");
  uint64_t vw = mp_rd64(d + 8);
  unsigned v = (unsigned)(vw & 0xffffffffu);
  if (v < 8 || v > MPF_INDEXED_VERSION_MAX)
    return mp_fail(err, "indexed profile version %u is not supported "
                   "(8..%u carry a memory profile)", v,
                   MPF_INDEXED_VERSION_MAX);
  unsigned hw = header_words(v);
  if (len < 8ULL * hw)
    return mp_fail(err, "truncated indexed header: version %u needs %u "
                   "bytes, file has %zu", v, 8 * hw, len);
  *memprof = 0;
  if (!(vw & MPF_INDEXED_VARIANT_MEMPROF)) return 0; /* instrumentation only */
  *memprof = mp_rd64(d + 40);
  if (*memprof < 8ULL * hw || *memprof >= len)
    return mp_fail(err, "memprof section offset 0x%llx is outside the file "
                   "(header ends at 0x%x, size 0x%zx)",
                   (unsigned long long)*memprof, 8 * hw, len);
  return 0;
}

/* The sections after the memprof one (binary ids from version 9, vtable
 * names from 12) must fit in the file: a file cut short there is refused,
 * as llvm-profdata refuses it ("truncated profile data"). */
static int check_tail_section(const unsigned char *d, size_t end,
                              unsigned word, const char *what, mp_err *err) {
  uint64_t off = mp_rd64(d + 8 * word);
  if (off > end || end - off < 8)
    return mp_fail(err, "truncated profile data: %s section at offset 0x%llx "
                   "needs 8 bytes, the file has 0x%zx", what,
                   (unsigned long long)off, end);
  uint64_t size = mp_rd64(d + off);
  if (size > end - off - 8)
    return mp_fail(err, "truncated profile data: %s section at offset 0x%llx "
                   "holds %llu bytes, the file has %llu after it", what,
                   (unsigned long long)off, (unsigned long long)size,
                   (unsigned long long)(end - off - 8));
  return 0;
}

static int check_tail(const unsigned char *d, size_t end, mp_err *err) {
  unsigned v = (unsigned)(mp_rd64(d + 8) & 0xffffffffu);
  if (v >= 9 && check_tail_section(d, end, 6, "binary-id", err)) return -1;
  if (v >= 12 && check_tail_section(d, end, 8, "vtable-names", err)) return -1;
  return 0;
}

int mp_is_indexed(const void *data, size_t len) {
  uint64_t m;
  if (len < 8) return 0;
  memcpy(&m, data, 8);
  return m == MPF_INDEXED_MAGIC;
}

int mp_read_indexed(mp_profile *p, const void *data, size_t len, mp_err *err) {
  return mp_read_indexed_input(p, data, len, NULL, 1, err);
}

int mp_read_indexed_input(mp_profile *p, const void *data, size_t len,
                          const char *src, uint64_t weight, mp_err *err) {
  const unsigned char *d = data;
  uint64_t memprof = 0;
  if (read_header(d, len, &memprof, err)) return -1;

  mp_symsec sec = {0};
  int has_sec = mp_symsec_present(d, len);
  if (has_sec && mp_symsec_read(d, len, &sec, err)) return -1;
  size_t end = has_sec ? sec.llvm_end : len;

  mp_frame_keys keys = {0}, stack_keys = {0};
  unsigned version = 0;
  int rc = 0;
  if (memprof) {
    mp_profile_begin_input(p);
    rc = mp_read_memprof(p, d, end, memprof, &keys, &stack_keys, &version,
                         err);
  }
  if (rc == 0) rc = check_tail(d, end, err);
  if (rc == 0)
    rc = mp_read_instr_indexed(mp_profile_instr(p), src, d, end, weight, err);
  if (rc == 0 && has_sec && !memprof)
    rc = mp_fail(err, "symbolized section without a memory profile");
  if (rc == 0 && has_sec) rc = attach_syms(p, &sec, version, &keys, err);
  if (rc == 0 && has_sec) rc = attach_temporaries(p, &sec, &stack_keys, err);
  if (rc == 0 && memprof) add_facts(p, has_sec ? &sec : NULL);
  mp_frame_keys_free(&keys);
  mp_frame_keys_free(&stack_keys);
  mp_symsec_free(&sec);
  return rc;
}
