/* main.c - memprof-profdata: `merge`, `show` and `report`.
 *
 * Parsing lives in cli.c; this file does the I/O: open the binaries, read
 * every input (raw memory or instrumentation, indexed or YAML, detected by
 * content) into one profile, then write it.  Any error is reported as "memprof-profdata: error: WHAT:
 * why" with exit status 1, and nothing is written.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "common/error.h"
#include "heap.h"
#include "common/helper.h"
#include "profdata/indexed/indexed.h"
#include "profdata/instrprof/instrprof.h"
#include "common/io.h"
#include "profdata/model/model.h"
#include "profdata/raw/raw.h"
#include "profdata/report/report.h"
#include "symbolizer/symbolizer.h"
#include "profdata/timeline/timeline.h"
#include "profdata/yaml/yaml_io.h"

#ifndef MEMPROF_VERSION_STRING
#define MEMPROF_VERSION_STRING "0.1.0"
#endif

static const char *tool = "memprof-profdata";

static int report(const char *what, const char *msg) {
  if (what)
    fprintf(stderr, "%s: error: %s: %s\n", tool, what, msg);
  else
    fprintf(stderr, "%s: error: %s\n", tool, msg);
  return 1;
}

/* Split DWARF units whose .dwo was not found lose their frames (LLVM
 * warns and goes on too): say so, once per binary. */
static void warn_missing_split(msym_ctx *sym) {
  for (size_t i = 0; i < msym_num_modules(sym); i++) {
    const msym_module *m = msym_module_at(sym, i);
    char why[400];
    size_t n = msym_missing_split_message(sym, m, why, sizeof why);
    if (n)
      fprintf(stderr,
              "%s: warning: %s: %s: allocations in %s code have no frames and "
              "are left out\n",
              tool, m->path, why, n == 1 ? "its" : "their");
  }
}

static int usage_error(const cli_opts *o, const char *msg) {
  report(NULL, msg);
  const char *cmd = cli_cmd_name(o->cmd);
  fprintf(stderr, "Try '%s%s%s --help' for more information.\n", tool,
          cmd ? " " : "", cmd ? cmd : "");
  return 1;
}

static msym_ctx *open_binaries(const cli_opts *o) {
  msym_ctx *c = msym_new();
  msym_set_raw_dwarf(c, !o->libdw_only);
  mp_err e;
  for (size_t i = 0; i < o->n_debug_dirs; i++)
    if (msym_add_debug_dir(c, o->debug_dirs[i], &e) != 0) {
      report(o->debug_dirs[i], e.msg);
      msym_free(c);
      return NULL;
    }
  for (size_t i = 0; i < o->n_binaries; i++)
    if (msym_add_binary(c, o->binaries[i], &e) != 0) {
      report(o->binaries[i], e.msg);
      msym_free(c);
      return NULL;
    }
  return c;
}

/* A raw input's stack ids and their model stacks (mp_raw_stack_ids), for
 * joining its timeline. */
typedef struct raw_ids {
  int wanted; /* a timeline may go with the input */
  int raw;
  uint64_t *ids;
  uint32_t *stacks;
  size_t n;
} raw_ids;

/* One input, opened and (for a raw profile) validated and keyed ahead of
 * being added to the profile. */
typedef struct input {
  const char *path;
  mp_raw_reader *raw; /* shared; preparing only reads its binaries */
  uint64_t weight; /* of its instrumentation counts */
  mp_file f;
  int opened;
  enum { IN_RAW, IN_INDEXED, IN_YAML, IN_INSTR_RAW } kind;
  mp_raw_file *prepared;
  raw_ids *ids; /* where its stack ids go, or NULL: not wanted */
  int rc;
  mp_err err;
} input;

static void prepare_input(input *in) {
  in->rc = mp_file_open(&in->f, in->path, &in->err);
  if (in->rc) return;
  in->opened = 1;
  const void *d = in->f.data;
  size_t n = in->f.size;
  if (mp_is_raw(d, n)) {
    in->kind = IN_RAW;
    in->rc = mp_raw_prepare(in->raw, in->path, d, n, &in->prepared, &in->err);
  } else if (mp_is_indexed(d, n)) {
    in->kind = IN_INDEXED;
  } else if (mp_is_yaml(d, n)) {
    in->kind = IN_YAML;
  } else if (mp_is_instr_raw(d, n)) {
    in->kind = IN_INSTR_RAW;
  } else {
    in->rc = mp_fail(&in->err, "not a profile (neither a raw memory or "
                               "instrumentation profile, an indexed profile "
                               "nor YAML starting with '---')");
  }
}

static void close_input(input *in);

/* What the second thread does for the next input: first release the
 * input added before the current one (unmapping a file of some MB takes
 * the kernel a while), then prepare the next. */
typedef struct prep_job {
  input *next;
  input done;
  int finished; /* set last, for start_mibs */
} prep_job;

static void *prepare_thread(void *arg) {
  prep_job *j = arg;
  close_input(&j->done);
  prepare_input(j->next);
  __atomic_store_n(&j->finished, 1, __ATOMIC_RELEASE);
  return NULL;
}

static void close_input(input *in) {
  mp_raw_file_free(in->prepared);
  if (in->opened) mp_file_close(&in->f);
  in->prepared = NULL;
  in->opened = 0;
}

/* The MIBs of the raw input whose stacks were added last, being added on
 * a thread of their own (mp_raw_add_mibs) while the next input's stacks
 * are added. */
typedef struct mib_stage {
  pthread_t t;
  input *in; /* NULL: none running */
} mib_stage;

static void *add_mibs_thread(void *arg) {
  input *in = arg;
  mp_raw_add_mibs(in->raw, in->prepared);
  return NULL;
}

static void finish_mibs(mib_stage *m) {
  if (m->in) pthread_join(m->t, NULL);
  m->in = NULL;
}

/* On a thread of its own only while inputs bring many new stacks: then
 * adding the stacks (symbolizing, interning) is most of the work and the
 * MIBs are worth moving off.  A file of known stacks is lookups here and
 * merges there over the same cache entries, which two cores only fetch
 * twice.  `inline_mibs`: add them here anyway (see add_input). */
static void start_mibs(mib_stage *m, input *in, int inline_mibs) {
  if (!inline_mibs && mp_raw_mostly_new(in->prepared) &&
      mp_helper_start(&m->t, add_mibs_thread, in) == 0) {
    m->in = in;
  } else {
    mp_raw_add_mibs(in->raw, in->prepared);
  }
}

/* Input i: a raw input's stacks, while the MIBs of input i - 1 finish,
 * then its own MIBs are started; any other input whole, once the profile
 * is quiet (its reader touches all of it).  The MIBs stay on this thread
 * when it would only wait next: for the last input, and on two CPUs while
 * the next input is still being prepared (`prep`, NULL if nothing is):
 * a MIB thread would share the other CPU with that preparation and this
 * thread would wait for both. */
static int add_input(mp_profile *p, input *in, mib_stage *m, int last,
                     const prep_job *prep) {
  if (in->rc == 0 && in->kind == IN_RAW) {
    int rc = mp_raw_add_stacks(in->raw, in->prepared, &in->err);
    if (rc == 0 && in->ids) in->ids->raw = 1;
    if (rc == 0 && in->ids && in->ids->wanted) {
      mp_raw_stack_ids(in->raw, in->prepared, &in->ids->ids, &in->ids->stacks,
                       &in->ids->n);
    }
    finish_mibs(m);
    int prep_busy =
        prep && !__atomic_load_n(&prep->finished, __ATOMIC_ACQUIRE);
    if (rc == 0)
      start_mibs(m, in, last || (prep_busy && mp_helper_cpus() <= 2));
    return rc;
  }
  finish_mibs(m);
  if (in->rc) return in->rc;
  const unsigned char *d = in->f.data;
  size_t n = in->f.size;
  switch (in->kind) {
  case IN_INDEXED:
    return mp_read_indexed_input(p, d, n, in->path, in->weight, &in->err);
  case IN_INSTR_RAW:
    return mp_read_instr_raw(mp_profile_instr(p), in->path, d, n, in->weight,
                             &in->err);
  default: return mp_read_yaml(p, d, n, &in->err);
  }
}

/* A pipeline of three inputs on up to three threads: input i+1 is opened,
 * validated and keyed (and input i-2 released) on one while the stacks of
 * input i are added on this one and the MIBs of input i-1 on a third (see
 * add_input and start_mibs for when); the parts take comparable time.
 * Each step takes the inputs in order, so the result is the same as
 * reading them one by one.  `ids` (NULL: not wanted) gets each raw
 * input's stack ids, per input. */
static mp_profile *read_inputs(const cli_opts *o, msym_ctx *sym, raw_ids *ids) {
  mp_profile *p = mp_profile_new();
  mp_raw_reader *raw = mp_raw_reader_new(p, sym);
  mp_raw_reader_expect(raw, o->n_inputs);
  mp_raw_reader_given(raw, o->n_binaries);
  input in[3];
  memset(in, 0, sizeof in);
  mib_stage mibs = {0};
  int failed = 0;
  if (o->n_inputs) {
    in[0].path = o->inputs[0];
    in[0].weight = o->weights[0];
    in[0].raw = raw;
    in[0].ids = ids;
    prepare_input(&in[0]);
  }
  for (size_t i = 0; i < o->n_inputs && !failed; i++) {
    input *cur = &in[i % 3], *next = &in[(i + 1) % 3];
    pthread_t t;
    int threaded = 0, more = i + 1 < o->n_inputs;
    prep_job job = {next, *next, 0}; /* next's slot holds input i - 2 */
    memset(next, 0, sizeof *next);
    if (more) {
      next->path = o->inputs[i + 1];
      next->weight = o->weights[i + 1];
      next->raw = raw;
      next->ids = ids ? &ids[i + 1] : NULL;
      threaded = mp_helper_start(&t, prepare_thread, &job) == 0;
    }
    if (!threaded) close_input(&job.done);
    if (add_input(p, cur, &mibs, !more, threaded ? &job : NULL) != 0) {
      report(cur->path, cur->err.msg);
      failed = 1;
    }
    if (threaded) pthread_join(t, NULL);
    if (!failed && more && !threaded) prepare_input(next);
  }
  finish_mibs(&mibs);
  for (int k = 0; k < 3; k++) close_input(&in[k]);
  mp_raw_reader_free(raw);
  if (failed) {
    mp_profile_free(p);
    return NULL;
  }
  mp_profile_finish(p);
  return p;
}

static int write_output(const char *path, const mp_buf *b) {
  mp_err err;
  if (mp_write_atomic(path, b->data, b->len, &err) != 0)
    return report(path, err.msg);
  return 0;
}

static int run_merge(const cli_opts *o, const mp_profile *p) {
  mp_buf b = {0};
  mp_err err;
  const char *out = o->out ? o->out : MP_DEFAULT_MERGE_OUTPUT;
  int rc = mp_write_indexed(p, &o->index, &b, &err) != 0
               ? report(out, err.msg)
               : write_output(out, &b);
  mp_buf_free(&b);
  return rc;
}

/* `comments` go in after the document marker ("---", which LLVM's reader
 * wants first), so the output still reads back as a memory profile. */
static void insert_after_marker(mp_buf *b, const mp_buf *comments) {
  if (b->len < 4 || memcmp(b->data, "---", 3)) return;
  mp_buf t = {0};
  mp_buf_put(&t, "---\n", 4);
  mp_buf_put(&t, comments->data, comments->len);
  mp_buf_put(&t, b->data + 4, b->len - 4); /* after "---\n" or "--- " */
  mp_buf_free(b);
  *b = t;
}

/* The instrumentation summary, as YAML comments. */
static void add_instr_summary(const mp_profile *p, mp_buf *b) {
  if (!p->instr || !p->instr->has_kind) return;
  mp_buf t = {0};
  mp_instr_summary_text(p->instr, &t);
  insert_after_marker(b, &t);
  mp_buf_free(&t);
}

static void warn(const char *what, const char *msg) {
  fprintf(stderr, "%s: warning: %s: %s\n", tool, what, msg);
}

/* The timelines of the raw inputs joined to r (report_timeline.c): the
 * k-th --timeline for the k-th raw input, or "<raw input>.timeline" where
 * one exists.  One given explicitly that cannot be read, was written for
 * another raw profile (its size or its stack ids differ) is an error
 * (returns 1); one found beside its input is left out with a
 * warning, so the raw profile still gets its report. */
static int attach_timelines(const cli_opts *o, rpt *r, const raw_ids *ids) {
  size_t n_raw = 0, k = 0;
  for (size_t i = 0; i < o->n_inputs; i++) n_raw += ids[i].raw;
  if (o->n_timelines && o->n_timelines != n_raw) {
    char m[200];
    snprintf(m, sizeof m,
             "%zu --timeline file%s for %zu raw input%s (the k-th timeline "
             "goes with the k-th raw input; indexed and YAML inputs have "
             "none)",
             o->n_timelines, o->n_timelines == 1 ? "" : "s", n_raw,
             n_raw == 1 ? "" : "s");
    return report(NULL, m);
  }
  for (size_t i = 0; i < o->n_inputs; i++) {
    if (!ids[i].raw) continue;
    int given = o->n_timelines > 0;
    char *found = given ? NULL : mp_timeline_path_for(o->inputs[i]);
    if (found && access(found, F_OK) != 0) {
      free(found);
      continue;
    }
    const char *path = given ? o->timelines[k++] : found;
    rpt_tl_input in = {path, o->inputs[i], {0}, ids[i].ids, ids[i].stacks,
                       ids[i].n};
    mp_err e;
    struct stat st;
    int rc = mp_timeline_read(path, &in.tl, &e);
    if (rc == 0 && stat(o->inputs[i], &st) == 0)
      rc = mp_timeline_match(&in.tl, path, (uint64_t)st.st_size, &e);
    if (rc == 0 && rpt_tl_add(r, &in, &e) != 0) {
      mp_err_prefix(&e, path);
      rc = -1;
    }
    if (rc != 0 && given) {
      report(NULL, e.msg);
      mp_timeline_free(&in.tl);
      return 1;
    }
    if (rc != 0) {
      warn(e.msg, "the report leaves the timeline out");
      mp_timeline_free(&in.tl);
    }
    free(found);
  }
  if (r->tl) r->tl->n_raw = n_raw;
  return 0;
}

static void note(const char *msg);

/* How the inputs were recorded (report_facts.c): for show, and for the
 * report formats that have no place to say it. */
static void note_facts(const mp_profile *p) {
  char msg[RPT_NOTE_SIZE];
  if (rpt_sampled_note(p, msg, sizeof msg)) note(msg);
  if (rpt_uninstrumented_note(p)) note(rpt_uninstrumented_note(p));
}

static int run_show(const cli_opts *o, const mp_profile *p, const raw_ids *ids) {
  note_facts(p);
  rpt *r = NULL;
  if (ids) {
    r = rpt_build(p, &o->report);
    if (attach_timelines(o, r, ids) != 0) {
      rpt_free(r);
      return 1;
    }
  }
  mp_buf b = {0};
  mp_write_yaml(p, o->symbolized, &b);
  add_instr_summary(p, &b);
  if (r && r->tl) {
    mp_buf t = {0};
    rpt_write_tl_summary(r, &t, "# ");
    rpt_write_tl_text(r, &t, "# ");
    insert_after_marker(&b, &t);
    mp_buf_free(&t);
  }
  int rc = write_output(o->out ? o->out : "-", &b);
  mp_buf_free(&b);
  rpt_free(r);
  return rc;
}

static void note(const char *msg) { fprintf(stderr, "%s: note: %s\n", tool, msg); }

/* The report of `p` (and of the --base profile) in the chosen format. */
static int run_report(const cli_opts *o, const mp_profile *p, msym_ctx *sym,
                      const raw_ids *ids) {
  const rpt_opts *ro = &o->report;
  rpt *r = rpt_build(p, ro);
  if (ids && attach_timelines(o, r, ids) != 0) {
    rpt_free(r);
    return 1;
  }
  mp_profile *bp = NULL;
  rpt *base = NULL;
  if (ro->base) {
    cli_opts bo = *o;
    const char *one[1] = {ro->base};
    bo.inputs = one;
    bo.n_inputs = 1;
    bp = read_inputs(&bo, sym, NULL);
    if (!bp) {
      rpt_free(r);
      return 1;
    }
    base = rpt_build(bp, ro);
    rpt_attach_base(r, base);
  }
  /* text and HTML say these in the report itself; how the profile was
   * recorded every format but folded says in its file too, and stderr
   * says it for a report written to a file */
  int says = ro->format == RPT_TEXT || ro->format == RPT_HTML;
  if (ro->format != RPT_TEXT) note_facts(p);
  if (!r->n_ctx && !says) note("the profile is empty: it has no allocation contexts");
  else if (r->n_ctx && !r->has_names && !says)
    note("the profile has no function names (llvm-profdata's indexed files "
         "and YAML carry none): functions are shown by GUID");
  if (r->sum.symtab_ctx && ro->format != RPT_TEXT) {
    char m[240];
    snprintf(m, sizeof m,
             "%" PRIu64 " of %" PRIu64 " contexts have frames named from ELF "
             "symbol tables (%" PRIu64 " frame%s in code without debug "
             "information: no file or line)",
             r->sum.symtab_ctx, r->sum.contexts, r->sum.symtab_frames,
             r->sum.symtab_frames == 1 ? "" : "s");
    note(m);
  }
  if (ro->format == RPT_DHAT && r->tl && r->tl->n_proc > 1)
    note("several processes' timelines: DHAT has one global peak, so tg, gb "
         "and gbk are left 0; eb and ebk are summed over the processes");
  mp_buf b = {0};
  mp_err err;
  int rc = 0;
  switch (ro->format) {
  case RPT_TEXT: rpt_write_text(r, &b); break;
  case RPT_HTML: rpt_write_html(r, &b); break;
  case RPT_PPROF: rc = rpt_write_pprof(r, &b, &err); break;
  case RPT_FOLDED: rpt_write_folded(r, &b); break;
  case RPT_SPEEDSCOPE: rpt_write_speedscope(r, &b); break;
  case RPT_DHAT: rpt_write_dhat(r, &b); break;
  }
  const char *out = o->out ? o->out : "-";
  rc = rc ? report(out, err.msg) : write_output(out, &b);
  mp_buf_free(&b);
  rpt_free(base);
  mp_profile_free(bp);
  rpt_free(r);
  return rc;
}

/* Which inputs may have a timeline (every one when --timeline is given,
 * else those with "<input>.timeline" beside them), or NULL: none.  Only
 * those keep their stack ids: a merge of many raw files would otherwise
 * hold every file's for nothing. */
static raw_ids *timeline_inputs(const cli_opts *o) {
  if (o->cmd == CLI_MERGE || o->no_timeline) return NULL;
  raw_ids *ids = mp_xcalloc(o->n_inputs + 1, sizeof *ids);
  int any = 0;
  for (size_t i = 0; i < o->n_inputs; i++) {
    char *t = o->n_timelines ? NULL : mp_timeline_path_for(o->inputs[i]);
    ids[i].wanted = !t || access(t, F_OK) == 0;
    any |= ids[i].wanted;
    free(t);
  }
  if (!any) {
    free(ids);
    return NULL;
  }
  return ids;
}

/* Inputs totalling less than this are read and merged on one thread:
 * starting a helper and waiting for it at the join costs more than the
 * work it takes over, and on a busy machine the helper waits for a CPU
 * while the main thread waits for it. */
#define HELPERS_FROM_BYTES (8u << 20)

static void input_sizes(const cli_opts *o, uint64_t *sum, uint64_t *largest) {
  struct stat st;
  *sum = *largest = 0;
  for (size_t i = 0; i < o->n_inputs; i++)
    if (stat(o->inputs[i], &st) == 0 && S_ISREG(st.st_mode)) {
      *sum += (uint64_t)st.st_size;
      if ((uint64_t)st.st_size > *largest) *largest = (uint64_t)st.st_size;
    }
}

static int run_inputs(const cli_opts *o);

/* 1 if the file at path starts with a timeline's magic.  O_NONBLOCK: a
 * FIFO without a writer must not hold the tool here (the reader refuses
 * it later, at once). */
static int starts_as_timeline(const char *path) {
  uint8_t head[8];
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return 0;
  ssize_t n = read(fd, head, sizeof head);
  close(fd);
  return n > 0 && mp_is_timeline(head, (size_t)n);
}

/* 1 if `raw` is one of the inputs.  Input `near` is tried first: a
 * sorted glob lists a raw profile just before its timeline, and a fleet's
 * glob of thousands of both would otherwise compare every pair. */
static int is_input(const cli_opts *o, const char *raw, size_t near) {
  if (near < o->n_inputs && strcmp(o->inputs[near], raw) == 0) return 1;
  for (size_t i = 0; i < o->n_inputs; i++)
    if (strcmp(o->inputs[i], raw) == 0) return 1;
  return 0;
}

/* Timelines leave the inputs: `memprof.profraw.*` names them too, and
 * they are read beside their raw profiles (report, show), never merged.
 * One whose raw profile is not an input is named.  Returns the inputs
 * kept (o->inputs itself when none was a timeline). */
static const char **drop_timelines(const cli_opts *o, size_t *n_kept) {
  const char **kept = NULL;
  size_t n = 0;
  for (size_t i = 0; i < o->n_inputs; i++) {
    const char *path = o->inputs[i];
    if (!starts_as_timeline(path)) {
      if (kept) kept[n] = path;
      n++;
      continue;
    }
    if (!kept) {
      kept = mp_xmalloc((o->n_inputs + 1) * sizeof *kept);
      memcpy(kept, o->inputs, i * sizeof *kept);
    }
    size_t len = strlen(path), suffix = sizeof ".timeline" - 1;
    char *raw = len > suffix && strcmp(path + len - suffix, ".timeline") == 0
                    ? strndup(path, len - suffix)
                    : NULL;
    if (!raw || !is_input(o, raw, i - 1)) /* i - 1 wraps for i = 0: past the end */
      fprintf(stderr,
              "%s: warning: %s: a timeline, not a profile: left out (report and "
              "show read a timeline beside its raw profile, or given with "
              "--timeline=FILE)\n",
              tool, path);
    free(raw);
  }
  *n_kept = n;
  return kept ? kept : o->inputs;
}

static int run(const cli_opts *o) {
  cli_opts kept = *o;
  kept.inputs = drop_timelines(o, &kept.n_inputs);
  if (!kept.n_inputs && o->n_inputs) {
    if (kept.inputs != o->inputs) free((void *)kept.inputs);
    return report(NULL, "no profile among the inputs (only timelines)");
  }
  int rc = run_inputs(&kept);
  if (kept.inputs != o->inputs) free((void *)kept.inputs);
  return rc;
}

static int run_inputs(const cli_opts *o) {
  uint64_t sum, largest;
  input_sizes(o, &sum, &largest);
  /* Fault in the heap the run will need (heap.c), from its inputs' sizes. */
  if (!o->no_prefill) mp_heap_prefill(sum, largest);
  mp_helper_enable(o->num_threads == 0 ? sum >= HELPERS_FROM_BYTES
                                       : o->num_threads > 1);
  msym_ctx *sym = open_binaries(o);
  if (!sym) return 1;
  /* report names code without debug information from symbol tables, in
   * the process's libraries too; merge and show keep llvm-profdata's
   * frames (docs/memprof-profdata.md, "report") */
  if (o->cmd == CLI_REPORT) {
    msym_set_symtab_fallback(sym, 1);
    mp_raw_find_libraries(sym, (const char *const *)o->inputs, o->n_inputs);
  }
  raw_ids *ids = timeline_inputs(o);
  mp_profile *p = read_inputs(o, sym, ids);
  if (p) warn_missing_split(sym);
  int rc = 1;
  if (p)
    rc = o->cmd == CLI_MERGE  ? run_merge(o, p)
         : o->cmd == CLI_SHOW ? run_show(o, p, ids)
                              : run_report(o, p, sym, ids);
  for (size_t i = 0; ids && i < o->n_inputs; i++) {
    free(ids[i].ids);
    free(ids[i].stacks);
  }
  free(ids);
  mp_profile_free(p);
  msym_free(sym);
  return rc;
}

/* The libraries' out-of-memory handler (error.h): the tool's one exit
 * status for it. */
static void out_of_memory(size_t n) {
  fprintf(stderr, "memprof-profdata: out of memory (allocating %zu bytes)\n", n);
  exit(3);
}

int main(int argc, char **argv) {
  mp_set_oom_handler(out_of_memory);
  mp_heap_setup();
  cli_opts o;
  mp_err err;
  int rc;
  if (cli_parse(argc, argv, &o, &err) != 0) {
    rc = usage_error(&o, err.msg);
  } else if (o.help) {
    cli_usage(stdout, o.cmd);
    rc = 0;
  } else if (o.version) {
    printf("%s %s\n", tool, MEMPROF_VERSION_STRING);
    rc = 0;
  } else {
    rc = run(&o);
  }
  cli_free(&o);
  return rc;
}
