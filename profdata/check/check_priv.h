/* check_priv.h - what the files of profdata/check/ share: the binary's
 * functions and calls, the allocation functions clang can call, and the
 * match of calls to the report's contexts.
 */
#ifndef PROFDATA_CHECK_PRIV_H
#define PROFDATA_CHECK_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "check.h"
#include "profdata/hcsites/hcsites.h"
#include "symbolizer/symbolizer.h"

/* ---- allocation functions (check_binary.c) ------------------------------ */

typedef enum chk_kind {
  CHK_OTHER,   /* not an allocation function */
  CHK_HINTED,  /* a __hot_cold_t form: the hint is an argument */
  CHK_NEW,     /* an unhinted operator new form clang could have hinted */
  CHK_C_ALLOC, /* malloc and the C family: clang never hints them */
} chk_kind;

/* The kind of the function named `name`; for CHK_HINTED, in *arg the
 * 0-based argument position of the __hot_cold_t parameter. */
chk_kind chk_alloc_kind(const char *name, int *arg);

/* ---- the binary (check_binary.c) ---------------------------------------- */

typedef struct chk_sym {
  const char *name;
  uint64_t addr, size;
  int shndx;
} chk_sym;

typedef struct chk_slot {
  uint64_t addr; /* a GOT slot, or a PLT entry */
  const char *name;
} chk_slot;

typedef struct chk_section {
  uint64_t addr, size;
  const uint8_t *data;
  int is_plt;
  char name[32];
} chk_section;

typedef struct chk_elf {
  struct chk_elf_priv *priv; /* the open file */
  chk_sym *syms;             /* function symbols, by address */
  size_t n_syms;
  chk_slot *got;             /* relocated GOT slots, by address */
  size_t n_got;
  chk_slot *plt;             /* PLT entries, by address (check_disasm.c) */
  size_t n_plt, cap_plt;
  chk_section *exec;         /* executable sections */
  size_t n_exec;
} chk_elf;

int chk_elf_open(const char *path, chk_elf *e, mp_err *err);
void chk_elf_close(chk_elf *e);
/* The function symbol that covers addr, or NULL. */
const chk_sym *chk_elf_func_at(const chk_elf *e, uint64_t addr);
/* The name of the allocation function (or any function) at `addr`
 * (a symbol's start or a PLT entry), or NULL. */
const char *chk_elf_target_name(const chk_elf *e, uint64_t addr);
/* The name the relocated GOT slot at addr resolves to, or NULL. */
const char *chk_elf_got_name(const chk_elf *e, uint64_t addr);

/* ---- the calls (check_disasm.c) ----------------------------------------- */

#define CHK_NO_VALUE (-1)

typedef struct chk_call {
  uint64_t addr;      /* the call (or tail jump) instruction */
  uint64_t target;    /* its direct target, 0 when through memory */
  uint64_t func;      /* start of the function holding it, 0 unknown */
  const char *callee; /* the allocation function, NULL for other calls */
  uint8_t kind;       /* chk_kind */
  int value;          /* CHK_HINTED: the hint's low 8 bits, or CHK_NO_VALUE */
  uint8_t len;        /* the instruction's bytes: a call returns to addr + len */
  uint8_t jump;       /* a (tail) jump, not a call */
} chk_call;

typedef struct chk_calls {
  chk_call *alloc; /* calls of allocation functions, by address */
  size_t n_alloc, cap_alloc;
  chk_call *edge;  /* direct calls and tail jumps to other functions, by
                      address */
  size_t n_edge, cap_edge;
} chk_calls;

/* Disassemble every function of `e` (PLT sections first, to name their
 * entries). */
int chk_disasm(chk_elf *e, chk_calls *out, mp_err *err);
void chk_calls_free(chk_calls *c);

/* The call instruction before a return address (check_disasm.c): opened
 * on `e` (its PLT entries named), then asked per address. */
typedef struct chk_caller chk_caller;
chk_caller *chk_caller_open(chk_elf *e, mp_err *err);
void chk_caller_close(chk_caller *c);
/* The call that returns to link-time address `ret`: 1 with *out filled
 * (callee: the target's name, NULL when not known; kind: its chk_kind),
 * 0 when the instruction before `ret` is no call. */
int chk_call_before(chk_caller *c, uint64_t ret, chk_call *out);

/* ---- matching (check_match.c) ------------------------------------------- */

/* One location as the profile keys it. */
typedef struct chk_loc {
  uint64_t guid;
  uint32_t line_offset, column;
} chk_loc;

/* An entry of a lookup by innermost location: `idx` of a site or call
 * whose innermost frame is at (guid, line_offset); sorted by those. */
typedef struct chk_key {
  uint64_t guid;
  uint32_t line_offset;
  uint32_t idx;
} chk_key;

/* An allocation call with its inline frames (innermost first). */
typedef struct chk_site {
  const chk_call *call;
  const msym_frame *frames;
  chk_loc *locs;
  size_t n;
  uint32_t n_ctx; /* contexts it serves */
  /* Off the profile's paths: a hinted call no context serves whose
   * innermost `helper_frames` frames (a helper's, inlined or cloned
   * there after clang hinted it) are those of context helper_ctx: it
   * inherits that helper's hint.  0 frames: not such a call. */
  uint32_t helper_frames, helper_ctx;
  mp_hcs_site run; /* --hotcold-sites: the records of this call, summed */
  uint8_t died_young; /* served cold, lived under the cold lifetime threshold */
} chk_site;

enum {
  CHK_R_NONE,
  CHK_R_LIBRARY,     /* allocated inside a library / location clang cannot match */
  CHK_R_MALLOC,      /* the call is malloc & co. */
  CHK_R_NOT_REWRITTEN, /* an operator new call without a hint */
  CHK_R_NOT_IN_BINARY, /* the function is not in the binary */
  CHK_R_STALE,       /* the function's allocation calls are elsewhere */
  CHK_R_AMBIGUOUS,   /* a cold context at a call hinted ambiguous, in a
                        binary without LTO clones */
  CHK_R_AMBIGUOUS_LTO, /* the same in a binary with LTO clones */
  CHK_R_CALL_NOTCOLD, /* a cold context at a call hinted not cold */
  CHK_R_LIFETIME,    /* not cold: lives shorter than the lifetime threshold */
  CHK_R_DENSITY,     /* not cold: accessed more than the density threshold */
  CHK_R_VERDICT_DIFFERS, /* not cold here, yet a cold hint landed */
  CHK_R_NUM,
};

/* Per context: the sites that serve it and what became of it. */
typedef struct chk_ctx {
  uint32_t *sites; /* indices into chk.sites */
  size_t n_sites;
  uint8_t cold_hint; /* some serving site passes a cold hint (< 128) */
  uint8_t reason;    /* CHK_R_*, CHK_R_NONE: a cold context's cold hint
                        landed, or a not-cold context's not-cold one */
  const chk_site *near; /* CHK_R_MALLOC / NOT_REWRITTEN / STALE: the call */
  const chk_call *via;  /* CHK_R_LIBRARY: the call of a library there */
} chk_ctx;

/* What the run's file says beyond the joined calls (check_sites.c). */
typedef struct chk_run_sum {
  uint64_t joined;        /* hinted calls with records */
  uint64_t cold_allocs, cold_bytes, other_allocs, other_bytes;
  uint64_t died_young;    /* joined calls flagged */
  uint64_t unjoined, unjoined_allocs, unjoined_bytes; /* records of this
                             binary at no hinted call */
  uint64_t other_modules; /* records of other modules */
} chk_run_sum;

typedef struct chk {
  rpt *r;
  const char *binary;
  chk_elf elf;
  chk_calls calls;
  msym_ctx *sym;
  chk_site *sites; /* every allocation call with frames, by address */
  size_t n_sites;
  chk_ctx *ctx;    /* parallel to r->ctx */
  chk_key *site_keys; /* the sites by innermost location */
  size_t n_site_keys;
  chk_loc **edge_locs; /* per edge call, its frames' locations (lazily) */
  size_t *edge_n;
  chk_key *edge_keys;  /* the edge calls by innermost location */
  uint64_t *edge_targets; /* the edge calls' targets, sorted (lazily) */
  size_t n_edge_keys;
  uint64_t *guids; /* of the binary's function symbols, sorted */
  size_t n_guids;
  size_t lto_clones; /* function symbols named X.memprof.N: LTO's context
                        disambiguation cloned functions of the binary */
  size_t no_frames; /* allocation calls without debug information */
  const chk_run_file *run; /* --hotcold-sites, or NULL */
  chk_run_sum run_sum;
} chk;

int chk_match(chk *c, mp_err *err);
/* Join the run's records to the hinted calls (check_sites.c). */
void chk_join_run(chk *c);
/* The run's lines of hinted call s, and the summary's, as text or JSON. */
void chk_text_run(const chk *c, const chk_site *s, mp_buf *o);
void chk_text_run_summary(const chk *c, mp_buf *o);
void chk_json_run(const chk *c, const chk_site *s, mp_buf *o);
void chk_json_run_summary(const chk *c, mp_buf *o);
/* The keys in [*begin, *end) of `k` at the location of frame f. */
void chk_keys_at(const chk_key *k, size_t n, const mp_frame *f, size_t *begin,
                 size_t *end);
/* Whether the n locations equal the stack's frames from `from` on. */
int chk_locs_match(const mp_profile *p, uint32_t stack, uint32_t from,
                   const chk_loc *l, size_t n);
/* A call of function `func` (any when 0) at the stack's frames from
 * `from` on, or NULL. */
const chk_call *chk_call_at(chk *c, uint64_t func, uint32_t stack,
                            uint32_t from);
/* Why context i reached no cold hint (check_reason.c), into c->ctx[i]. */
void chk_decide_reason(chk *c, size_t i);
/* The text of a reason for context i, into buf. */
const char *chk_reason_text(chk *c, size_t i, char *buf, size_t n);
const char *chk_reason_code(unsigned reason);

/* "cold", "notcold", "ambiguous", "hot" or "unknown": a hint value's
 * class (clang's defaults: cold 1, notcold 128, ambiguous 222, hot 254). */
const char *chk_hint_class(int value);
void chk_write_text(chk *c, mp_buf *out);
void chk_write_json(chk *c, mp_buf *out);

#endif
