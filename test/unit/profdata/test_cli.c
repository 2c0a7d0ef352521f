/* test_cli.c - memprof-profdata's argument grammar (cli.c): both value
 * forms, LLVM's single-dash spelling, repeatable options, defaults, and the
 * messages for bad command lines. */
#include <stdio.h>
#include <string.h>

#include "profdata/tool/cli.h"
#include "test/unit/check.h"

static int parse(cli_opts *o, mp_err *e, int argc, const char **argv) {
  return cli_parse(argc, (char **)argv, o, e);
}
#define PARSE(o, e, ...)                                                   \
  parse(o, e, (int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(char *)), \
        (const char *[]){__VA_ARGS__})

static void expect_error(const char *want, int rc, const mp_err *e) {
  CHECK(rc == -1 && strstr(e->msg, want),
        "want error containing \"%s\", got rc %d \"%s\"", want, rc,
        rc ? e->msg : "");
}

/* llvm-profdata's instrumentation options: weighted inputs come after the
 * plain ones with their weights, a weight must be a positive integer. */
static void test_instr_options(void) {
  cli_opts o;
  mp_err e;
  CHECK(PARSE(&o, &e, "p", "merge", "--weighted-input=3,w.raw", "a.raw",
              "--sparse", "--instr", "--num-threads=4",
              "--weighted-input", "10,x,y.raw", "b.raw") == 0);
  CHECK(o.n_inputs == 4 && !strcmp(o.inputs[0], "a.raw") &&
        !strcmp(o.inputs[1], "b.raw") && !strcmp(o.inputs[2], "w.raw") &&
        !strcmp(o.inputs[3], "x,y.raw"));
  CHECK(o.weights[0] == 1 && o.weights[1] == 1 && o.weights[2] == 3 &&
        o.weights[3] == 10);
  CHECK(o.index.sparse == 1);
  CHECK(o.num_threads == 4);
  cli_free(&o);
  CHECK(PARSE(&o, &e, "p", "merge", "a.raw") == 0 && o.num_threads == 0);
  cli_free(&o);
  expect_error("--num-threads", PARSE(&o, &e, "p", "merge", "--num-threads=x",
                                      "a.raw"), &e);
  expect_error("input weight must be a positive integer",
               PARSE(&o, &e, "p", "merge", "--weighted-input=0,a.raw"), &e);
  cli_free(&o);
  expect_error("expected WEIGHT,FILE",
               PARSE(&o, &e, "p", "merge", "--weighted-input=a.raw"), &e);
  cli_free(&o);
  expect_error("expected WEIGHT,FILE",
               PARSE(&o, &e, "p", "merge", "--weighted-input=2x,a.raw"), &e);
  cli_free(&o);
}

/* --timeline is repeatable and kept in order (the k-th goes with the
 * k-th raw input), for show and report only; --no-timeline excludes it. */
static void test_timeline_options(void) {
  cli_opts o;
  mp_err e;
  CHECK(PARSE(&o, &e, "p", "report", "a.raw", "--timeline=a.tl", "b.raw",
              "--timeline", "b.tl") == 0);
  CHECK(o.n_timelines == 2 && !strcmp(o.timelines[0], "a.tl") &&
        !strcmp(o.timelines[1], "b.tl") && o.n_inputs == 2 && !o.no_timeline);
  cli_free(&o);
  CHECK(PARSE(&o, &e, "p", "show", "--no-timeline", "a.raw") == 0);
  CHECK(o.no_timeline && !o.n_timelines);
  cli_free(&o);
  expect_error("is not valid for merge",
               PARSE(&o, &e, "p", "merge", "--timeline=a.tl", "a.raw"), &e);
  cli_free(&o);
  expect_error("contradict",
               PARSE(&o, &e, "p", "report", "--timeline=a.tl", "--no-timeline",
                     "a.raw"), &e);
  cli_free(&o);
  expect_error("empty file name for --timeline",
               PARSE(&o, &e, "p", "report", "--timeline=", "a.raw"), &e);
  cli_free(&o);
}

/* check: the last input is the binary, --format is text or json, the
 * thresholds are report's; report's other options are not check's. */
static void test_check_options(void) {
  cli_opts o;
  mp_err e;
  CHECK(PARSE(&o, &e, "p", "check", "a.memprofdata", "b.raw", "--format=json",
              "--memprof-ave-lifetime-cold-threshold=1", "app") == 0);
  CHECK(o.cmd == CLI_CHECK && o.n_inputs == 2 && o.check_json == 1);
  CHECK(!strcmp(o.check_binary, "app") && !strcmp(o.inputs[1], "b.raw"));
  CHECK(o.report.clang.ave_lifetime_cold == 1);
  cli_free(&o);
  CHECK(PARSE(&o, &e, "p", "check", "a", "app") == 0 && o.check_json == 0);
  cli_free(&o);
  expect_error("check needs a profile and the optimized binary",
               PARSE(&o, &e, "p", "check", "app"), &e);
  cli_free(&o);
  expect_error("expected text or json",
               PARSE(&o, &e, "p", "check", "--format=html", "a", "app"), &e);
  cli_free(&o);
  expect_error("option '--top' is not valid for check",
               PARSE(&o, &e, "p", "check", "--top=3", "a", "app"), &e);
  cli_free(&o);
}

int main(void) {
  cli_opts o;
  mp_err e;

  test_instr_options();
  test_timeline_options();
  test_check_options();

  CHECK(PARSE(&o, &e, "p", "merge", "a.raw", "--profiled-binary=bin",
              "--profiled-binary", "lib.so", "-o", "out", "b.raw") == 0);
  CHECK(o.cmd == CLI_MERGE && o.n_inputs == 2 && o.n_binaries == 2);
  CHECK(!strcmp(o.inputs[1], "b.raw") && !strcmp(o.binaries[1], "lib.so"));
  CHECK(!strcmp(o.out, "out"));
  CHECK(o.index.index_version == 12 && o.index.memprof_version == 3);
  CHECK(!o.index.full_schema && o.index.symbolized_section);
  cli_free(&o);

  CHECK(PARSE(&o, &e, "p", "merge", "-profiled-binary=bin", "--index-version",
              "13", "--memprof-version=4", "--memprof-full-schema",
              "--no-symbolized-section", "--output=x", "--", "-weird") == 0);
  CHECK(o.index.index_version == 13 && o.index.memprof_version == 4);
  CHECK(o.index.full_schema && !o.index.symbolized_section);
  CHECK(o.n_inputs == 1 && !strcmp(o.inputs[0], "-weird"));
  CHECK(!strcmp(o.out, "x") && o.n_binaries == 1);
  cli_free(&o);

  CHECK(PARSE(&o, &e, "p", "show", "--symbolized", "--debug-dir", "/d",
              "--memory", "f") == 0);
  CHECK(o.cmd == CLI_SHOW && o.symbolized && o.n_debug_dirs == 1 && !o.out);
  cli_free(&o);

  CHECK(PARSE(&o, &e, "p", "--version") == 0 && o.version);
  cli_free(&o);
  CHECK(PARSE(&o, &e, "p", "merge", "--help") == 0 && o.help &&
        o.cmd == CLI_MERGE);
  cli_free(&o);

  /* report: defaults are clang-22's */
  CHECK(PARSE(&o, &e, "p", "report", "f") == 0);
  CHECK(o.cmd == CLI_REPORT && o.report.format == RPT_TEXT &&
        o.report.sort == RPT_BYTES && o.report.by == RPT_BY_CONTEXT &&
        o.report.top == 20 && !o.report.base && !o.report.dhat_leaked);
  CHECK(o.report.clang.lifetime_access_density_cold == 0.05f &&
        o.report.clang.ave_lifetime_cold == 200 &&
        o.report.clang.min_ave_lifetime_density_hot == 1000 &&
        !o.report.clang.use_hot_hints && o.report.clang.matching_cold_percent == 100 &&
        o.report.clang.callsite_cold_percent == 100 &&
        !o.report.clang.keep_all_not_cold);
  cli_free(&o);
  CHECK(PARSE(&o, &e, "p", "report", "--format=dhat", "--sort", "density",
              "--by=file", "--top=0", "--base=old", "-memprof-use-hot-hints",
              "--memprof-keep-all-not-cold-contexts=true",
              "--memprof-lifetime-access-density-cold-threshold=0.5",
              "--memprof-ave-lifetime-cold-threshold", "1",
              "--memprof-min-ave-lifetime-access-density-hot-threshold=7",
              "--memprof-matching-cold-threshold=50",
              "--memprof-callsite-cold-threshold=60", "f", "g") == 0);
  CHECK(o.report.format == RPT_DHAT && o.report.sort == RPT_DENSITY &&
        o.report.by == RPT_BY_FILE && o.report.top == 0 &&
        !strcmp(o.report.base, "old") && o.n_inputs == 2);
  CHECK(o.report.clang.use_hot_hints && o.report.clang.keep_all_not_cold &&
        o.report.clang.lifetime_access_density_cold == 0.5f &&
        o.report.clang.ave_lifetime_cold == 1 &&
        o.report.clang.min_ave_lifetime_density_hot == 7 &&
        o.report.clang.matching_cold_percent == 50 &&
        o.report.clang.callsite_cold_percent == 60);
  cli_free(&o);
  CHECK(PARSE(&o, &e, "p", "report", "--memprof-use-hot-hints=false", "f") == 0);
  CHECK(!o.report.clang.use_hot_hints);
  cli_free(&o);
  /* --dhat-at-end: live (the default) or leaked */
  CHECK(PARSE(&o, &e, "p", "report", "--dhat-at-end=leaked", "f") == 0 && o.report.dhat_leaked);
  cli_free(&o);
  CHECK(PARSE(&o, &e, "p", "report", "--dhat-at-end", "live", "f") == 0 &&
        !o.report.dhat_leaked);
  cli_free(&o);
  expect_error("invalid value 'all' for --dhat-at-end (expected live or leaked)",
               PARSE(&o, &e, "p", "report", "--dhat-at-end=all", "f"), &e);
  cli_free(&o);
  expect_error("not valid for show", PARSE(&o, &e, "p", "show", "--dhat-at-end=live", "f"), &e);
  cli_free(&o);
  expect_error("invalid value 'svg' for --format (expected text, html, pprof, "
               "folded, speedscope or dhat)",
               PARSE(&o, &e, "p", "report", "--format=svg", "f"), &e);
  cli_free(&o);
  expect_error("invalid value '-3' for --top",
               PARSE(&o, &e, "p", "report", "--top=-3", "f"), &e);
  cli_free(&o);
  expect_error("invalid value 'yes' for --memprof-use-hot-hints",
               PARSE(&o, &e, "p", "report", "--memprof-use-hot-hints=yes", "f"), &e);
  cli_free(&o);
  expect_error("not valid for merge", PARSE(&o, &e, "p", "merge", "--top=3", "a"), &e);
  cli_free(&o);

  expect_error("no command given", PARSE(&o, &e, "p"), &e);
  cli_free(&o);
  expect_error("no input files", PARSE(&o, &e, "p", "merge"), &e);
  cli_free(&o);
  expect_error("unknown option '--nope'", PARSE(&o, &e, "p", "merge", "--nope"), &e);
  cli_free(&o);
  expect_error("invalid value 'x' for --memprof-version",
               PARSE(&o, &e, "p", "merge", "--memprof-version=x", "a"), &e);
  cli_free(&o);
  expect_error("invalid value '10' for --index-version",
               PARSE(&o, &e, "p", "merge", "--index-version=10", "a"), &e);
  cli_free(&o);
  expect_error("needs a value", PARSE(&o, &e, "p", "merge", "a", "--profiled-binary"), &e);
  cli_free(&o);
  expect_error("takes no value", PARSE(&o, &e, "p", "merge", "a", "--memprof-full-schema=1"), &e);
  cli_free(&o);
  expect_error("not valid for show", PARSE(&o, &e, "p", "show", "--index-version=12", "a"), &e);
  cli_free(&o);
  expect_error("not valid before a command", PARSE(&o, &e, "p", "-o", "x", "merge", "a"), &e);
  cli_free(&o);
  expect_error("unknown command 'mrge'", PARSE(&o, &e, "p", "mrge", "a"), &e);
  cli_free(&o);

  return check_result();
}
