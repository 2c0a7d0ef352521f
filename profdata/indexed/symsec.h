/* symsec.h - our symbolized section (docs/symbolized-section.md): per
 * written frame its function name, source file, line, column and
 * discriminator, whether it is a call into a library that allocated
 * (the model's in_library, on the context's leaf frame), how the
 * inputs were recorded (sampling intervals, not instrumented), and per
 * written call stack its count of temporary allocations.  Stored after
 * LLVM's sections and found through a 40-byte trailer at the very end of
 * the file, so LLVM's readers never see it.
 */
#ifndef PROFDATA_SYMSEC_H
#define PROFDATA_SYMSEC_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/io.h"
#include "profdata/model/model.h"

#define MP_SYMSEC_MAGIC "MPSYMSEC"
#define MP_SYMSEC_MAJOR 1u
/* Minor versions: 3 with programs, 2 with temporaries, 1 with facts only,
 * 0 otherwise. */
#define MP_SYMSEC_MINOR_FACTS 1u
#define MP_SYMSEC_MINOR_TEMPORARIES 2u
#define MP_SYMSEC_MINOR_PROGRAMS 3u
#define MP_SYMSEC_TRAILER_SIZE 40u

/* What an entry's frame key means. */
enum {
  MP_SYMSEC_KEY_LINEAR = 0,   /* index in the memprof v3/v4 frame array */
  MP_SYMSEC_KEY_FRAME_ID = 1, /* FrameId of the memprof v2 frame table */
};

/* Facts flags (header offset 64, version 1.1). */
#define MP_SYMSEC_FACT_UNINSTRUMENTED 1u /* an input was not instrumented */

/* Entry flags (entry offset 28). */
#define MP_SYMSEC_ENTRY_LIBRARY_CALL 1u /* the leaf frame of a context whose
                                           block a library allocated: the
                                           call there is not an allocation */

/* 1 if the profile has facts to record (sampled or not instrumented). */
int mp_symsec_has_facts(const mp_profile *p);

/* What the memprof section wrote, under which keys (key_kind): the model
 * frames and call stacks it has, with the key of each. */
typedef struct mp_symsec_keys {
  const uint32_t *frames;     /* model frame ids */
  const uint64_t *frame_keys; /* parallel to frames */
  size_t n_frames;
  const uint32_t *stacks;     /* model stack ids */
  const uint64_t *stack_keys; /* parallel to stacks */
  size_t n_stacks;
  unsigned key_kind;
} mp_symsec_keys;

/* 1 if some written call stack has temporary allocations to record. */
int mp_symsec_has_temporaries(const mp_profile *p, const mp_symsec_keys *k);
/* 1 if the profile names the programs its inputs came from. */
int mp_symsec_has_programs(const mp_profile *p);

/* Pad `out` to 8 and append the section (one entry for each written
 * frame that has symbol info, one temporaries entry for each written
 * stack that has temporary allocations), then the trailer. */
void mp_symsec_write(mp_buf *out, const mp_profile *p, const mp_symsec_keys *k);

typedef struct mp_symsec_entry {
  uint64_t key;
  const char *name; /* NULL if unknown; point into mp_symsec storage */
  const char *file;
  uint32_t line, column, discriminator;
  uint32_t flags; /* MP_SYMSEC_ENTRY_* */
} mp_symsec_entry;

typedef struct mp_symsec {
  unsigned key_kind;
  mp_symsec_entry *entries;
  size_t n_entries;
  char *storage; /* every name and path, NUL-terminated */
  uint64_t llvm_end; /* file offset where the section starts */
  /* the facts (1.1): has_facts 0 when the section has none */
  int has_facts, uninstrumented;
  uint64_t *intervals; /* distinct sampling intervals, increasing */
  uint32_t n_intervals;
  /* the temporary allocations (1.2): per call-stack key (key_kind),
   * increasing, its count (> 0) */
  uint64_t *temp_keys, *temp_counts;
  uint32_t n_temporaries;
  /* the programs the inputs profiled (1.3), by path */
  mp_program *programs;
  uint32_t n_programs;
} mp_symsec;

/* 1 if the file ends with our trailer magic. */
int mp_symsec_present(const void *data, size_t len);

/* Parse and validate the section found through the trailer (checksum,
 * version, every offset and id).  Returns -1 with a message on damage or
 * an unknown major version. */
int mp_symsec_read(const void *data, size_t len, mp_symsec *s, mp_err *err);
void mp_symsec_free(mp_symsec *s);

#endif
