/* yaml_read.c - reads LLVM's memprof YAML (yaml_io.h) with libyaml's event
 * parser, accepting what `llvm-profdata-22 merge X.yaml` accepts:
 *
 *   ---
 *   HeapProfileRecords:            # optional; null = empty
 *     - GUID: 0x... | function-name                     (required)
 *       AllocSites:                # optional; null = empty
 *         - Callstack: [frames]                         (required)
 *           MemInfoBlock: {MIB field: number, ...}      (required; missing = 0)
 *       CallSites:                 # optional; null = empty
 *         - Frames: [frames]                            (required)
 *           CalleeGuids: [GUID, ...]                    (optional)
 *   DataAccessProfiles:            # optional; empty = none
 *     SampledRecords:              # optional; null = empty
 *       - Symbol: name | Hash: u64   (a non-empty Symbol wins; else Hash, 0)
 *         AccessCount: u64                              (required)
 *         Locations: [{FileName: string, Line: u32}]    (all optional)
 *     KnownColdSymbols: [name, ...]                     (optional)
 *     KnownColdStrHashes: [u64, ...]                    (optional)
 *
 * A frame is {Function: GUID, LineOffset: u32, Column: u32, IsInlineFrame:
 * bool}, all required.  Like LLVM, documents whose root is empty (a comment
 * block, e.g. show's MemProfSummary) are skipped, the first non-empty one is
 * read, and anything after it is ignored; aliases are refused (LLVM: "unknown
 * node kind"); unknown and duplicated keys are errors.  Scalars follow LLVM's
 * rules (yaml_scalar.h).  MIB values are parsed as u64 and truncated to the
 * field's width, as LLVM does.
 *
 * Where our model differs from LLVM's YAML reader: a second record with the
 * same GUID is merged into the first (LLVM drops it), equal alloc contexts
 * inside a record are merged by the MIB rules (LLVM keeps both), callee GUIDs
 * are deduplicated, AccessHistogram (a pointer in LLVM) is read as 0, and
 * AccessHistogramSize N is kept by attaching N zero histogram counts (the
 * YAML carries no counts), so writing the profile back prints the same N.
 *
 * Every error message starts with "line:column: " (1-based).  The event
 * cursor is yaml_cursor.c; DataAccessProfiles are read by yaml_read_dap.c.
 */
#include <stdlib.h>
#include <string.h>

#include "yaml_read_priv.h"

/* ---- frames and stacks --------------------------------------------------- */

static int read_frame(yreader *r) {
  static const char *const keys[] = {"Function", "LineOffset", "Column",
                                     "IsInlineFrame"};
  yaml_mark_t start = yr_here(r);
  uint64_t seen = 0, line = 0, col = 0;
  mp_frame f = {0, 0, 0, 0};
  int empty, inl = 0;
  if (yr_begin_map(r, "a frame", 0, &empty)) return -1;
  while (r->ev.type != YAML_MAPPING_END_EVENT) {
    size_t k = 0;
    if (yr_map_key(r, "a frame", keys, 4, &seen, &k)) return -1;
    int rc = k == 0   ? yr_read_guid(r, "Function", &f.guid)
             : k == 1 ? yr_read_uint(r, "LineOffset", UINT32_MAX, &line)
             : k == 2 ? yr_read_uint(r, "Column", UINT32_MAX, &col)
                      : yr_read_bool(r, "IsInlineFrame", &inl);
    if (rc) return -1;
  }
  if (yr_next(r) || yr_check_required(r, start, "a frame", keys, 0xf, seen))
    return -1;
  f.line_offset = (uint32_t)line;
  f.column = (uint32_t)col;
  f.is_inline = (uint8_t)inl;
  MP_VEC_RESERVE(r->frames, r->cap_frames, r->n_frames + 1);
  r->frames[r->n_frames++] = mp_intern_frame(r->p, &f);
  return 0;
}

/* A leaf-first list of frames, interned as a stack. */
static int read_stack(yreader *r, const char *what, uint32_t *stack) {
  int empty;
  r->n_frames = 0;
  if (yr_begin_seq(r, what, &empty)) return -1;
  while (!empty && r->ev.type != YAML_SEQUENCE_END_EVENT)
    if (read_frame(r)) return -1;
  if (!empty && yr_next(r)) return -1;
  *stack = mp_intern_stack(r->p, r->frames, (uint32_t)r->n_frames);
  return 0;
}

/* ---- MemInfoBlock --------------------------------------------------------- */

static const char *const mib_names[] = {
#define MIB_FIELD(Tag, Name, CType, Merge) #Name,
#include "include/MIBDef.inc"
#undef MIB_FIELD
};
static const unsigned mib_tags[] = {
#define MIB_FIELD(Tag, Name, CType, Merge) Tag,
#include "include/MIBDef.inc"
#undef MIB_FIELD
};
#define N_MIB_NAMES (sizeof mib_names / sizeof *mib_names)

/* Like LLVM, store the u64 truncated to the field's width. */
static void mib_set(mpf_mib *m, unsigned tag, uint64_t v) {
  switch (tag) {
#define MIB_FIELD(Tag, Name, CType, Merge) \
  case Tag: m->Name = (CType)v; break;
#include "include/MIBDef.inc"
#undef MIB_FIELD
  }
}

static int read_mib(yreader *r, mpf_mib *m) {
  uint64_t seen = 0;
  int empty;
  memset(m, 0, sizeof *m);
  if (yr_begin_map(r, "MemInfoBlock", 0, &empty)) return -1;
  while (r->ev.type != YAML_MAPPING_END_EVENT) {
    size_t k = 0;
    uint64_t v;
    if (yr_map_key(r, "MemInfoBlock", mib_names, N_MIB_NAMES, &seen, &k))
      return -1;
    yaml_mark_t at = yr_here(r);
    if (yr_read_uint(r, mib_names[k], UINT64_MAX, &v)) return -1;
    if (mib_tags[k] == MPF_MIB_AccessHistogramSize &&
        (uint32_t)v > MP_HIST_MAX_ENTRIES)
      return yr_fail_at(r, at, "AccessHistogramSize %u is larger than %u",
                     (uint32_t)v, MP_HIST_MAX_ENTRIES);
    mib_set(m, mib_tags[k], v);
  }
  r->p->mib_fields = MP_MIB_ALL_FIELDS; /* missing fields are 0, as LLVM's */
  return yr_next(r);
}

/* ---- sites and records ---------------------------------------------------- */

static int read_alloc_site(yreader *r) {
  static const char *const keys[] = {"Callstack", "MemInfoBlock"};
  yaml_mark_t start = yr_here(r);
  pending_alloc a;
  uint64_t seen = 0;
  int empty;
  memset(&a, 0, sizeof a);
  if (yr_begin_map(r, "an alloc site", 0, &empty)) return -1;
  while (r->ev.type != YAML_MAPPING_END_EVENT) {
    size_t k = 0;
    if (yr_map_key(r, "an alloc site", keys, 2, &seen, &k)) return -1;
    if (k == 0 ? read_stack(r, "Callstack", &a.stack) : read_mib(r, &a.mib))
      return -1;
  }
  if (yr_next(r) || yr_check_required(r, start, "an alloc site", keys, 3, seen))
    return -1;
  MP_VEC_RESERVE(r->allocs, r->cap_allocs, r->n_allocs + 1);
  r->allocs[r->n_allocs++] = a;
  return 0;
}

static int read_callees(yreader *r, pending_call *c) {
  int empty;
  c->callee_off = r->n_callees;
  if (yr_begin_seq(r, "CalleeGuids", &empty)) return -1;
  while (!empty && r->ev.type != YAML_SEQUENCE_END_EVENT) {
    MP_VEC_RESERVE(r->callees, r->cap_callees, r->n_callees + 1);
    if (yr_read_guid(r, "a callee GUID", &r->callees[r->n_callees])) return -1;
    r->n_callees++;
  }
  c->n_callees = (uint32_t)(r->n_callees - c->callee_off);
  return empty ? 0 : yr_next(r);
}

static int read_call_site(yreader *r) {
  static const char *const keys[] = {"Frames", "CalleeGuids"};
  yaml_mark_t start = yr_here(r);
  pending_call c = {0, r->n_callees, 0};
  uint64_t seen = 0;
  int empty;
  if (yr_begin_map(r, "a call site", 0, &empty)) return -1;
  while (r->ev.type != YAML_MAPPING_END_EVENT) {
    size_t k = 0;
    if (yr_map_key(r, "a call site", keys, 2, &seen, &k)) return -1;
    if (k == 0 ? read_stack(r, "Frames", &c.stack) : read_callees(r, &c))
      return -1;
  }
  if (yr_next(r) || yr_check_required(r, start, "a call site", keys, 1, seen))
    return -1;
  MP_VEC_RESERVE(r->calls, r->cap_calls, r->n_calls + 1);
  r->calls[r->n_calls++] = c;
  return 0;
}

static void commit_record(yreader *r, uint64_t guid) {
  mp_record_get(r->p, guid);
  for (size_t i = 0; i < r->n_allocs; i++) {
    const pending_alloc *a = &r->allocs[i];
    uint32_t nh = a->mib.AccessHistogramSize;
    uint64_t *zeros = nh ? mp_xcalloc(nh, 8) : NULL;
    mp_add_alloc_site(r->p, guid, a->stack, &a->mib, zeros);
    free(zeros);
  }
  for (size_t i = 0; i < r->n_calls; i++) {
    const pending_call *c = &r->calls[i];
    mp_add_call_site(r->p, guid, c->stack, r->callees + c->callee_off,
                     c->n_callees);
  }
}

static int read_record(yreader *r) {
  static const char *const keys[] = {"GUID", "AllocSites", "CallSites"};
  yaml_mark_t start = yr_here(r);
  uint64_t seen = 0, guid = 0;
  int empty;
  r->n_allocs = r->n_calls = r->n_callees = 0;
  if (yr_begin_map(r, "a heap profile record", 0, &empty)) return -1;
  while (r->ev.type != YAML_MAPPING_END_EVENT) {
    size_t k = 0;
    if (yr_map_key(r, "a heap profile record", keys, 3, &seen, &k)) return -1;
    int rc = k == 0   ? yr_read_guid(r, "GUID", &guid)
             : k == 1 ? yr_read_site_list(r, "AllocSites", read_alloc_site)
                      : yr_read_site_list(r, "CallSites", read_call_site);
    if (rc) return -1;
  }
  if (yr_next(r) ||
      yr_check_required(r, start, "a heap profile record", keys, 1, seen))
    return -1;
  commit_record(r, guid);
  return 0;
}

/* ---- document ------------------------------------------------------------- */

static int read_root(yreader *r) {
  static const char *const keys[] = {"HeapProfileRecords",
                                     "DataAccessProfiles"};
  uint64_t seen = 0;
  int empty;
  if (yr_begin_map(r, "the document", 0, &empty)) return -1;
  while (r->ev.type != YAML_MAPPING_END_EVENT) {
    size_t k = 0;
    if (yr_map_key(r, "the document", keys, 2, &seen, &k)) return -1;
    int rc = k == 0 ? yr_read_site_list(r, "HeapProfileRecords", read_record)
                    : yr_read_data_access(r);
    if (rc) return -1;
  }
  return yr_next(r); /* parses up to the document end, as LLVM does */
}

static int read_stream(yreader *r) {
  if (yr_next(r)) return -1; /* STREAM-START */
  for (;;) {
    if (yr_next(r)) return -1;
    if (r->ev.type == YAML_STREAM_END_EVENT) return 0; /* nothing but nulls */
    if (yr_next(r)) return -1; /* past DOCUMENT-START */
    if (!yr_is_empty_node(r)) return read_root(r);
    if (yr_next(r)) return -1; /* now at DOCUMENT-END */
  }
}

int mp_read_yaml(mp_profile *p, const void *data, size_t len, mp_err *err) {
  yreader r;
  memset(&r, 0, sizeof r);
  mp_profile_begin_input(p);
  mp_intervals_add(&p->intervals, 0); /* YAML says nothing of sampling */
  r.p = p;
  r.err = err;
  MP_VEC_RESERVE(r.frames, r.cap_frames, 1); /* empty stacks need a pointer */
  if (!yaml_parser_initialize(&r.parser))
    return mp_fail(err, "cannot initialize the YAML parser");
  yaml_parser_set_input_string(&r.parser, data, len);
  int rc = read_stream(&r);
  if (r.has_ev) yaml_event_delete(&r.ev);
  yaml_parser_delete(&r.parser);
  free(r.allocs);
  free(r.calls);
  free(r.callees);
  free(r.frames);
  free(r.locs);
  free(r.cold);
  return rc;
}

int mp_is_yaml(const void *data, size_t len) {
  return len >= 3 && memcmp(data, "---", 3) == 0;
}
