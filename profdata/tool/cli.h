/* cli.h - command-line parsing for memprof-profdata, kept apart from any
 * I/O so it can be unit-tested: cli_parse only fills a cli_opts.
 */
#ifndef PROFDATA_CLI_H
#define PROFDATA_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"
#include "profdata/indexed/indexed.h"
#include "profdata/report/report.h"

#define MP_DEFAULT_MERGE_OUTPUT "default.memprofdata"

typedef enum cli_cmd {
  CLI_NONE,  /* only tool-level flags were given */
  CLI_MERGE,
  CLI_SHOW,
  CLI_REPORT,
  CLI_CHECK, /* PROFILE... BINARY: the last input is the binary */
} cli_cmd;

typedef struct cli_opts {
  cli_cmd cmd;
  int help;    /* --help: print the usage of cmd (or of the tool) */
  int version; /* --version */
  const char *out; /* NULL: the command's default */
  const char **binaries;
  size_t n_binaries;
  const char **debug_dirs;
  size_t n_debug_dirs;
  const char **inputs;
  size_t n_inputs;
  uint64_t *weights;   /* per input: --weighted-input's W, else 1 */
  const char **w_inputs; /* --weighted-input files while parsing */
  uint64_t *w_weights;
  size_t n_w_inputs;
  mp_index_opts index; /* merge */
  int symbolized;      /* show */
  /* show and report: --timeline files, the k-th for the k-th raw input
   * (none given: "<raw input>.timeline" where one exists); --no-timeline
   * reads none */
  const char **timelines;
  size_t n_timelines;
  int no_timeline;
  /* report: --roots files, the k-th for the k-th raw input (none given:
   * "<raw input>.roots" where one exists) */
  const char **roots_files;
  size_t n_roots_files;
  int no_prefill;      /* --no-prefill: no mp_heap_prefill */
  int libdw_only;      /* --libdw-only: msym_set_raw_dwarf(0) */
  unsigned num_threads; /* --num-threads: 1 none, more: helpers, 0: by size */
  rpt_opts report;     /* report; check: its thresholds */
  int check_json;      /* check --format=json */
  const char *check_binary; /* check: the optimized binary (not an input) */
  const char *check_sites;  /* check --hotcold-sites: a run's call-site file */
} cli_opts;

/* Parse argv.  Returns 0, or -1 with the reason in err (the caller prints it
 * with a usage hint and exits 1).  The arrays in `o` point into argv and
 * must be released with cli_free. */
int cli_parse(int argc, char **argv, cli_opts *o, mp_err *err);
void cli_free(cli_opts *o);

void cli_usage(FILE *out, cli_cmd cmd);
const char *cli_cmd_name(cli_cmd cmd);

#endif
