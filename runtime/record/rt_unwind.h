/* rt_unwind.h - unwinding frames that keep no frame pointer, for the
 * stack walk (rt_stack.c): the rule a return address's function follows
 * (rt_cfi.c reads it from the module's .eh_frame), the per-PC cache of
 * rules (rt_unwind.c) and one step of unwinding by a rule.
 *
 * A rule says where the caller's frame is from the state the walk keeps,
 * the callee's record address `cur` (so %rsp at the call was cur + 16) and
 * the function's %rbp at the call, `next`:
 *   FP   a frame-pointer frame: CFA = %rbp + 16, %rbp saved at CFA - 16,
 *        return address at CFA - 8 (the fast walk's frame record).  Also
 *        what a PC without unwind information is taken to be (the walk's
 *        behaviour before tables), and what rules the tables cannot say
 *        with the registers the walk knows become (expressions, CFA in
 *        another register).
 *   SP   CFA = %rsp + cfa_off (code built without frame pointers).
 *   RBP  CFA = %rbp + cfa_off, not the standard record.
 *   STOP the outermost frame (return address undefined, e.g. _start).
 * For SP and RBP the return address is at CFA + ra_off and the caller's
 * %rbp is unchanged, saved at CFA + rbp_off, or unknown. */
#ifndef MEMPROF_RT_UNWIND_H
#define MEMPROF_RT_UNWIND_H

#include "runtime/base/rt_internal.h"

enum { RT_CFA_FP, RT_CFA_SP, RT_CFA_RBP, RT_CFA_STOP };
enum { RT_RBP_SAME, RT_RBP_SAVED, RT_RBP_UNDEF };

typedef struct rt_cfa_rule {
  uint8_t kind, rbp;
  int32_t cfa_off, rbp_off, ra_off;
} rt_cfa_rule;

/* A module's unwind data as mapped: every read stays in [lo, hi), the
 * loaded segment that holds .eh_frame_hdr (and .eh_frame). */
typedef struct rt_cfi_module {
  const uint8_t *hdr, *lo, *hi;
} rt_cfi_module;

/* The rule of return address pc (looked up at pc - 1: the call may be the
 * last instruction of its function).  FP when the tables have no answer. */
RT_HIDDEN rt_cfa_rule rt_cfi_rule(const rt_cfi_module *m, uintptr_t pc);

/* ---- the caches (rt_unwind.c) ---------------------------------------------
 * A rule is kept as a word: the PC shifted left by 17 (user PCs are below
 * 2^47) above the packed rule, so a word is written and read whole, never
 * torn, by any thread or signal handler, and names its PC: whatever word a
 * reader finds, it is a true rule of the PC it names.  An FP rule packs to
 * 0: a frame-pointer frame's word is pc << 17.
 *
 * The rule cache has sets of two words, picked by PC, the newest first:
 * two PCs that map to one set both stay (a miss reads the tables again,
 * hundreds of cycles).  A trace is the row of words of the frames a walk
 * last found above a PC (its own word first): while the stack's return
 * addresses match the row, the walk takes their rules from it in order.
 * Looking each rule up by the return address just read from the stack
 * would make every frame wait for two loads in a chain; from the row, the
 * next frame's CFA is known before its return address is read.  A row is
 * written only where none names its PC, so walks that differ above a PC
 * take the next row at the first frame that differs, and write nothing
 * once every row they need exists. */
#define RT_UNWIND_SETS_LOG 13
#define RT_UNWIND_RULE_BITS 17
#define RT_TRACE_ROWS_LOG 11
#define RT_TRACE_LEN 16
RT_HIDDEN extern uint64_t rt_unwind_cache[1u << RT_UNWIND_SETS_LOG][2];
RT_HIDDEN extern uint64_t rt_unwind_traces[1u << RT_TRACE_ROWS_LOG][RT_TRACE_LEN];
/* How the walk consults the tables (the unwind_tables option, -1 resolved
 * by whether instrumented code has started, when glibc can find a PC's
 * module without locks): 0 never, 1 for the frames below
 * the program's first frame in the main executable (libraries called by
 * the program: past that frame the walk follows frame pointers alone), 2
 * for every frame without a frame pointer. */
RT_HIDDEN extern int rt_unwind_on;
/* The main executable's loaded range (rt_unwind_init). */
RT_HIDDEN extern uintptr_t rt_unwind_exe_lo, rt_unwind_exe_hi;
static inline int rt_unwind_in_exe(uintptr_t pc) {
  return pc - rt_unwind_exe_lo < rt_unwind_exe_hi - rt_unwind_exe_lo;
}

static inline uint64_t rt_unwind_hash(uintptr_t pc, unsigned bits) {
  return (pc ^ (pc >> bits)) & ((1u << bits) - 1);
}

static inline uint64_t *rt_unwind_set(uintptr_t pc) {
  return rt_unwind_cache[rt_unwind_hash(pc, RT_UNWIND_SETS_LOG)];
}

static inline uint64_t *rt_unwind_trace(uintptr_t pc) {
  return rt_unwind_traces[rt_unwind_hash(pc, RT_TRACE_ROWS_LOG)];
}

/* Whether word e is pc's. */
static inline int rt_unwind_names(uint64_t e, uintptr_t pc) {
  return e >> RT_UNWIND_RULE_BITS == pc && pc < (1ULL << 47);
}

/* Whether pc is known to be in a frame-pointer frame: the fast walk's one
 * load and compare per frame, in the first way only (a PC in the second
 * takes the walk's slower path, which reads both). */
static inline int rt_unwind_fp_cached(uintptr_t pc) {
  return __atomic_load_n(&rt_unwind_set(pc)[0], __ATOMIC_RELAXED) ==
             (uint64_t)pc << RT_UNWIND_RULE_BITS &&
         pc < (1ULL << 47);
}

static inline rt_cfa_rule rt_unwind_unpack(uint64_t e) {
  uint32_t v = (uint32_t)e & ((1u << RT_UNWIND_RULE_BITS) - 1);
  rt_cfa_rule r = {(uint8_t)(v & 3), RT_RBP_SAME, (int32_t)(v >> 6) * 8, 0, -8};
  uint32_t slot = (v >> 2) & 15;
  if (slot == 15)
    r.rbp = RT_RBP_UNDEF;
  else if (slot)
    r.rbp = RT_RBP_SAVED, r.rbp_off = -8 * (int32_t)slot;
  return r;
}

/* The word of return address pc, evaluated on a cache miss; 0 if its rule
 * is not kept (rt_unwind.c says which; rt_unwind_eval then gives it). */
RT_HIDDEN uint64_t rt_unwind_word_slow(uintptr_t pc);
RT_HIDDEN rt_cfa_rule rt_unwind_eval(uintptr_t pc);

static inline uint64_t rt_unwind_word(uintptr_t pc) {
  const uint64_t *set = rt_unwind_set(pc);
  uint64_t e = __atomic_load_n(&set[0], __ATOMIC_RELAXED);
  if (RT_LIKELY(rt_unwind_names(e, pc)))
    return e;
  e = __atomic_load_n(&set[1], __ATOMIC_RELAXED);
  return RT_LIKELY(rt_unwind_names(e, pc)) ? e : rt_unwind_word_slow(pc);
}

/* The rule of word e, found for pc. */
static inline rt_cfa_rule rt_unwind_rule_of(uint64_t e, uintptr_t pc) {
  return RT_LIKELY(e) ? rt_unwind_unpack(e) : rt_unwind_eval(pc);
}

static inline rt_cfa_rule rt_unwind_rule(uintptr_t pc) {
  return rt_unwind_rule_of(rt_unwind_word(pc), pc);
}

/* One step by an SP or RBP rule: the caller's record address and %rbp into
 * *cur and *next, its return address into *ra.  0 if the frame would leave
 * the thread's stack or not move up it: every read is in [%rsp, top). */
static inline int rt_unwind_step(rt_cfa_rule r, uintptr_t *cur, uintptr_t *next,
                                 uintptr_t *ra, uintptr_t top) {
  uintptr_t sp = *cur + 16;
  uintptr_t cfa = (r.kind == RT_CFA_SP ? sp : *next) + (intptr_t)r.cfa_off;
  if (cfa <= sp || cfa > top)
    return 0;
  uintptr_t at = cfa + (intptr_t)r.ra_off;
  if (at < sp || at > top - 8)
    return 0;
  *ra = *(const uintptr_t *)at;
  if (r.rbp == RT_RBP_SAVED) {
    at = cfa + (intptr_t)r.rbp_off;
    if (at < sp || at > top - 8)
      return 0;
    *next = *(const uintptr_t *)at;
  } else if (r.rbp == RT_RBP_UNDEF) {
    *next = 0;
  }
  *cur = cfa - 16;
  return 1;
}

/* Called from the lifecycle installation (the loader may be asked). */
RT_HIDDEN void rt_unwind_init(void);
/* Instrumented code has started (__memprof_init): unwind_tables=-1 means 1
 * from now on. */
RT_HIDDEN void rt_unwind_instrumented(void);

#endif
