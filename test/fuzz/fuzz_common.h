/* fuzz_common.h - what every profdata fuzz target does after a parser
 * accepted its input: write the profile in both output formats and read
 * each back (the indexed one keeps the instrumentation records too).  Whatever we accept we must be able to write, and whatever we
 * write we must be able to read; a failure aborts, so libFuzzer keeps the
 * input as a crash.
 */
#ifndef MEMPROF_FUZZ_COMMON_H
#define MEMPROF_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>

#include "common/error.h"
#include "profdata/indexed/indexed.h"
#include "profdata/instrprof/instrprof.h"
#include "common/io.h"
#include "profdata/model/model.h"
#include "profdata/yaml/yaml_io.h"

static void fuzz_die(const char *what, const mp_err *e) {
  fprintf(stderr, "fuzz invariant broken: %s: %s\n", what, e ? e->msg : "");
  abort();
}

/* A failing parser must say why. */
static void fuzz_check_refusal(const mp_err *e) {
  if (!e->msg[0]) fuzz_die("parser failed without a message", e);
}

static void fuzz_roundtrip(const mp_profile *p) {
  mp_index_opts o = MP_INDEX_OPTS_DEFAULT;
  mp_buf b = {0};
  mp_err e = {{0}};
  if (mp_write_indexed(p, &o, &b, &e) != 0)
    fuzz_die("cannot write an accepted profile as indexed", &e);
  mp_profile *q = mp_profile_new();
  if (mp_read_indexed(q, b.data, b.len, &e) != 0)
    fuzz_die("cannot read back our own indexed output", &e);
  if (mp_profile_num_contexts(q) != mp_profile_num_contexts(p))
    fuzz_die("indexed round trip changed the number of contexts", NULL);
  size_t recs = p->instr ? p->instr->n_recs : 0;
  if ((q->instr ? q->instr->n_recs : 0) != recs)
    fuzz_die("indexed round trip changed the number of instrprof records",
             NULL);
  mp_profile_free(q);
  mp_buf_free(&b);

  mp_write_yaml(p, 1, &b);
  q = mp_profile_new();
  if (mp_read_yaml(q, b.data, b.len, &e) != 0)
    fuzz_die("cannot read back our own YAML output", &e);
  if (mp_profile_num_contexts(q) != mp_profile_num_contexts(p))
    fuzz_die("YAML round trip changed the number of contexts", NULL);
  mp_profile_free(q);
  mp_buf_free(&b);
}

/* After a reader returned rc on p: the round trip when it accepted the
 * input, the refusal check when not; p is freed. */
static void fuzz_check_read(mp_profile *p, int rc, const mp_err *e) {
  if (rc == 0)
    fuzz_roundtrip(p);
  else
    fuzz_check_refusal(e);
  mp_profile_free(p);
}

#endif
