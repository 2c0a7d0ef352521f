/* main.c - memprof-profdata: `merge`, `show` and `report`.
 *
 * cli.c parses the command line; this file runs the command: open the
 * binaries, read every input into one profile (the merge engine,
 * profdata/merge/), then write it (indexed, YAML) or report it, with the
 * timelines of raw inputs joined to the report.  Any error is reported as
 * "memprof-profdata: error: WHAT: why" with exit status 1, and nothing is
 * written.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "heap.h"
#include "common/error.h"
#include "common/helper.h"
#include "common/io.h"
#include "profdata/indexed/indexed.h"
#include "profdata/instrprof/instrprof.h"
#include "profdata/merge/merge.h"
#include "profdata/model/data_access.h"
#include "profdata/model/model.h"
#include "profdata/raw/raw.h"
#include "profdata/report/report.h"
#include "profdata/roots/roots.h"
#include "profdata/timeline/timeline.h"
#include "profdata/yaml/yaml_io.h"
#ifdef MEMPROF_HAVE_CAPSTONE
#include "profdata/check/check.h"
#include "profdata/hcsites/hcsites.h"
#endif
#include "symbolizer/symbolizer.h"

#ifndef MEMPROF_VERSION_STRING
#define MEMPROF_VERSION_STRING "0.1.0"
#endif

static const char *tool = "memprof-profdata";

/* What `check` says when the tool was built without capstone. */
#define CHECK_UNAVAILABLE                                                 \
  "check is not available: memprof-profdata was built without capstone " \
  "(install libcapstone-dev and reconfigure)"

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

static mp_merge_inputs merge_inputs(const cli_opts *o) {
  return (mp_merge_inputs){o->inputs, o->weights, o->n_inputs, o->n_binaries,
                           NULL, NULL};
}

/* All inputs of `o` in one profile, or NULL after saying why. */
static mp_profile *read_inputs(const cli_opts *o, msym_ctx *sym,
                               mp_input_ids *ids) {
  mp_merge_inputs in = merge_inputs(o);
  const char *failed = NULL;
  mp_err err;
#ifdef MEMPROF_HAVE_CAPSTONE
  /* leaves that return from calls of other functions (check_leaf.c) */
  chk_leaf_probe *probe = chk_leaf_probe_new();
  in.probe = chk_leaf_calls_other;
  in.probe_ctx = probe;
#endif
  mp_profile *p = mp_merge_read(&in, sym, ids, &failed, &err);
#ifdef MEMPROF_HAVE_CAPSTONE
  chk_leaf_probe_free(probe);
#endif
  if (!p) report(failed, err.msg);
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
  if (!mp_dap_empty(p->dap) && o->index.memprof_version != 4)
    fprintf(stderr, "%s: warning: %s: the data-access profile is left out: "
            "only memprof version 4 holds one (--memprof-version=4)\n",
            tool, out);
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

/* 1 (reported) when `given` files of kind `what` were named but not one
 * per raw input. */
static int count_given(const char *what, size_t given, size_t n_raw) {
  if (!given || given == n_raw) return 0;
  char m[200];
  snprintf(m, sizeof m,
           "%zu --%s file%s for %zu raw input%s (the k-th %s file goes with the k-th raw "
           "input; indexed and YAML inputs have none)",
           given, what, given == 1 ? "" : "s", n_raw, n_raw == 1 ? "" : "s", what);
  return report(NULL, m);
}

/* The timelines of the raw inputs joined to r (report_timeline.c): the
 * k-th --timeline for the k-th raw input, or "<raw input>.timeline" where
 * one exists.  One given explicitly that cannot be read, was written for
 * another raw profile (its size or its stack ids differ) is an error
 * (returns 1); one found beside its input is left out with a
 * warning, so the raw profile still gets its report. */
static int attach_timelines(const cli_opts *o, rpt *r, const mp_input_ids *ids) {
  size_t n_raw = 0, k = 0;
  for (size_t i = 0; i < o->n_inputs; i++) n_raw += ids[i].raw;
  if (count_given("timeline", o->n_timelines, n_raw)) return 1;
  for (size_t i = 0; i < o->n_inputs; i++) {
    if (!ids[i].raw) continue;
    int given = o->n_timelines > 0;
    char *found = given ? NULL : mp_timeline_path_for(o->inputs[i]);
    if (found && access(found, F_OK) != 0) {
      free(found);
      continue;
    }
    const char *path = given ? o->timelines[k++] : found;
    rpt_timeline_input in = {path, o->inputs[i], {0}, ids[i].ids, ids[i].stacks,
                       ids[i].n};
    mp_err e;
    struct stat st;
    int rc = mp_timeline_read(path, &in.tl, &e);
    if (rc == 0 && stat(o->inputs[i], &st) == 0)
      rc = mp_timeline_match(&in.tl, path, (uint64_t)st.st_size, &e);
    if (rc == 0 && rpt_timeline_add(r, &in, &e) != 0) {
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

/* The roots files of the raw inputs joined to r (report_roots.c): the
 * k-th --roots for the k-th raw input, or "<raw input>.roots" (written
 * with roots=1) where one exists.  One given explicitly that cannot be
 * read or was written for another raw profile is an error (returns 1);
 * one found beside its input is left out with a warning. */
static int attach_roots(const cli_opts *o, rpt *r, const mp_input_ids *ids) {
  size_t n_raw = 0, k = 0;
  for (size_t i = 0; i < o->n_inputs; i++) n_raw += ids[i].raw;
  if (count_given("roots", o->n_roots_files, n_raw)) return 1;
  for (size_t i = 0; i < o->n_inputs; i++) {
    if (!ids[i].raw) continue;
    int given = o->n_roots_files > 0;
    char *found = given ? NULL : mp_roots_path_for(o->inputs[i]);
    if (found && access(found, F_OK) != 0) {
      free(found);
      continue;
    }
    const char *path = given ? o->roots_files[k++] : found;
    rpt_roots_input in = {path, o->inputs[i], {0}, ids[i].ids, ids[i].stacks, ids[i].n};
    mp_err e;
    struct stat st;
    int rc = mp_roots_read(path, &in.rs, &e);
    if (rc == 0 && stat(o->inputs[i], &st) == 0)
      rc = mp_roots_match(&in.rs, path, (uint64_t)st.st_size, &e);
    if (rc == 0 && rpt_roots_add(r, &in, &e) != 0) {
      mp_err_prefix(&e, path);
      rc = -1;
    }
    if (rc != 0 && given) {
      report(NULL, e.msg);
      mp_roots_free(&in.rs);
      return 1;
    }
    if (rc != 0) {
      warn(e.msg, "the report leaves the roots file out");
      mp_roots_free(&in.rs);
    }
    free(found);
  }
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

static int run_show(const cli_opts *o, const mp_profile *p, const mp_input_ids *ids) {
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
    rpt_write_timeline_summary(r, &t, "# ");
    rpt_write_timeline_text(r, &t, "# ");
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
                      const mp_input_ids *ids) {
  const rpt_opts *ro = &o->report;
  rpt *r = rpt_build(p, ro);
  if (ids && attach_timelines(o, r, ids) != 0) {
    rpt_free(r);
    return 1;
  }
  if (ids && attach_roots(o, r, ids) != 0) {
    rpt_free(r);
    return 1;
  }
  if (ro->dhat_leaked && (ro->format != RPT_DHAT || !r->roots)) {
    report(NULL, ro->format != RPT_DHAT ? "--dhat-at-end is for --format=dhat"
                                        : "--dhat-at-end=leaked needs a roots file of a raw "
                                          "input (MEMPROF_OPTIONS=roots=1, or --roots)");
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

/* `check`: the report's contexts (its verdicts under the thresholds
 * given) against the optimized binary (profdata/check/). */
static int run_check(const cli_opts *o, const mp_profile *p) {
#ifdef MEMPROF_HAVE_CAPSTONE
  mp_err err;
  mp_hcs sites;
  chk_run_file run = {o->check_sites, &sites};
  if (o->check_sites && mp_hcs_read(o->check_sites, &sites, &err) != 0)
    return report(NULL, err.msg);
  rpt *r = rpt_build(p, &o->report);
  mp_buf b = {0};
  int rc = chk_run(r, o->check_binary, o->check_sites ? &run : NULL,
                   o->check_json ? CHK_JSON : CHK_TEXT, &b, &err) != 0
               ? report(o->check_binary, err.msg)
               : write_output(o->out ? o->out : "-", &b);
  mp_buf_free(&b);
  rpt_free(r);
  if (o->check_sites) mp_hcs_free(&sites);
  return rc;
#else
  (void)o;
  (void)p;
  return report(NULL, CHECK_UNAVAILABLE);
#endif
}

/* Inputs totalling less than this are read and merged on one thread:
 * starting a helper and waiting for it at the join costs more than the
 * work it takes over, and on a busy machine the helper waits for a CPU
 * while the main thread waits for it. */
#define HELPERS_FROM_BYTES (8u << 20)

static int run_inputs(const cli_opts *o);

/* The command on its inputs less the timelines among them (named when
 * their raw profile is not an input). */
static int run(const cli_opts *o) {
  mp_merge_inputs all = merge_inputs(o);
  const char **orphans;
  size_t n_orphans;
  cli_opts kept = *o;
  kept.inputs = mp_merge_drop_timelines(&all, &kept.n_inputs, &orphans, &n_orphans);
  for (size_t i = 0; i < n_orphans; i++)
    fprintf(stderr,
            "%s: warning: %s: a timeline, not a profile: left out (report and "
            "show read a timeline beside its raw profile, or given with "
            "--timeline=FILE)\n",
            tool, orphans[i]);
  free(orphans);
  int rc;
  if (!kept.n_inputs && o->n_inputs)
    rc = report(NULL, "no profile among the inputs (only timelines)");
  else
    rc = run_inputs(&kept);
  if (kept.inputs != o->inputs) free((void *)kept.inputs);
  return rc;
}

static int run_inputs(const cli_opts *o) {
  mp_merge_inputs in = merge_inputs(o);
  uint64_t sum, largest;
  mp_merge_input_sizes(&in, &sum, &largest);
  /* Fault in the heap the run will need (heap.c), from its inputs' sizes. */
  if (!o->no_prefill) mp_heap_prefill(sum, largest);
  mp_helper_enable(o->num_threads == 0 ? sum >= HELPERS_FROM_BYTES
                                       : o->num_threads > 1);
  msym_ctx *sym = open_binaries(o);
  if (!sym) return 1;
  /* The modules of preloaded processes are found from their profiles;
   * report names code without debug information from symbol tables, and
   * so do merge and show on preloaded profiles, which clang never reads.
   * On instrumented profiles merge and show keep llvm-profdata's frames
   * (docs/memprof-profdata.md, "Programs without debug information"). */
  size_t preloaded =
      mp_raw_find_libraries(sym, (const char *const *)o->inputs, o->n_inputs);
  if (o->cmd == CLI_REPORT || preloaded) msym_set_symtab_fallback(sym, 1);
  /* only inputs that may have a timeline keep their stack ids: a merge
   * of many raw files would otherwise hold every file's for nothing */
  mp_input_ids *ids = o->cmd == CLI_MERGE || o->cmd == CLI_CHECK || o->no_timeline
                          ? NULL
                          : mp_merge_timeline_inputs(&in, o->n_timelines > 0 || o->n_roots_files > 0);
  mp_profile *p = read_inputs(o, sym, ids);
  if (p) warn_missing_split(sym);
  int rc = 1;
  if (p)
    rc = o->cmd == CLI_MERGE  ? run_merge(o, p)
         : o->cmd == CLI_SHOW  ? run_show(o, p, ids)
         : o->cmd == CLI_CHECK ? run_check(o, p)
                               : run_report(o, p, sym, ids);
  mp_merge_ids_free(ids, o->n_inputs);
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
#ifndef MEMPROF_HAVE_CAPSTONE
    if (o.cmd == CLI_CHECK) printf("\n%s\n", CHECK_UNAVAILABLE);
#endif
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
