/* model.h - the in-memory profile that every reader fills and every writer
 * walks.
 *
 * A profile is LLVM's IndexedMemProfData with everything interned:
 *   frames   (GUID, LineOffset, Column, IsInlineFrame) -> frame id
 *   stacks   leaf-first sequences of frame ids           -> stack id
 *   records  per function GUID, in insertion order: alloc sites (stack +
 *            MIB + optional access histogram) and call sites (stack +
 *            callee GUIDs).
 * Optional symbol information (function name, source file, line, column,
 * discriminator) hangs off frame ids for our symbolized section and for
 * `show --symbolized`.
 *
 * Merging is built in: adding an alloc site whose stack the record already
 * has merges the MIBs by LLVM's rules (mib_merge.h); adding a call site that
 * exists unions the callee GUIDs.  So "merge N inputs" is "read all N into
 * one profile", and the result does not depend on how inputs are grouped.
 *
 * Ids are dense and 0-based.  Errors: none here can fail except by running
 * out of memory, which is fatal (error.h).
 */
#ifndef PROFDATA_MODEL_H
#define PROFDATA_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "common/hashmap.h"
#include "include/internal/memprof_format.h"
#include "include/internal/mib_merge.h"

typedef struct mp_frame {
  uint64_t guid;
  uint32_t line_offset;
  uint32_t column;
  uint8_t is_inline;
} mp_frame;

typedef struct mp_frame_sym {
  uint32_t name; /* string id of the linkage name; MP_NO_STRING if unknown */
  uint32_t file; /* string id of the source path;  MP_NO_STRING if unknown */
  uint32_t line;
  uint32_t column;
  uint32_t discriminator;
} mp_frame_sym;

#define MP_NO_STRING UINT32_MAX
/* Largest AccessHistogramSize any reader accepts: one entry per 8 bytes of a
 * 128 MiB object.  Bigger values are refused rather than allocated. */
#define MP_HIST_MAX_ENTRIES (1u << 24)
#define MP_MIB_ALL_FIELDS (((1u << (MPF_MIB_NUM_FIELDS + 1)) - 1) & ~1u)

typedef struct mp_stack {
  uint32_t off; /* into mp_profile.stack_frames */
  uint32_t len;
} mp_stack;

/* The fields are laid out to fill three cache lines exactly, and record
 * segments start on a line (next_alloc in model.c): a merge of many inputs
 * touches each site once per input, in random order, so the lines a site
 * spans are what such a merge waits for. */
typedef struct mp_alloc_site {
  uint32_t stack;
  mpf_mib mib;     /* AccessHistogram (the pointer field) is always 0 */
  /* Merging across inputs (model_order.c): the input that merged last
   * (mp_profile.input), and while has_rep, the representative fields of
   * the earlier inputs; mib holds the last input's own. */
  uint32_t input;
  uint64_t *hist; /* mib.AccessHistogramSize entries, or NULL when only the
                     size is known (indexed input) */
  mpf_mib_rep rep;
  uint8_t has_rep;
  /* Allocated inside a library without debug information (raw inputs:
   * the leaf PC fell in no given binary; indexed ones: the symbolized
   * section flags the leaf frame), so the leaf frame is a call of that
   * library, not an allocation call (report_verdict.c). */
  uint8_t in_library;
} mp_alloc_site;
#define MP_ALLOC_SITE_ALIGN 64
_Static_assert(sizeof(mp_alloc_site) == 3 * MP_ALLOC_SITE_ALIGN,
               "an alloc site fills three cache lines");

typedef struct mp_call_site {
  uint32_t stack;
  uint32_t n_callees;
  uint64_t *callees; /* v4 CalleeGuids, deduplicated */
} mp_call_site;

typedef struct mp_record {
  uint64_t guid;
  /* Alloc sites in insertion order (mp_alloc_of), in segments of 4, 8,
   * 16, ... sites that never move: a record grows without copying its
   * sites (a merge of many contexts holds tens of MB of them), and each
   * segment is still read in order. */
  mp_alloc_site **alloc_seg;
  size_t n_allocs, n_alloc_seg, cap_alloc_seg;
  mp_call_site *calls;
  size_t n_calls, cap_calls;
} mp_record;

/* A set of sampling intervals: distinct, increasing. */
typedef struct mp_intervals {
  uint64_t *v;
  uint32_t n;
} mp_intervals;

/* A profiled program (mp_profile.programs). */
typedef struct mp_program {
  char *path;
  uint32_t inputs;
} mp_program;

/* Add R to the set (once). */
void mp_intervals_add(mp_intervals *s, uint64_t r);

typedef struct mp_profile {
  mp_frame *frames;
  mp_frame_sym *syms; /* parallel to frames */
  size_t n_frames, cap_frames;

  mp_stack *stacks;
  size_t n_stacks, cap_stacks;
  uint32_t *stack_frames;
  size_t n_stack_frames, cap_stack_frames;

  mp_record *records; /* insertion order */
  size_t n_records, cap_records;

  char *strings; /* NUL-terminated strings back to back */
  size_t n_strings_bytes, cap_strings_bytes;
  uint32_t *string_off;
  size_t n_strings, cap_strings;

  /* Bit (1u << tag) for every MIB field some input carried (raw and YAML:
   * all; indexed: its schema).  Writers of text show only
   * these, as llvm-profdata does; 0 means all. */
  uint32_t mib_fields;

  /* Inputs read so far (mp_profile_begin_input) and how many of them
   * brought alloc or call sites: with more than one, mp_profile_finish
   * puts everything in canonical order. */
  uint32_t input, inputs_with_sites, last_input_with_sites;

  mp_map frame_index, stack_index, record_index, site_index, string_index;

  /* The instrumentation (PGO) profile read alongside, or NULL: none was
   * read.  mp_profile_instr (profdata/instrprof/) creates it and sets how
   * mp_profile_free frees it: the model knows nothing else of it. */
  struct mp_instr *instr;
  void (*instr_free)(struct mp_instr *);

  /* The data-access profile, or NULL: no input had one.  mp_dap_get
   * (data_access.h) creates it and sets how mp_profile_free frees it. */
  struct mp_dap *dap;
  void (*dap_free)(struct mp_dap *);

  /* What the inputs say of how they were recorded (the runtime's note in
   * raw inputs, docs/raw-format.md section 7; the facts of our
   * symbolized section in indexed ones, docs/symbolized-section.md):
   * the distinct sampling intervals R of the inputs, increasing, 0 for an
   * input that recorded every allocation or says nothing (mp_intervals_add;
   * mp_max_interval gives the largest, 0: every count is exact), and
   * whether some input came from a program that no instrumented code ran
   * in (its access counts are absent). */
  mp_intervals intervals;
  int uninstrumented;

  /* The programs the raw inputs profiled (their note's first path: the
   * executable, docs/raw-format.md section 7), in the order first seen,
   * each with how many inputs came from it (mp_add_program); merge keeps
   * them in our symbolized section.  None for inputs without paths in
   * their note. */
  mp_program *programs;
  size_t n_programs;

  /* Temporary allocations (freed before their thread's next allocation,
   * from the runtime's note) per stack id, NULL when no input had any:
   * mp_add_temporaries, mp_temporaries.  Per stack, not per alloc site: a
   * context's sites in its inline frames share one count. */
  uint64_t *temporaries;
  size_t cap_temporaries;
} mp_profile;

void mp_add_temporaries(mp_profile *p, uint32_t stack, uint64_t n);
/* `inputs` more inputs from the program at path[0..len). */
void mp_add_program(mp_profile *p, const char *path, size_t len, uint32_t inputs);
static inline uint64_t mp_temporaries(const mp_profile *p, uint32_t stack) {
  return stack < p->cap_temporaries ? p->temporaries[stack] : 0;
}

/* The largest sampling interval of the inputs; 0: every count is exact. */
static inline uint64_t mp_max_interval(const mp_profile *p) {
  return p->intervals.n ? p->intervals.v[p->intervals.n - 1] : 0;
}

#define MP_ALLOC_SEG0_BITS 2 /* the first segment holds 4 sites */

/* Alloc site j of record r: segment k holds 4 << k sites, from 4 * (2^k - 1). */
static inline mp_alloc_site *mp_alloc_of(const mp_record *r, size_t j) {
  uint64_t u = (uint64_t)j + (1u << MP_ALLOC_SEG0_BITS);
  unsigned top = 63u - (unsigned)__builtin_clzll(u);
  return &r->alloc_seg[top - MP_ALLOC_SEG0_BITS][u - ((uint64_t)1 << top)];
}

mp_profile *mp_profile_new(void);
void mp_profile_free(mp_profile *p);

/* Hints: about `stacks` more stacks (of `frames` frames in all) and
 * `sites` more sites are coming.  The stack index is sized for `indexed`
 * of those stacks (sizing it touches it, while the room reserved for the
 * stacks is not touched until used). */
void mp_profile_reserve_stacks(mp_profile *p, size_t indexed, size_t stacks,
                               size_t frames);
void mp_profile_reserve_sites(mp_profile *p, size_t sites);

uint32_t mp_intern_frame(mp_profile *p, const mp_frame *f);
/* Find a frame without adding it; returns UINT32_MAX if absent. */
uint32_t mp_find_frame(const mp_profile *p, const mp_frame *f);
uint32_t mp_intern_stack(mp_profile *p, const uint32_t *frames, uint32_t n);
/* The same in two steps, so that a batch of stacks can have its table
 * slots fetched before they are interned in order: the hash, a prefetch,
 * and the interning with that hash. */
uint64_t mp_stack_hash(const uint32_t *frames, uint32_t n);
void mp_prefetch_stack(const mp_profile *p, uint64_t hash);
uint32_t mp_intern_stack_hashed(mp_profile *p, const uint32_t *frames,
                                uint32_t n, uint64_t hash);

uint32_t mp_intern_string(mp_profile *p, const char *s, size_t len);
const char *mp_string(const mp_profile *p, uint32_t id); /* NULL for none */

/* Attach symbol info to a frame; of two different ones the smaller (by
 * name, file, line, column, discriminator) is kept, so that which input
 * came first does not matter. */
void mp_set_frame_sym(mp_profile *p, uint32_t frame, const mp_frame_sym *s);

static inline const uint32_t *mp_stack_frames(const mp_profile *p,
                                              uint32_t stack) {
  return p->stack_frames + p->stacks[stack].off;
}

/* The record for `guid`, created (empty) at the end if missing. */
mp_record *mp_record_get(mp_profile *p, uint64_t guid);
/* Lookup only; NULL if absent. */
mp_record *mp_record_find(const mp_profile *p, uint64_t guid);

/* Add (or merge into) the alloc site of `stack` in record `guid`.
 * `hist` has mib->AccessHistogramSize entries, or is NULL when only the
 * size is known; it is copied. */
void mp_add_alloc_site(mp_profile *p, uint64_t guid, uint32_t stack,
                       const mpf_mib *mib, const uint64_t *hist);
/* mp_add_alloc_site that also says where the site lives (record index,
 * index in its allocs), so that later MIBs of the same context can be
 * merged with mp_merge_alloc_at without looking the site up again. */
void mp_add_alloc_site_at(mp_profile *p, uint64_t guid, uint32_t stack,
                          const mpf_mib *mib, const uint64_t *hist,
                          uint32_t *rec, uint32_t *idx);
void mp_merge_alloc_at(mp_profile *p, uint32_t rec, uint32_t idx,
                       const mpf_mib *mib, const uint64_t *hist);
/* Add (or union into) the call site of `stack` in record `guid`. */
void mp_add_call_site(mp_profile *p, uint64_t guid, uint32_t stack,
                      const uint64_t *callees, uint32_t n_callees);

/* Merging inputs.  Within one input, MIBs of the same context merge by
 * LLVM's rules in the input's order (so a single raw input gives exactly
 * llvm-profdata's file); across inputs they merge by rules that do not
 * depend on the inputs' order (mpf_mib_merge_across).  Every reader calls
 * mp_profile_begin_input before it adds the sites of an input, and
 * mp_profile_finish is called once all inputs are in, before any writer
 * (model_order.c): it settles the representative fields, and when more
 * than one input brought sites it sorts records by GUID, sites by their
 * stacks' frames and callee lists by GUID, so that the output is the same
 * bytes for any order and grouping of the inputs. */
void mp_profile_begin_input(mp_profile *p);
void mp_profile_finish(mp_profile *p);
/* Two stacks in the order of their frames' contents (GUID, line offset,
 * column, inline flag; leaf first), then of their lengths: the same order
 * in every profile that has them (model_order.c). */
int mp_stack_cmp(const mp_profile *p, uint32_t a, uint32_t b);
/* Fold the site's last input into its representative fields (model.c). */
void mp_site_settle_rep(mp_alloc_site *a);
/* Rebuild the record and site indexes after records or sites moved
 * (model.c). */
void mp_profile_reindex(mp_profile *p);

/* Number of distinct alloc contexts (record, stack) over the profile. */
size_t mp_profile_num_contexts(const mp_profile *p);

#endif
