/* report.h - `memprof-profdata report`: the summary and per-context model
 * every output format reads.
 *
 * A report is computed from the merged mp_profile (model.h) the merge
 * builds, never from a second reader.  An allocation *context* is one
 * distinct call stack with alloc sites: the model lists an inlined
 * allocation under the record of each inline parent too, and the report
 * counts it once.  Each context carries its MIB, display names and the
 * verdict clang-22 would give it (report_verdict.c); contexts sharing their
 * allocation call (its location and the calls it was inlined through) form
 * an allocation *site*, the call clang annotates.
 *
 * Formats (report_text.c, report_html.c, report_pprof.c, report_folded.c,
 * report_speedscope.c, report_dhat.c) only read an rpt; report_names.c
 * gives frames their demangled names and source locations, report_out.c
 * has what the formats share.
 */
#ifndef PROFDATA_REPORT_H
#define PROFDATA_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/io.h"
#include "profdata/model/alloc_type.h"
#include "profdata/model/model.h"
#include "profdata/timeline/timeline.h"
#include "profdata/roots/roots.h"

typedef enum rpt_format {
  RPT_TEXT,
  RPT_HTML,
  RPT_PPROF,
  RPT_FOLDED,
  RPT_SPEEDSCOPE,
  RPT_DHAT,
} rpt_format;

/* The value a report ranks (and folded output sums) by. */
typedef enum rpt_key {
  RPT_BYTES,
  RPT_ALLOCS,
  RPT_LIFETIME,
  RPT_DENSITY,
  RPT_ACCESSES,
} rpt_key;

typedef enum rpt_by { RPT_BY_CONTEXT, RPT_BY_FUNCTION, RPT_BY_FILE } rpt_by;

/* clang-22's options of the same names (MemProfCommon.cpp,
 * MemoryProfileInfo.cpp, MemProfUse.cpp), with clang's defaults. */
typedef struct rpt_clang_opts {
  float lifetime_access_density_cold;    /* accesses/byte/s, 0.05 */
  unsigned ave_lifetime_cold;            /* seconds, 200 */
  unsigned min_ave_lifetime_density_hot; /* 1000 */
  int use_hot_hints;                     /* 0 */
  unsigned matching_cold_percent;        /* 100 */
  unsigned callsite_cold_percent;        /* 100 */
  int keep_all_not_cold;                 /* 0 */
} rpt_clang_opts;

#define RPT_CLANG_DEFAULTS {0.05f, 200, 1000, 0, 100, 100, 0}

typedef struct rpt_opts {
  rpt_format format;
  rpt_key sort;
  rpt_by by;
  size_t top;          /* rows of the top-N tables; 0: all */
  rpt_clang_opts clang;
  const char *base;    /* --base=OLD: the profile to diff against */
  int dhat_leaked;     /* --dhat-at-end=leaked: DHAT's eb/ebk are the leaks */
} rpt_opts;

#define RPT_OPTS_DEFAULT {RPT_TEXT, RPT_BYTES, RPT_BY_CONTEXT, 20, \
                          RPT_CLANG_DEFAULTS, NULL, 0}

/* LLVM's AllocationType bits; RPT_AMBIGUOUS is the "ambiguous" attribute
 * clang puts on a call whose contexts disagree. */
enum {
  RPT_NONE = 0,
  RPT_NOTCOLD = MP_ALLOC_NOTCOLD,
  RPT_COLD = MP_ALLOC_COLD,
  RPT_HOT = MP_ALLOC_HOT,
  RPT_AMBIGUOUS = 8,
  RPT_UNMATCHED = 16, /* a call clang cannot find (report_verdict.c) */
};

typedef struct rpt_ctx {
  uint32_t stack;  /* model stack id, leaf first */
  uint32_t site;   /* index into rpt.sites */
  const mpf_mib *mib;
  uint8_t verdict; /* RPT_COLD / RPT_NOTCOLD / RPT_HOT: getAllocType */
  uint8_t in_library; /* the model site's (model.h) */
  /* base diff: index + 1 of the matching context in rpt.base, 0 if new */
  uint32_t base_match;
  uint8_t eh_pool; /* libstdc++'s emergency exception pool (report_pool.c) */
} rpt_ctx;

/* One allocation call: the contexts whose frames up to the first physical
 * one (the call and the calls it was inlined through) are the same. */
typedef struct rpt_site {
  uint32_t frame;    /* model frame id of the allocation frame */
  uint32_t first;    /* its first context */
  uint8_t attr;      /* what clang attaches: RPT_COLD/NOTCOLD/HOT/AMBIGUOUS */
  uint32_t mib_cold, mib_notcold; /* !memprof MIB nodes, when ambiguous */
} rpt_site;

typedef struct rpt_summary {
  uint64_t contexts, allocs, bytes, lifetime, accesses;
  uint64_t bytes_cold, bytes_notcold, bytes_hot, bytes_ambiguous;
  uint64_t ctx_cold, ctx_notcold, ctx_hot, ctx_ambiguous;
  uint64_t never_accessed_ctx, never_accessed_allocs, never_accessed_bytes;
  uint64_t short_lived_allocs, short_lived_bytes;
  /* per allocation call: the attribute clang-22 attaches, and MIB nodes */
  uint64_t sites, site_cold, site_notcold, site_hot, site_ambiguous;
  uint64_t site_unmatched, bytes_unmatched;
  uint64_t mib_cold, mib_notcold;
  /* clang matches after its pre-inliner only (report_verdict.c): the
   * calls above that are inlined allocations, and the calls per attribute
   * had the pre-inliner inlined no allocation */
  uint64_t site_inlined;
  uint64_t leaf_cold, leaf_notcold, leaf_hot, leaf_ambiguous;
  /* frames named from ELF symbol tables (rpt_frame_from_symtab): the
   * contexts with one or more, and the distinct frames those use */
  uint64_t symtab_ctx, symtab_frames;
  /* the contexts of libstdc++'s exception pool: allocations and bytes */
  uint64_t pool_allocs, pool_bytes;
} rpt_summary;

typedef struct rpt {
  const mp_profile *p;
  rpt_opts opts;
  rpt_ctx *ctx;
  size_t n_ctx;
  rpt_site *sites;
  size_t n_sites;
  rpt_summary sum;
  int has_names;      /* some frame has a symbol name */
  int has_accesses;   /* TotalAccessCount is in the profile */
  int has_lifetime;   /* TotalLifetime is */
  int has_density;    /* TotalLifetimeAccessDensity is */
  /* Access counts look missing: over ACCESSLESS_PERCENT of the contexts
   * recorded no access (an instrumented program initializes most of what
   * it allocates; an uninstrumented one counts only what the runtime's
   * memset/memcpy see).  Verdicts are then not given per context. */
  int no_access_seen;
  uint64_t accessless_ctx; /* contexts with no access and zero density */
  char **names;       /* demangled name per model string id (lazy) */
  char **files;       /* source path without "dir/.." per model string id (lazy) */
  char **guid_names;  /* "0x..." per frame without a name (lazy) */
  struct rpt *base;   /* --base, or NULL */
  struct rpt_timeline *tl;  /* the processes' timelines, or NULL */
  struct rpt_roots *roots;  /* the processes' roots censuses, or NULL */
} rpt;

/* Contexts, sites, verdicts and the summary of `p` (which must outlive
 * the report). */
rpt *rpt_build(const mp_profile *p, const rpt_opts *o);
/* Match every context of r with the same call stack in `base` (ours). */
void rpt_attach_base(rpt *r, rpt *base);
void rpt_free(rpt *r);

/* How the profile was recorded, in the words every format uses
 * (report_facts.c): "Sampled every R bytes on average: ..." written into
 * buf (room for 256 bytes is enough for a few intervals), or NULL when
 * every count is exact; "Not instrumented (preloaded): ...", or NULL. */
#define RPT_NOTE_SIZE 320
const char *rpt_sampled_note(const mp_profile *p, char *buf, size_t n);
const char *rpt_uninstrumented_note(const mp_profile *p);
/* Both that apply, JSON-escaped and joined by "; ", between open and
 * close; nothing when neither applies. */
void rpt_json_notes(const mp_profile *p, mp_buf *out, const char *open,
                    const char *close);
/* The programs the inputs profiled (mp_profile.programs), those with the
 * most inputs first (ties by path), each with its count of profiles
 * where it has several ("/usr/bin/cc1 (3 profiles), /usr/bin/make"), at
 * most RPT_PROGRAMS_NAMED of them named ("and 4 more").  Appended to out,
 * JSON-escaped if `json`; returns how many programs there are (0: nothing
 * written). */
#define RPT_PROGRAMS_NAMED 8
size_t rpt_programs(const mp_profile *p, mp_buf *out, int json);

/* ---- libstdc++'s emergency exception pool (report_pool.c) ----------- */

/* What the reports call it, and what they say of it. */
#define RPT_EH_POOL_NAME "libstdc++ exception pool"
#define RPT_EH_POOL_WHY "allocated by libstdc++ before main and held by it " \
  "for the whole run: still reachable, not a leak"
/* Mark the contexts that hold it (rpt_ctx.eh_pool) and sum them. */
void rpt_find_eh_pool(rpt *r);
/* A stack id of a raw profile whose stack has no symbolizable frame is
 * the pool when it is the profile's first (lowest) id and holds one block
 * of the pool's size at exit. */
int rpt_eh_pool_unnamed(uint64_t id, uint64_t first_id, uint64_t bytes,
                        uint64_t blocks);

/* ---- timelines (report_timeline.c) ---------------------------------- */

/* Live bytes and blocks of one report context (RPT_TIMELINE_NO_FRAMES: of the
 * stacks without a symbolizable frame, which have no context;
 * RPT_TIMELINE_EH_POOL: of such a stack that is libstdc++'s exception
 * pool, rpt_eh_pool_unnamed). */
#define RPT_TIMELINE_NO_FRAMES UINT32_MAX
#define RPT_TIMELINE_EH_POOL (UINT32_MAX - 1)
typedef struct rpt_timeline_val {
  uint32_t ctx;
  uint64_t bytes, blocks;
} rpt_timeline_val;

/* One census joined: values summed per context, largest first. */
typedef struct rpt_timeline_census {
  const mp_timeline_census *c;
  rpt_timeline_val *v;
  size_t n;
} rpt_timeline_census;

/* One process: its timeline and what of it is joined to the contexts. */
typedef struct rpt_timeline_proc {
  char *path;        /* the timeline file */
  mp_timeline tl;
  rpt_timeline_val *at_peak; /* per context, largest first */
  size_t n_at_peak;
  rpt_timeline_census *census; /* parallel to tl.census */
  rpt_timeline_val *at_exit; /* per context, largest first */
  size_t n_at_exit;
  /* Where its times count from: the process's start, as the runtime
   * recorded it (the timeline's StartMs); the reports give times from it
   * (rpt_timeline_since). */
  int64_t start_ms;
} rpt_timeline_proc;

/* t_ms of p's clock as milliseconds since p's start (0 for an event the
 * runtime stamped before its clock started, which reads 0). */
uint64_t rpt_timeline_since(const rpt_timeline_proc *p, uint64_t t_ms);

/* Timelines of the merged processes: each keeps its own peak; live at
 * exit is summed over them (docs/memprof-profdata.md). */
typedef struct rpt_timeline {
  rpt_timeline_proc *proc;
  size_t n_proc;
  rpt_timeline_val *at_exit; /* summed per context, largest first */
  size_t n_at_exit;
  uint64_t exit_bytes, exit_blocks;
  /* of those, libstdc++'s exception pool (still reachable, not a leak) */
  uint64_t pool_exit_bytes, pool_exit_blocks;
  /* of those, what no context counts (RPT_TIMELINE_EH_POOL) */
  uint64_t pool_unnamed_bytes, pool_unnamed_blocks;
  size_t n_raw; /* raw inputs merged, with a timeline or not */
} rpt_timeline;

/* What joins a timeline to the profile: the raw profile it belongs to and
 * that profile's stack ids with their model stacks (mp_raw_stack_ids). */
typedef struct rpt_timeline_input {
  const char *path, *raw;
  mp_timeline tl; /* taken over by rpt_timeline_add, also when it fails */
  const uint64_t *ids;
  const uint32_t *stacks; /* MP_RAW_NO_FRAMES: no symbolizable frame */
  size_t n;
} rpt_timeline_input;

/* Join one process's timeline to r's contexts.  Fails, leaving r as it
 * was, when the timeline names a stack id the raw profile does not have
 * (it belongs to another run). */
int rpt_timeline_add(rpt *r, rpt_timeline_input *in, mp_err *err);
void rpt_timeline_free(rpt_timeline *t);
/* The value is libstdc++'s exception pool. */
int rpt_timeline_is_pool(const rpt *r, uint32_t ctx);
/* The contexts a graph of memory over time shows: the `max` with the
 * most live bytes at any census, peak or exit of any process, largest
 * first (RPT_TIMELINE_NO_FRAMES and RPT_TIMELINE_EH_POOL among them). */
uint32_t *rpt_timeline_graph_contexts(const rpt *r, size_t max, size_t *n);

/* The timeline part of the text report (report_timeline_out.c): the summary's
 * lines (peaks, live at exit), and the tables of the contexts live at each
 * peak and at exit; every line starts with `prefix`. */
void rpt_write_timeline_summary(rpt *r, mp_buf *out, const char *prefix);
void rpt_write_timeline_text(rpt *r, mp_buf *out, const char *prefix);
/* The same data as a JSON member ("tl":{...},) for the HTML page. */
void rpt_write_timeline_json(rpt *r, mp_buf *out);
/* Allocations per second over a process's censuses (report_timeline_rate.c):
 * its text table, and the JSON member "rate":{...} of its process. */
void rpt_write_timeline_rate_text(const rpt_timeline_proc *p, mp_buf *out,
                                  const char *prefix);
void rpt_write_timeline_rate_json(const rpt_timeline_proc *p, mp_buf *out);

/* raw stack id -> report context index (r->n_ctx: the stack has no
 * symbolizable frame) for the ids of one raw profile; a keyed map the
 * caller frees (report_timeline.c). */
void rpt_stack_id_map(const rpt *r, const uint64_t *ids, const uint32_t *stacks, size_t n,
                      mp_map *out);

/* ---- who holds the memory (report_roots.c) -------------------------- */

typedef struct rpt_roots rpt_roots;
/* A roots file and what joins it to the profile, as rpt_timeline_input. */
typedef struct rpt_roots_input {
  const char *path, *raw;
  mp_roots rs; /* taken over by rpt_roots_add, also when it fails */
  const uint64_t *ids;
  const uint32_t *stacks;
  size_t n;
} rpt_roots_input;
/* Join one process's censuses to r; fails, leaving r as it was, when the
 * file names a stack id the raw profile does not have. */
int rpt_roots_add(rpt *r, rpt_roots_input *in, mp_err *err);
void rpt_roots_free(rpt_roots *t);
/* Per census: the roots retaining the most, each with its top contexts;
 * leaked (unreachable) and still reachable contexts. */
void rpt_write_roots_text(rpt *r, mp_buf *out, const char *prefix);

/* What the other formats read of the censuses: the processes' roots
 * files (the k-th's path, pid and censuses in the order taken). */
size_t rpt_roots_n_proc(const rpt *r);
const mp_roots *rpt_roots_file(const rpt *r, size_t k, const char **path);
/* A census list of process k summed per report context (ctx r->n_ctx:
 * the stacks without a symbolizable frame), largest first; shared_bytes:
 * of bytes, those several roots reach (rpt_roots_reachable only).  The
 * caller frees. */
typedef struct rpt_roots_val {
  uint32_t ctx;
  uint64_t bytes, blocks, direct_bytes, direct_blocks, shared_bytes;
} rpt_roots_val;
rpt_roots_val *rpt_roots_by_ctx(const rpt *r, size_t k, const mp_roots_ctx *v, size_t n,
                                size_t *n_out);
/* Every block some root reaches (the roots' lists and the shared one). */
rpt_roots_val *rpt_roots_reachable(const rpt *r, size_t k, const mp_roots_census *c,
                                   size_t *n_out);
/* The roots of c that reach a block, most retained first (then most
 * reached), as the text report lists them: indices into c->roots. */
size_t *rpt_roots_order(const mp_roots_census *c, size_t *n_out);
/* "at exit", "on demand", "at a dump", "at a new high". */
const char *rpt_roots_kind_name(uint64_t kind);
/* The censuses as the JSON member ,"roots":{...} of the HTML page
 * (report_roots_json.c), nothing without roots files; marks in
 * shown[ctx] every context it lists. */
void rpt_write_roots_json(const rpt *r, mp_buf *out, uint8_t *shown);
/* A band's roots as a JSON array of their labels, in the band's order
 * (report_roots_graph.c). */
void rpt_write_band_labels_json(mp_buf *out, const mp_roots_census *c, const mp_roots_band *b);
/* The graph of who held the memory over a process's censuses as the JSON
 * member ,"graph":{...} (report_roots_graph.c); for two censuses or more. */
void rpt_write_roots_graph_json(mp_buf *out, const mp_roots *rs);

/* ---- values ---------------------------------------------------------- */

double rpt_avg_size(const rpt_ctx *c);
double rpt_avg_lifetime_ms(const rpt_ctx *c);
/* clang's lifetime access density: accesses per byte per lifetime second */
double rpt_density(const rpt_ctx *c);
/* With a sampled profile, how far sampling alone may have put the
 * context's bytes and allocations: the half-width of their 95% range
 * relative to the estimate (0.2: +-20%), for n allocations of the
 * context's average size s each recorded with probability
 * p = 1 - exp(-s/R): 1.96 sqrt((1 - p) / (n p)) (the Horvitz-Thompson
 * estimate's standard error; R the largest interval of the inputs).
 * -1 when the counts are exact. */
double rpt_sampling_error(const rpt *r, const rpt_ctx *c);
/* That error as the report prints it ("+-20%"), into buf. */
const char *rpt_error_text(double err, char *buf, size_t n);
/* The context's value for `k` as a summable quantity (folded, flame). */
uint64_t rpt_value(const rpt_ctx *c, rpt_key k);
/* Context indices ordered by o->sort (report.c says how each key ranks). */
uint32_t *rpt_order(const rpt *r, rpt_key k);
const char *rpt_key_name(rpt_key k);
/* Verdicts are given per context: the profile has densities and access
 * counts do not look missing. */
int rpt_verdicts_known(const rpt *r);
/* The program counted its accesses (it was compiled with -fmemory-profile:
 * the profile is not flagged uninstrumented): else no access count,
 * density or verdict is shown at all. */
int rpt_accesses_meaningful(const rpt *r);
const char *rpt_verdict_name(unsigned v);

/* ---- per function / per file totals (--by) -------------------------- */

typedef struct rpt_group {
  const char *name;  /* function display name or file path */
  uint64_t contexts, allocs, bytes, lifetime, accesses, density;
  uint64_t bytes_cold;
} rpt_group;

/* Totals over the contexts whose stack contains the function (once per
 * context) or whose allocation frame is in the file; sorted by o->sort. */
rpt_group *rpt_groups(rpt *r, rpt_by by, size_t *n);

/* ---- verdicts (report_verdict.c) ------------------------------------ */

/* Attribute and MIB nodes of every site (r->sites, r->ctx verdicts set). */
void rpt_decide_sites(rpt *r);

/* ---- names (report_names.c) ----------------------------------------- */

/* `name` demangled (__cxa_demangle), or a copy of it; free() it. */
char *rpt_demangle(const char *name);
/* Demangled function name of a model frame, or its GUID as 0x%016x. */
const char *rpt_frame_name(rpt *r, uint32_t frame);
/* Source file of a frame, or NULL. */
const char *rpt_frame_file(const rpt *r, uint32_t frame);
uint32_t rpt_frame_line(const rpt *r, uint32_t frame);
uint32_t rpt_frame_column(const rpt *r, uint32_t frame);
/* "file:line:col", or "?" when unknown, into buf. */
const char *rpt_frame_loc(const rpt *r, uint32_t frame, char *buf, size_t n);

/* The frame was named from a module's ELF symbol table, that module
 * having no debug information (msym_set_symtab_fallback): it has a name
 * and no source location at all. */
int rpt_frame_from_symtab(const rpt *r, uint32_t frame);

/* The stack of a context, leaf first, one frame a line, each line starting
 * with `prefix`. */
void rpt_print_stack(rpt *r, mp_buf *out, uint32_t stack, const char *prefix);

/* ---- formats -------------------------------------------------------- */

void rpt_write_text(rpt *r, mp_buf *out);
/* The text report's section on temporary allocations, when the profile
 * has their counts (report_temporary.c). */
void rpt_write_temporaries_text(rpt *r, mp_buf *out);
/* The contexts with temporary allocations, most first (ties by bytes,
 * then by their stacks' frames, mp_stack_cmp);
 * *n gets their number.  Caller frees. */
uint32_t *rpt_temporaries_order(const rpt *r, size_t *n);
void rpt_write_html(rpt *r, mp_buf *out);
int rpt_write_pprof(rpt *r, mp_buf *out, mp_err *err);
void rpt_write_folded(rpt *r, mp_buf *out);
void rpt_write_speedscope(rpt *r, mp_buf *out);
void rpt_write_dhat(rpt *r, mp_buf *out);

/* ---- helpers the formats share (report_out.c) --------------------------- */

/* Dense numbers, from `first` on, of the model frames some context's stack
 * uses (UINT32_MAX for the others); *n is one past the last number. */
uint32_t *rpt_frame_index(const rpt *r, uint32_t first, uint32_t *n);

/* JSON string contents (no quotes) with everything escaped that JSON and
 * an HTML <script> block need escaped. */
void rpt_json_str(mp_buf *out, const char *s);
/* Decimal digits of v (the formats' hot loops print millions of them). */
void rpt_put_u64(mp_buf *out, uint64_t v);

/* ---- values for people (report_format.c; report_page.html's functions of
 * the same names format them alike) ------------------------------------- */

/* "12 B", "1.50 KiB", ... into buf. */
const char *rpt_human_bytes(uint64_t v, char *buf, size_t n);
/* Three significant digits, no exponent, no trailing zeros; 100 and
 * more as a whole number: "0", "0.0002", "1.5", "30", "1120". */
const char *rpt_fmt_sig3(double x, char *buf, size_t n);
/* "0.0002 ms", "30 ms", "1.73 s" (rpt_fmt_sig3 of ms, or of s from
 * 1000 ms on). */
const char *rpt_fmt_ms(double ms, char *buf, size_t n);
/* part of whole, one decimal: "12.3%" ("0.0%" when whole is 0). */
const char *rpt_fmt_pct(uint64_t part, uint64_t whole, char *buf, size_t n);
/* The context's average block size, rounded to the byte, as bytes. */
const char *rpt_fmt_avg_size(const rpt_ctx *c, char *buf, size_t n);

#endif
