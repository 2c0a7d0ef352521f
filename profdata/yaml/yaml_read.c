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
 * Every error message starts with "line:column: " (1-based).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "yaml_io.h"
#include "yaml_scalar.h"
#include "profdata/model/data_access.h"


typedef struct pending_alloc {
  uint32_t stack;
  mpf_mib mib;
} pending_alloc;

typedef struct pending_call {
  uint32_t stack;
  size_t callee_off;
  uint32_t n_callees;
} pending_call;

typedef struct pending_loc {
  uint32_t file; /* model string id */
  uint32_t line;
} pending_loc;

typedef struct yreader {
  yaml_parser_t parser;
  yaml_event_t ev; /* the next unconsumed event */
  int has_ev;
  mp_profile *p;
  mp_err *err;
  /* scratch of the record being read, committed when its mapping closes
   * (GUID may come after the sites) */
  pending_alloc *allocs;
  size_t n_allocs, cap_allocs;
  pending_call *calls;
  size_t n_calls, cap_calls;
  uint64_t *callees;
  size_t n_callees, cap_callees;
  uint32_t *frames; /* the stack being read */
  size_t n_frames, cap_frames;
  pending_loc *locs; /* the data-access record being read */
  size_t n_locs, cap_locs;
  uint32_t *cold; /* known-cold symbols, added after the records */
  size_t n_cold, cap_cold;
} yreader;

static int fail_at(yreader *r, yaml_mark_t m, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail_at(yreader *r, yaml_mark_t m, const char *fmt, ...) {
  char what[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return mp_fail(r->err, "%zu:%zu: %s", m.line + 1, m.column + 1, what);
}

static int parser_error(yreader *r) {
  yaml_parser_t *ps = &r->parser;
  const char *problem = ps->problem ? ps->problem : "malformed YAML";
  if (ps->context)
    return fail_at(r, ps->problem_mark, "%s (%s at %zu:%zu)", problem,
                   ps->context, ps->context_mark.line + 1,
                   ps->context_mark.column + 1);
  return fail_at(r, ps->problem_mark, "%s", problem);
}

/* Consume the current event and parse the next one. */
static int next(yreader *r) {
  if (r->has_ev) yaml_event_delete(&r->ev);
  r->has_ev = 0;
  if (!yaml_parser_parse(&r->parser, &r->ev)) return parser_error(r);
  r->has_ev = 1;
  if (r->ev.type == YAML_ALIAS_EVENT)
    return fail_at(r, r->ev.start_mark, "YAML aliases (*%s) are not supported",
                   (const char *)r->ev.data.alias.anchor);
  return 0;
}

static yaml_mark_t here(const yreader *r) { return r->ev.start_mark; }

static const char *scalar_text(const yreader *r) {
  return (const char *)r->ev.data.scalar.value;
}
static size_t scalar_len(const yreader *r) { return r->ev.data.scalar.length; }

/* An empty plain scalar: what "Key:" with no value parses to. */
static int is_empty_node(const yreader *r) {
  return r->ev.type == YAML_SCALAR_EVENT && scalar_len(r) == 0 &&
         r->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

static const char *kind_name(const yreader *r) {
  switch (r->ev.type) {
  case YAML_SCALAR_EVENT: return is_empty_node(r) ? "nothing" : "a scalar";
  case YAML_SEQUENCE_START_EVENT: return "a sequence";
  case YAML_MAPPING_START_EVENT: return "a mapping";
  default: return "something else";
  }
}

/* Enter a sequence.  *empty is set when the value is null, which LLVM reads
 * as an empty sequence. */
static int begin_seq(yreader *r, const char *what, int *empty) {
  *empty = 0;
  if (r->ev.type == YAML_SEQUENCE_START_EVENT) return next(r);
  if (r->ev.type == YAML_SCALAR_EVENT &&
      (is_empty_node(r) || mp_yaml_is_null_word(scalar_text(r), scalar_len(r)))) {
    *empty = 1;
    return next(r);
  }
  return fail_at(r, here(r), "%s must be a sequence, found %s", what,
                 kind_name(r));
}

/* Enter a mapping.  With allow_empty, a missing value counts as an empty
 * mapping (only where LLVM requires no key inside). */
static int begin_map(yreader *r, const char *what, int allow_empty,
                     int *empty) {
  *empty = 0;
  if (r->ev.type == YAML_MAPPING_START_EVENT) return next(r);
  if (allow_empty && is_empty_node(r)) {
    *empty = 1;
    return next(r);
  }
  return fail_at(r, here(r), "%s must be a mapping, found %s", what,
                 kind_name(r));
}

/* Read one key of a mapping whose keys are `names`: *idx gets its index.
 * Unknown and repeated keys are errors.  Consumes the key. */
static int map_key(yreader *r, const char *what, const char *const *names,
                   size_t n_names, uint64_t *seen, size_t *idx) {
  if (r->ev.type != YAML_SCALAR_EVENT)
    return fail_at(r, here(r), "keys of %s must be scalars, found %s", what,
                   kind_name(r));
  for (size_t i = 0; i < n_names; i++) {
    if (strlen(names[i]) != scalar_len(r) ||
        memcmp(names[i], scalar_text(r), scalar_len(r)) != 0)
      continue;
    if (*seen >> i & 1)
      return fail_at(r, here(r), "duplicated key '%s' in %s", names[i], what);
    *seen |= 1ull << i;
    *idx = i;
    return next(r);
  }
  return fail_at(r, here(r), "unknown key '%.64s' in %s", scalar_text(r), what);
}

/* Check that every key in `names` selected by `required` was seen. */
static int check_required(yreader *r, yaml_mark_t m, const char *what,
                          const char *const *names, uint64_t required,
                          uint64_t seen) {
  for (size_t i = 0; i < 64; i++)
    if ((required & ~seen) >> i & 1)
      return fail_at(r, m, "%s has no '%s'", what, names[i]);
  return 0;
}

static int expect_scalar(yreader *r, const char *what) {
  if (r->ev.type == YAML_SCALAR_EVENT) return 0;
  return fail_at(r, here(r), "%s must be a scalar, found %s", what,
                 kind_name(r));
}

static int read_guid(yreader *r, const char *what, uint64_t *out) {
  if (expect_scalar(r, what)) return -1;
  const char *why = mp_yaml_guid(scalar_text(r), scalar_len(r), out);
  if (why)
    return fail_at(r, here(r), "%s '%.64s': %s", what, scalar_text(r), why);
  return next(r);
}

static int read_uint(yreader *r, const char *what, uint64_t max,
                     uint64_t *out) {
  if (expect_scalar(r, what)) return -1;
  if (mp_yaml_uint(scalar_text(r), scalar_len(r), out) != 0)
    return fail_at(r, here(r), "%s '%.64s' is not a valid unsigned number",
                   what, scalar_text(r));
  if (*out > max)
    return fail_at(r, here(r), "%s %s is out of range (max %llu)", what,
                   scalar_text(r), (unsigned long long)max);
  return next(r);
}

static int read_bool(yreader *r, const char *what, int *out) {
  if (expect_scalar(r, what)) return -1;
  if (mp_yaml_bool(scalar_text(r), scalar_len(r), out) != 0)
    return fail_at(r, here(r), "%s '%.64s' is not a boolean (true/false)",
                   what, scalar_text(r));
  return next(r);
}

/* ---- frames and stacks --------------------------------------------------- */

static int read_frame(yreader *r) {
  static const char *const keys[] = {"Function", "LineOffset", "Column",
                                     "IsInlineFrame"};
  yaml_mark_t start = here(r);
  uint64_t seen = 0, line = 0, col = 0;
  mp_frame f = {0, 0, 0, 0};
  int empty, inl = 0;
  if (begin_map(r, "a frame", 0, &empty)) return -1;
  while (r->ev.type != YAML_MAPPING_END_EVENT) {
    size_t k = 0;
    if (map_key(r, "a frame", keys, 4, &seen, &k)) return -1;
    int rc = k == 0   ? read_guid(r, "Function", &f.guid)
             : k == 1 ? read_uint(r, "LineOffset", UINT32_MAX, &line)
             : k == 2 ? read_uint(r, "Column", UINT32_MAX, &col)
                      : read_bool(r, "IsInlineFrame", &inl);
    if (rc) return -1;
  }
  if (next(r) || check_required(r, start, "a frame", keys, 0xf, seen))
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
  if (begin_seq(r, what, &empty)) return -1;
  while (!empty && r->ev.type != YAML_SEQUENCE_END_EVENT)
    if (read_frame(r)) return -1;
  if (!empty && next(r)) return -1;
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
  if (begin_map(r, "MemInfoBlock", 0, &empty)) return -1;
  while (r->ev.type != YAML_MAPPING_END_EVENT) {
    size_t k = 0;
    uint64_t v;
    if (map_key(r, "MemInfoBlock", mib_names, N_MIB_NAMES, &seen, &k))
      return -1;
    yaml_mark_t at = here(r);
    if (read_uint(r, mib_names[k], UINT64_MAX, &v)) return -1;
    if (mib_tags[k] == MPF_MIB_AccessHistogramSize &&
        (uint32_t)v > MP_HIST_MAX_ENTRIES)
      return fail_at(r, at, "AccessHistogramSize %u is larger than %u",
                     (uint32_t)v, MP_HIST_MAX_ENTRIES);
    mib_set(m, mib_tags[k], v);
  }
  r->p->mib_fields = MP_MIB_ALL_FIELDS; /* missing fields are 0, as LLVM's */
  return next(r);
}

/* ---- sites and records ---------------------------------------------------- */

static int read_alloc_site(yreader *r) {
  static const char *const keys[] = {"Callstack", "MemInfoBlock"};
  yaml_mark_t start = here(r);
  pending_alloc a;
  uint64_t seen = 0;
  int empty;
  memset(&a, 0, sizeof a);
  if (begin_map(r, "an alloc site", 0, &empty)) return -1;
  while (r->ev.type != YAML_MAPPING_END_EVENT) {
    size_t k = 0;
    if (map_key(r, "an alloc site", keys, 2, &seen, &k)) return -1;
    if (k == 0 ? read_stack(r, "Callstack", &a.stack) : read_mib(r, &a.mib))
      return -1;
  }
  if (next(r) || check_required(r, start, "an alloc site", keys, 3, seen))
    return -1;
  MP_VEC_RESERVE(r->allocs, r->cap_allocs, r->n_allocs + 1);
  r->allocs[r->n_allocs++] = a;
  return 0;
}

static int read_callees(yreader *r, pending_call *c) {
  int empty;
  c->callee_off = r->n_callees;
  if (begin_seq(r, "CalleeGuids", &empty)) return -1;
  while (!empty && r->ev.type != YAML_SEQUENCE_END_EVENT) {
    MP_VEC_RESERVE(r->callees, r->cap_callees, r->n_callees + 1);
    if (read_guid(r, "a callee GUID", &r->callees[r->n_callees])) return -1;
    r->n_callees++;
  }
  c->n_callees = (uint32_t)(r->n_callees - c->callee_off);
  return empty ? 0 : next(r);
}

static int read_call_site(yreader *r) {
  static const char *const keys[] = {"Frames", "CalleeGuids"};
  yaml_mark_t start = here(r);
  pending_call c = {0, r->n_callees, 0};
  uint64_t seen = 0;
  int empty;
  if (begin_map(r, "a call site", 0, &empty)) return -1;
  while (r->ev.type != YAML_MAPPING_END_EVENT) {
    size_t k = 0;
    if (map_key(r, "a call site", keys, 2, &seen, &k)) return -1;
    if (k == 0 ? read_stack(r, "Frames", &c.stack) : read_callees(r, &c))
      return -1;
  }
  if (next(r) || check_required(r, start, "a call site", keys, 1, seen))
    return -1;
  MP_VEC_RESERVE(r->calls, r->cap_calls, r->n_calls + 1);
  r->calls[r->n_calls++] = c;
  return 0;
}

static int read_site_list(yreader *r, const char *what,
                          int (*read_one)(yreader *)) {
  int empty;
  if (begin_seq(r, what, &empty)) return -1;
  if (empty) return 0;
  while (r->ev.type != YAML_SEQUENCE_END_EVENT)
    if (read_one(r)) return -1;
  return next(r);
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
  yaml_mark_t start = here(r);
  uint64_t seen = 0, guid = 0;
  int empty;
  r->n_allocs = r->n_calls = r->n_callees = 0;
  if (begin_map(r, "a heap profile record", 0, &empty)) return -1;
  while (r->ev.type != YAML_MAPPING_END_EVENT) {
    size_t k = 0;
    if (map_key(r, "a heap profile record", keys, 3, &seen, &k)) return -1;
    int rc = k == 0   ? read_guid(r, "GUID", &guid)
             : k == 1 ? read_site_list(r, "AllocSites", read_alloc_site)
                      : read_site_list(r, "CallSites", read_call_site);
    if (rc) return -1;
  }
  if (next(r) ||
      check_required(r, start, "a heap profile record", keys, 1, seen))
    return -1;
  commit_record(r, guid);
  return 0;
}

/* ---- document ------------------------------------------------------------- */

/* DataAccessProfiles (LLVM 22, static data partitioning): into the model
 * (data_access.h) in LLVM's order: the records (each symbol before its
 * file names), then the known-cold symbols and hashes, whatever the order
 * of the keys. */

/* A scalar that becomes a string of the indexed file's name table, which
 * separates names with \x01 and whose strings we keep NUL-terminated. */
static int read_name(yreader *r, const char *what, uint32_t *id) {
  if (expect_scalar(r, what)) return -1;
  if (memchr(scalar_text(r), 1, scalar_len(r)) ||
      memchr(scalar_text(r), 0, scalar_len(r)))
    return fail_at(r, here(r), "%s contains a byte 0x00 or 0x01", what);
  *id = mp_intern_string(r->p, scalar_text(r), scalar_len(r));
  return next(r);
}

/* One of a record's Locations, kept in r->locs until the record exists. */
static int read_location(yreader *r) {
  static const char *const keys[] = {"FileName", "Line"};
  uint64_t seen = 0, line = 0;
  uint32_t file = mp_intern_string(r->p, "", 0);
  int empty;
  if (begin_map(r, "a location", 0, &empty)) return -1;
  while (r->ev.type != YAML_MAPPING_END_EVENT) {
    size_t k = 0;
    if (map_key(r, "a location", keys, 2, &seen, &k)) return -1;
    if (k == 0 ? read_name(r, "FileName", &file)
               : read_uint(r, "Line", UINT32_MAX, &line))
      return -1;
  }
  MP_VEC_RESERVE(r->locs, r->cap_locs, r->n_locs + 1);
  r->locs[r->n_locs++] = (pending_loc){file, (uint32_t)line};
  return next(r);
}

static int read_sampled(yreader *r) {
  static const char *const keys[] = {"Symbol", "Hash", "AccessCount",
                                     "Locations"};
  yaml_mark_t start = here(r);
  uint64_t seen = 0, hash = 0, count = 0;
  uint32_t sym = MP_NO_STRING;
  int empty;
  r->n_locs = 0;
  if (begin_map(r, "a data-access record", 0, &empty)) return -1;
  while (r->ev.type != YAML_MAPPING_END_EVENT) {
    size_t k = 0;
    if (map_key(r, "a data-access record", keys, 4, &seen, &k)) return -1;
    int rc = k == 0   ? read_name(r, "Symbol", &sym)
             : k == 1 ? read_uint(r, "Hash", UINT64_MAX, &hash)
             : k == 2 ? read_uint(r, "AccessCount", UINT64_MAX, &count)
                      : read_site_list(r, "Locations", read_location);
    if (rc) return -1;
  }
  if (next(r) ||
      check_required(r, start, "a data-access record", keys, 4, seen))
    return -1;
  /* LLVM: a record with a non-empty Symbol is a symbol's, else a string
   * literal's (Hash, 0 when missing) */
  const char *name = sym == MP_NO_STRING ? "" : mp_string(r->p, sym);
  mp_err e;
  long rec = *name ? mp_dap_add_symbol(r->p, name, strlen(name), count, &e)
                   : mp_dap_add_literal(r->p, hash, count, &e);
  if (rec < 0) return fail_at(r, start, "%s", e.msg);
  for (size_t i = 0; i < r->n_locs; i++) {
    const char *f = mp_string(r->p, r->locs[i].file);
    mp_dap_add_loc(r->p, (size_t)rec, f, strlen(f), r->locs[i].line);
  }
  return 0;
}

static int read_cold_symbol(yreader *r) {
  uint32_t id;
  if (read_name(r, "a known-cold symbol", &id)) return -1;
  MP_VEC_RESERVE(r->cold, r->cap_cold, r->n_cold + 1);
  r->cold[r->n_cold++] = id;
  return 0;
}

static int read_cold_hash(yreader *r) {
  uint64_t h;
  if (read_uint(r, "a known-cold string hash", UINT64_MAX, &h)) return -1;
  mp_dap_add_cold_hash(r->p, h);
  return 0;
}

static int read_data_access(yreader *r) {
  static const char *const keys[] = {"SampledRecords", "KnownColdSymbols",
                                     "KnownColdStrHashes"};
  static int (*const read_one[])(yreader *) = {read_sampled, read_cold_symbol,
                                               read_cold_hash};
  yaml_mark_t start = here(r);
  uint64_t seen = 0;
  int empty;
  if (begin_map(r, "DataAccessProfiles", 1, &empty)) return -1;
  while (!empty && r->ev.type != YAML_MAPPING_END_EVENT) {
    size_t k = 0;
    if (map_key(r, "DataAccessProfiles", keys, 3, &seen, &k) ||
        read_site_list(r, keys[k], read_one[k]))
      return -1;
  }
  for (size_t i = 0; i < r->n_cold; i++) {
    const char *name = mp_string(r->p, r->cold[i]);
    mp_err e;
    if (mp_dap_add_cold_symbol(r->p, name, strlen(name), &e))
      return fail_at(r, start, "%s", e.msg);
  }
  return empty ? 0 : next(r);
}

static int read_root(yreader *r) {
  static const char *const keys[] = {"HeapProfileRecords",
                                     "DataAccessProfiles"};
  uint64_t seen = 0;
  int empty;
  if (begin_map(r, "the document", 0, &empty)) return -1;
  while (r->ev.type != YAML_MAPPING_END_EVENT) {
    size_t k = 0;
    if (map_key(r, "the document", keys, 2, &seen, &k)) return -1;
    int rc = k == 0 ? read_site_list(r, "HeapProfileRecords", read_record)
                    : read_data_access(r);
    if (rc) return -1;
  }
  return next(r); /* parses up to the document end, as LLVM does */
}

static int read_stream(yreader *r) {
  if (next(r)) return -1; /* STREAM-START */
  for (;;) {
    if (next(r)) return -1;
    if (r->ev.type == YAML_STREAM_END_EVENT) return 0; /* nothing but nulls */
    if (next(r)) return -1; /* past DOCUMENT-START */
    if (!is_empty_node(r)) return read_root(r);
    if (next(r)) return -1; /* now at DOCUMENT-END */
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
