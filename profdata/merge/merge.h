/* merge.h - the merge engine: every input file of a command (raw memory or
 * instrumentation profiles, indexed files, YAML), recognised by content,
 * read into one profile by a pipeline of up to three threads; and which
 * inputs are timelines (left out of the inputs) or may have one (their
 * stack ids are kept, for the report to join).
 *
 * Call sequence: mp_merge_drop_timelines (the inputs that are profiles),
 * mp_merge_timeline_inputs (which of those may have a timeline), then
 * mp_merge_read.  The result does not depend on how the pipeline ran: it
 * is the profile reading the inputs one by one in order gives.
 */
#ifndef PROFDATA_MERGE_H
#define PROFDATA_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "profdata/model/model.h"
#include "profdata/raw/raw.h"
#include "symbolizer/symbolizer.h"

/* The inputs of one command.  `weights` (one per input) scale the
 * instrumentation counts of that input. */
typedef struct mp_merge_inputs {
  const char *const *paths;
  const uint64_t *weights;
  size_t n;
  size_t n_binaries; /* --profiled-binary files given (raw.h) */
  mp_raw_leaf_probe probe; /* for the raw reader (raw.h); NULL: none */
  void *probe_ctx;
} mp_merge_inputs;

/* Per input, its raw stack ids and their model stacks
 * (mp_raw_stack_ids), for joining its timeline. */
typedef struct mp_input_ids {
  int wanted; /* a timeline may go with the input */
  int raw;    /* the input was a raw memory profile */
  uint64_t *ids;
  uint32_t *stacks;
  size_t n;
} mp_input_ids;

/* Read every input into a new profile (mp_profile_finish called).  `ids`
 * (NULL: not wanted) has one entry per input; those marked wanted get
 * their stack ids.  On error returns NULL with the failing input in
 * *failed and the reason in err. */
mp_profile *mp_merge_read(const mp_merge_inputs *in, msym_ctx *sym,
                          mp_input_ids *ids, const char **failed, mp_err *err);

/* The inputs that are profiles: a timeline or a roots file
 * ("memprof.profraw.*" names them too) is left out.  Returns `in->paths` itself when none was a
 * timeline, else a new array (free it) of *n_kept paths.  The timelines
 * whose raw profile is not among the inputs are put in *orphans (a new
 * array of *n_orphans paths, NULL when none), for the caller to name. */
const char **mp_merge_drop_timelines(const mp_merge_inputs *in, size_t *n_kept,
                                     const char ***orphans, size_t *n_orphans);

/* Which inputs may have a timeline: all when `given` (--timeline or --roots files
 * name them), else those with "<input>.timeline" or "<input>.roots"
 * beside them.  Returns a
 * new array of n + 1 entries, or NULL when no input may have one. */
mp_input_ids *mp_merge_timeline_inputs(const mp_merge_inputs *in, int given);
void mp_merge_ids_free(mp_input_ids *ids, size_t n);

/* Sizes of the inputs that are regular files: their sum and the largest. */
void mp_merge_input_sizes(const mp_merge_inputs *in, uint64_t *sum,
                          uint64_t *largest);

#endif
