/* cli.c - memprof-profdata's argument grammar (cli.h).
 *
 * Long options take their value as --name=value or --name value; LLVM's
 * single-dash spelling (-profiled-binary=BIN) is accepted too, so command
 * lines written for llvm-profdata keep working.  Options and inputs may be
 * mixed; "--" ends the options.
 */
#include "cli.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum opt_id {
  OPT_HELP,
  OPT_VERSION,
  OPT_OUTPUT,
  OPT_BINARY,
  OPT_DEBUG_DIR,
  OPT_MEMPROF_VERSION,
  OPT_INDEX_VERSION,
  OPT_FULL_SCHEMA,
  OPT_NO_SYM_SECTION,
  OPT_SYMBOLIZED,
  OPT_MEMORY,
  OPT_NO_PREFILL,
  OPT_LIBDW_ONLY,
  OPT_FORMAT,
  OPT_TOP,
  OPT_SORT,
  OPT_BY,
  OPT_BASE,
  OPT_COLD_DENSITY,
  OPT_COLD_LIFETIME,
  OPT_HOT_DENSITY,
  OPT_HOT_HINTS,
  OPT_MATCHING_COLD,
  OPT_CALLSITE_COLD,
  OPT_KEEP_NOTCOLD,
  OPT_WEIGHTED_INPUT,
  OPT_INSTR,
  OPT_SPARSE,
  OPT_NUM_THREADS,
  OPT_TIMELINE,
  OPT_NO_TIMELINE,
  OPT_ROOTS,
  OPT_DHAT_AT_END,
  OPT_HOTCOLD_SITES,
} opt_id;

typedef struct opt_def {
  const char *name;
  opt_id id;
  int takes_value; /* 0 no, 1 yes, 2 optional (--flag or --flag=bool) */
  unsigned cmds; /* bit set of cli_cmd where the option is valid */
} opt_def;

#define IN_MERGE (1u << CLI_MERGE)
#define IN_SHOW (1u << CLI_SHOW)
#define IN_REPORT (1u << CLI_REPORT)
#define IN_CHECK (1u << CLI_CHECK)
#define IN_ALL (1u << CLI_NONE | IN_MERGE | IN_SHOW | IN_REPORT | IN_CHECK)
#define IN_READ (IN_MERGE | IN_SHOW | IN_REPORT | IN_CHECK)
#define IN_VERDICT (IN_REPORT | IN_CHECK)

static const opt_def OPTS[] = {
    {"help", OPT_HELP, 0, IN_ALL},
    {"h", OPT_HELP, 0, IN_ALL},
    {"version", OPT_VERSION, 0, IN_ALL},
    {"o", OPT_OUTPUT, 1, IN_READ},
    {"output", OPT_OUTPUT, 1, IN_READ},
    {"profiled-binary", OPT_BINARY, 1, IN_READ},
    {"debug-dir", OPT_DEBUG_DIR, 1, IN_READ},
    {"memprof-version", OPT_MEMPROF_VERSION, 1, IN_MERGE},
    {"index-version", OPT_INDEX_VERSION, 1, IN_MERGE},
    {"memprof-full-schema", OPT_FULL_SCHEMA, 0, IN_MERGE},
    {"no-symbolized-section", OPT_NO_SYM_SECTION, 0, IN_MERGE},
    {"symbolized", OPT_SYMBOLIZED, 0, IN_SHOW},
    {"memory", OPT_MEMORY, 0, IN_SHOW}, /* llvm-profdata show --memory */
    {"no-prefill", OPT_NO_PREFILL, 0, IN_READ},
    {"libdw-only", OPT_LIBDW_ONLY, 0, IN_READ},
    {"format", OPT_FORMAT, 1, IN_VERDICT},
    {"top", OPT_TOP, 1, IN_REPORT},
    {"sort", OPT_SORT, 1, IN_REPORT},
    {"by", OPT_BY, 1, IN_REPORT},
    {"base", OPT_BASE, 1, IN_REPORT},
    /* clang's -mllvm options of the same names */
    {"memprof-lifetime-access-density-cold-threshold", OPT_COLD_DENSITY, 1,
     IN_VERDICT},
    {"memprof-ave-lifetime-cold-threshold", OPT_COLD_LIFETIME, 1, IN_VERDICT},
    {"memprof-min-ave-lifetime-access-density-hot-threshold", OPT_HOT_DENSITY,
     1, IN_VERDICT},
    {"memprof-use-hot-hints", OPT_HOT_HINTS, 2, IN_VERDICT},
    {"memprof-matching-cold-threshold", OPT_MATCHING_COLD, 1, IN_VERDICT},
    {"memprof-callsite-cold-threshold", OPT_CALLSITE_COLD, 1, IN_VERDICT},
    {"memprof-keep-all-not-cold-contexts", OPT_KEEP_NOTCOLD, 2, IN_VERDICT},
    {"weighted-input", OPT_WEIGHTED_INPUT, 1, IN_MERGE},
    {"instr", OPT_INSTR, 0, IN_MERGE}, /* llvm-profdata's default kind */
    {"sparse", OPT_SPARSE, 0, IN_MERGE},
    {"num-threads", OPT_NUM_THREADS, 1, IN_MERGE}, /* llvm-profdata's too */
    {"timeline", OPT_TIMELINE, 1, IN_SHOW | IN_REPORT},
    {"hotcold-sites", OPT_HOTCOLD_SITES, 1, IN_CHECK},
    {"no-timeline", OPT_NO_TIMELINE, 0, IN_SHOW | IN_REPORT},
    {"roots", OPT_ROOTS, 1, IN_REPORT},
    {"dhat-at-end", OPT_DHAT_AT_END, 1, IN_REPORT},
};

const char *cli_cmd_name(cli_cmd cmd) {
  return cmd == CLI_MERGE    ? "merge"
         : cmd == CLI_SHOW   ? "show"
         : cmd == CLI_REPORT ? "report"
         : cmd == CLI_CHECK  ? "check"
                             : NULL;
}

/* clang's thresholds, which report and check take. */
static const char CLANG_OPTIONS_HELP[] =
    "  --memprof-lifetime-access-density-cold-threshold=F     (0.05)\n"
    "  --memprof-ave-lifetime-cold-threshold=SECONDS          (200)\n"
    "  --memprof-min-ave-lifetime-access-density-hot-threshold=N (1000)\n"
    "  --memprof-use-hot-hints[=true|false]                   (false)\n"
    "  --memprof-matching-cold-threshold=PERCENT              (100)\n"
    "  --memprof-callsite-cold-threshold=PERCENT              (100)\n"
    "  --memprof-keep-all-not-cold-contexts[=true|false]      (false)\n"
    "  -h, --help                 show this help\n";

void cli_usage(FILE *out, cli_cmd cmd) {
  if (cmd == CLI_MERGE) {
    fputs(
        "Usage: memprof-profdata merge [options] INPUT...\n"
        "\n"
        "Read raw (.profraw), indexed and YAML memory profiles and clang's\n"
        "instrumentation (PGO) profiles, raw or indexed, in any mix, merge\n"
        "them (the MIBs of identical contexts are combined, counters summed\n"
        "as llvm-profdata does) and write one indexed profile for clang's\n"
        "-fmemory-profile-use and -fprofile-use.\n"
        "\n"
        "Options:\n"
        "  -o, --output=FILE          output file (default " MP_DEFAULT_MERGE_OUTPUT
        "; - = stdout)\n"
        "  --profiled-binary=BIN      executable or shared library the raw\n"
        "                             profiles were recorded from; repeat for\n"
        "                             each module (matched by build id)\n"
        "  --debug-dir=DIR            where to look for separate debug files\n"
        "                             (DIR/.build-id/xx/rest.debug); repeatable\n"
        "  --index-version=11|12|13   indexed format version (default 12, read\n"
        "                             by clang-19 and clang-22)\n"
        "  --memprof-version=2|3|4    memprof section version (default 3;\n"
        "                             4 is read by LLVM 22 only)\n"
        "  --memprof-full-schema      store all 27 MIB fields (default: the 4\n"
        "                             fields clang's hot/cold decision uses)\n"
        "  --no-symbolized-section    do not append function names and source\n"
        "                             locations after LLVM's sections\n"
        "  --no-prefill               do not fault the heap in up front (saves\n"
        "                             memory, costs time where faults are slow)\n"
        "  --libdw-only               read debug info through libdw alone, not\n"
        "                             the faster raw readers (same output)\n"
        "  --weighted-input=W,FILE    an input whose instrumentation counts\n"
        "                             count W times (W >= 1; repeatable)\n"
        "  --sparse                   leave out functions whose counters are\n"
        "                             all zero\n"
        "  --num-threads=N            1: read and merge on one thread; more:\n"
        "                             with helper threads; 0 (default): helpers\n"
        "                             only when the inputs total 8 MiB or more\n"
        "  --instr                    accepted for llvm-profdata's command\n"
        "                             lines (no effect)\n"
        "  -h, --help                 show this help\n",
        out);
  } else if (cmd == CLI_SHOW) {
    fputs(
        "Usage: memprof-profdata show [options] FILE...\n"
        "\n"
        "Print the (merged) profile as LLVM's memprof YAML, which\n"
        "`llvm-profdata merge` and `memprof-profdata merge` read back.\n"
        "\n"
        "Options:\n"
        "  -o, --output=FILE          output file (default - = stdout)\n"
        "  --profiled-binary=BIN      needed for raw inputs; repeatable\n"
        "  --debug-dir=DIR            where to look for separate debug files\n"
        "  --symbolized               add \"# name file:line:column\" comments\n"
        "                             to frames that carry symbol information\n"
        "  --timeline=FILE            the timeline of a raw input (live at\n"
        "                             peak and at exit, as YAML comments); the k-th\n"
        "                             goes with the k-th raw input; default:\n"
        "                             <raw input>.timeline where it exists\n"
        "  --no-timeline              read no timeline\n"
        "  -h, --help                 show this help\n",
        out);
  } else if (cmd == CLI_REPORT) {
    fputs(
        "Usage: memprof-profdata report [options] INPUT...\n"
        "\n"
        "Merge the inputs as `merge` does and report where the memory goes:\n"
        "a summary, the top contexts with demangled names and source\n"
        "locations, and the hot/cold verdict clang-22 gives each context.\n"
        "\n"
        "Options:\n"
        "  --format=FMT               text (default), html, pprof, folded,\n"
        "                             speedscope or dhat\n"
        "  -o, --output=FILE          output file (default - = stdout)\n"
        "  --top=N                    rows in the top tables (default 20; 0 all)\n"
        "  --sort=KEY                 bytes (default), allocs, lifetime (average,\n"
        "                             longest first), density (average, lowest\n"
        "                             first) or accesses; folded sums it\n"
        "  --by=WHAT                  context (default), function or file\n"
        "  --base=OLD                 compare with an older profile\n"
        "  --timeline=FILE            the timeline of a raw input (memory over\n"
        "                             time, live at peak and at exit); the k-th\n"
        "                             goes with the k-th raw input; default:\n"
        "                             <raw input>.timeline where it exists\n"
        "  --no-timeline              read no timeline\n"
        "  --roots=FILE               the roots file of a raw input (who holds\n"
        "                             the memory, roots=1); the k-th goes with\n"
        "                             the k-th raw input; default: <raw\n"
        "                             input>.roots where it exists\n"
        "  --dhat-at-end=WHAT         dhat's \"at t-end\": live (default) or\n"
        "                             leaked (at exit, from the roots files)\n"
        "  --profiled-binary=BIN      needed for raw inputs; repeatable\n"
        "  --debug-dir=DIR            where to look for separate debug files\n"
        "clang-22's -mllvm options of the same names (defaults as clang's):\n",
        out);
    fputs(CLANG_OPTIONS_HELP, out);
  } else if (cmd == CLI_CHECK) {
    fputs(
        "Usage: memprof-profdata check [options] PROFILE... BINARY\n"
        "\n"
        "Check which of the profile's hot/cold hints landed in BINARY, the\n"
        "program built with -fmemory-profile-use=PROFILE -mllvm\n"
        "-optimize-hot-cold-new (with or without LTO): its calls of the\n"
        "__hot_cold_t operator new forms and their hints, matched to the\n"
        "profile's contexts, and why a context got no cold hint.\n"
        "\n"
        "Options:\n"
        "  --format=FMT               text (default) or json\n"
        "  -o, --output=FILE          output file (default - = stdout)\n"
        "  --profiled-binary=BIN      needed for raw profiles; repeatable\n"
        "  --debug-dir=DIR            where to look for separate debug files\n"
        "  --hotcold-sites=FILE       what a run of BINARY served per hinted\n"
        "                             call (libmemprof-hotcold's site_file)\n"
        "clang-22's -mllvm options of the same names, as the build had them:\n",
        out);
    fputs(CLANG_OPTIONS_HELP, out);
  } else {
    fputs(
        "Usage: memprof-profdata COMMAND [options] FILE...\n"
        "\n"
        "Commands:\n"
        "  merge   read raw, indexed and YAML memory profiles and write one\n"
        "          indexed profile (default output " MP_DEFAULT_MERGE_OUTPUT
        ")\n"
        "  show    print profiles as LLVM's memprof YAML\n"
        "  report  summary, top contexts and hot/cold verdicts as text, HTML,\n"
        "          pprof, folded stacks, speedscope or DHAT JSON\n"
        "  check   which hot/cold hints landed in the optimized binary, and\n"
        "          why the others did not\n"
        "\n"
        "Run `memprof-profdata COMMAND --help` for the options of a command.\n"
        "  --version   print the version\n"
        "  -h, --help  show this help\n",
        out);
  }
}

static void push(const char ***arr, size_t *n, const char *v) {
  *arr = mp_xrealloc((void *)*arr, (*n + 1) * sizeof **arr);
  (*arr)[(*n)++] = v;
}

/* Item i of n of an "a, b or c" list. */
static void list_item(char *list, size_t cap, size_t i, size_t n,
                      const char *item) {
  size_t len = strlen(list);
  snprintf(list + len, cap - len, "%s%s",
           i ? (i + 1 == n ? " or " : ", ") : "", item);
}

static int bad_value(const char *flag, const char *v, const char *expected,
                     mp_err *err) {
  return mp_fail(err, "invalid value '%s' for --%s (expected %s)", v, flag,
                 expected);
}

static int parse_uint_choice(const char *flag, const char *v,
                             const unsigned *choices, size_t n, unsigned *out,
                             mp_err *err) {
  char *end;
  unsigned long x = strtoul(v, &end, 10);
  if (*v && !*end)
    for (size_t i = 0; i < n; i++)
      if (x == choices[i]) {
        *out = (unsigned)x;
        return 0;
      }
  char list[128] = "", num[16];
  for (size_t i = 0; i < n; i++) {
    snprintf(num, sizeof num, "%u", choices[i]);
    list_item(list, sizeof list, i, n, num);
  }
  return bad_value(flag, v, list, err);
}

static int parse_name(const char *flag, const char *v,
                      const char *const *names, size_t n, int *out,
                      mp_err *err) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(v, names[i])) {
      *out = (int)i;
      return 0;
    }
  char list[128] = "";
  for (size_t i = 0; i < n; i++) list_item(list, sizeof list, i, n, names[i]);
  return bad_value(flag, v, list, err);
}

static int parse_unsigned(const char *flag, const char *v, unsigned long max,
                          unsigned long *out, mp_err *err) {
  char *end;
  unsigned long x = strtoul(v, &end, 10);
  if (!*v || *end || *v == '-' || x > max)
    return bad_value(flag, v, "a whole number", err);
  *out = x;
  return 0;
}

/* clang's cl::opt<bool> spellings: no value is true. */
static int parse_bool(const char *flag, const char *v, int *out, mp_err *err) {
  static const char *const names[] = {"false", "true", "0", "1",
                                      "FALSE", "TRUE"};
  int i = 1;
  if (v && parse_name(flag, v, names, 6, &i, err) != 0) return -1;
  *out = i & 1;
  return 0;
}

/* The report option that holds a whole number, or NULL. */
static unsigned *unsigned_option(rpt_opts *r, opt_id id) {
  switch (id) {
  case OPT_COLD_LIFETIME: return &r->clang.ave_lifetime_cold;
  case OPT_HOT_DENSITY: return &r->clang.min_ave_lifetime_density_hot;
  case OPT_MATCHING_COLD: return &r->clang.matching_cold_percent;
  case OPT_CALLSITE_COLD: return &r->clang.callsite_cold_percent;
  default: return NULL;
  }
}

/* The report option that takes one of a list of names, or -1. */
static int choice_option(opt_id id, const char *const **names, size_t *n) {
  static const char *const formats[] = {"text", "html", "pprof", "folded",
                                        "speedscope", "dhat"};
  static const char *const keys[] = {"bytes", "allocs", "lifetime", "density",
                                     "accesses"};
  static const char *const bys[] = {"context", "function", "file"};
  static const char *const at_end[] = {"live", "leaked"};
  switch (id) {
  case OPT_FORMAT: *names = formats, *n = 6; return 0;
  case OPT_SORT: *names = keys, *n = 5; return 0;
  case OPT_BY: *names = bys, *n = 3; return 0;
  case OPT_DHAT_AT_END: *names = at_end, *n = 2; return 0;
  default: return -1;
  }
}

static int apply_report(cli_opts *o, const opt_def *d, const char *v,
                        mp_err *err) {
  rpt_opts *r = &o->report;
  unsigned *target = unsigned_option(r, d->id);
  const char *const *names;
  size_t n;
  unsigned long u = 0;
  int i = 0;
  if (target) {
    if (parse_unsigned(d->name, v, UINT32_MAX, &u, err) != 0) return -1;
    *target = (unsigned)u;
    return 0;
  }
  if (d->id == OPT_FORMAT && o->cmd == CLI_CHECK) {
    static const char *const check_formats[] = {"text", "json"};
    if (parse_name(d->name, v, check_formats, 2, &i, err) != 0) return -1;
    o->check_json = i;
    return 0;
  }
  if (choice_option(d->id, &names, &n) == 0) {
    if (parse_name(d->name, v, names, n, &i, err) != 0) return -1;
    if (d->id == OPT_FORMAT) r->format = (rpt_format)i;
    if (d->id == OPT_SORT) r->sort = (rpt_key)i;
    if (d->id == OPT_BY) r->by = (rpt_by)i;
    if (d->id == OPT_DHAT_AT_END) r->dhat_leaked = i;
    return 0;
  }
  switch (d->id) {
  case OPT_TOP:
    if (parse_unsigned(d->name, v, UINT32_MAX, &u, err) != 0) return -1;
    r->top = u;
    return 0;
  case OPT_BASE:
    if (!*v) return mp_fail(err, "empty file name for --base");
    r->base = v;
    return 0;
  case OPT_COLD_DENSITY: {
    char *end;
    double x = strtod(v, &end);
    if (!*v || *end || !(x == x)) return bad_value(d->name, v, "a number", err);
    r->clang.lifetime_access_density_cold = (float)x;
    return 0;
  }
  case OPT_HOT_HINTS: return parse_bool(d->name, v, &r->clang.use_hot_hints, err);
  case OPT_KEEP_NOTCOLD:
    return parse_bool(d->name, v, &r->clang.keep_all_not_cold, err);
  default: return 0;
  }
}

static const opt_def *find_opt(const char *name, size_t len) {
  for (size_t i = 0; i < sizeof OPTS / sizeof OPTS[0]; i++)
    if (strlen(OPTS[i].name) == len && !strncmp(OPTS[i].name, name, len))
      return &OPTS[i];
  return NULL;
}

/* W,FILE with W a positive integer, as llvm-profdata takes it. */
static int add_weighted(cli_opts *o, const char *v, mp_err *err) {
  const char *comma = strchr(v, ',');
  char *end;
  unsigned long long w = strtoull(v, &end, 10);
  if (!comma || end != comma || comma == v || !comma[1])
    return mp_fail(err, "invalid value '%s' for --weighted-input (expected "
                   "WEIGHT,FILE)", v);
  if (w == 0 || *v == '-')
    return mp_fail(err, "input weight must be a positive integer: '%s'", v);
  push(&o->w_inputs, &o->n_w_inputs, comma + 1);
  o->w_weights =
      mp_xrealloc(o->w_weights, o->n_w_inputs * sizeof *o->w_weights);
  o->w_weights[o->n_w_inputs - 1] = w;
  return 0;
}

static int apply(cli_opts *o, const opt_def *d, const char *v, mp_err *err) {
  static const unsigned memprof_versions[] = {2, 3, 4};
  static const unsigned index_versions[] = {11, 12, 13};
  switch (d->id) {
  case OPT_HELP: o->help = 1; return 0;
  case OPT_VERSION: o->version = 1; return 0;
  case OPT_OUTPUT:
    if (!*v) return mp_fail(err, "empty output file name");
    o->out = v;
    return 0;
  case OPT_BINARY: push(&o->binaries, &o->n_binaries, v); return 0;
  case OPT_DEBUG_DIR: push(&o->debug_dirs, &o->n_debug_dirs, v); return 0;
  case OPT_MEMPROF_VERSION:
    return parse_uint_choice(d->name, v, memprof_versions, 3,
                             &o->index.memprof_version, err);
  case OPT_INDEX_VERSION:
    return parse_uint_choice(d->name, v, index_versions, 3,
                             &o->index.index_version, err);
  case OPT_FULL_SCHEMA: o->index.full_schema = 1; return 0;
  case OPT_NO_SYM_SECTION: o->index.symbolized_section = 0; return 0;
  case OPT_NO_PREFILL: o->no_prefill = 1; return 0;
  case OPT_LIBDW_ONLY: o->libdw_only = 1; return 0;
  case OPT_SYMBOLIZED: o->symbolized = 1; return 0;
  case OPT_MEMORY: return 0;
  case OPT_WEIGHTED_INPUT: return add_weighted(o, v, err);
  case OPT_INSTR: return 0;
  case OPT_SPARSE: o->index.sparse = 1; return 0;
  case OPT_NUM_THREADS: {
    unsigned long n = 0;
    if (parse_unsigned(d->name, v, UINT32_MAX, &n, err) != 0) return -1;
    o->num_threads = (unsigned)n;
    return 0;
  }
  case OPT_TIMELINE:
    if (!*v) return mp_fail(err, "empty file name for --timeline");
    push(&o->timelines, &o->n_timelines, v);
    return 0;
  case OPT_NO_TIMELINE: o->no_timeline = 1; return 0;
  case OPT_ROOTS:
    if (!*v) return mp_fail(err, "empty file name for --roots");
    push(&o->roots_files, &o->n_roots_files, v);
    return 0;
  case OPT_HOTCOLD_SITES:
    if (!*v) return mp_fail(err, "empty file name for --hotcold-sites");
    o->check_sites = v;
    return 0;
  default: return apply_report(o, d, v, err);
  }
  return 0;
}

/* One option argument at argv[*i]; may consume argv[*i + 1]. */
static int parse_option(int argc, char **argv, int *i, cli_opts *o,
                        mp_err *err) {
  const char *arg = argv[*i];
  const char *name = arg + (arg[1] == '-' ? 2 : 1);
  const char *eq = strchr(name, '=');
  size_t len = eq ? (size_t)(eq - name) : strlen(name);
  const opt_def *d = find_opt(name, len);
  if (!d) return mp_fail(err, "unknown option '%.*s'", (int)(len + (name - arg)), arg);
  if (!(d->cmds & (1u << o->cmd)))
    return mp_fail(err, "option '%.*s' is not valid %s%s",
                   (int)(len + (name - arg)), arg,
                   o->cmd == CLI_NONE ? "before a command" : "for ",
                   o->cmd == CLI_NONE ? "" : cli_cmd_name(o->cmd));
  const char *v = NULL;
  if (d->takes_value == 2) {
    v = eq ? eq + 1 : NULL;
  } else if (d->takes_value) {
    if (eq) {
      v = eq + 1;
    } else if (*i + 1 < argc) {
      v = argv[++*i];
    } else {
      return mp_fail(err, "option '%s' needs a value", arg);
    }
  } else if (eq) {
    return mp_fail(err, "option '%.*s' takes no value", (int)(len + (name - arg)), arg);
  }
  return apply(o, d, v, err);
}

static int parse_command(const char *arg, cli_opts *o, mp_err *err) {
  if (!strcmp(arg, "merge")) {
    o->cmd = CLI_MERGE;
  } else if (!strcmp(arg, "show")) {
    o->cmd = CLI_SHOW;
  } else if (!strcmp(arg, "report")) {
    o->cmd = CLI_REPORT;
  } else if (!strcmp(arg, "check")) {
    o->cmd = CLI_CHECK;
  } else {
    return mp_fail(err,
                   "unknown command '%s' (expected merge, show, report or "
                   "check)", arg);
  }
  return 0;
}

/* Weighted inputs follow the plain ones, in llvm-profdata's order. */
static void finish_inputs(cli_opts *o) {
  for (size_t i = 0; i < o->n_w_inputs; i++)
    push(&o->inputs, &o->n_inputs, o->w_inputs[i]);
  o->weights = mp_xmalloc((o->n_inputs + 1) * sizeof *o->weights);
  size_t plain = o->n_inputs - o->n_w_inputs;
  for (size_t i = 0; i < o->n_inputs; i++)
    o->weights[i] = i < plain ? 1 : o->w_weights[i - plain];
}

int cli_parse(int argc, char **argv, cli_opts *o, mp_err *err) {
  memset(o, 0, sizeof *o);
  o->index = (mp_index_opts)MP_INDEX_OPTS_DEFAULT;
  o->report = (rpt_opts)RPT_OPTS_DEFAULT;
  int only_inputs = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!only_inputs && !strcmp(a, "--")) {
      only_inputs = 1;
    } else if (!only_inputs && a[0] == '-' && a[1]) {
      if (parse_option(argc, argv, &i, o, err) != 0) return -1;
    } else if (o->cmd == CLI_NONE) {
      if (parse_command(a, o, err) != 0) return -1;
    } else {
      push(&o->inputs, &o->n_inputs, a);
    }
  }
  finish_inputs(o);
  if (o->help || o->version) return 0;
  if (o->cmd == CLI_NONE) return mp_fail(err, "no command given");
  if (!o->n_inputs) return mp_fail(err, "no input files");
  if (o->cmd == CLI_CHECK) {
    if (o->n_inputs < 2)
      return mp_fail(err, "check needs a profile and the optimized binary");
    o->check_binary = o->inputs[--o->n_inputs];
  }
  if (o->no_timeline && o->n_timelines)
    return mp_fail(err, "--timeline and --no-timeline contradict each other");
  return 0;
}

void cli_free(cli_opts *o) {
  free((void *)o->binaries);
  free((void *)o->debug_dirs);
  free((void *)o->inputs);
  free((void *)o->w_inputs);
  free((void *)o->timelines);
  free((void *)o->roots_files);
  free(o->w_weights);
  free(o->weights);
  memset(o, 0, sizeof *o);
}
