/* instrprof_warn.c - the warnings llvm-profdata prints when records of
 * one function disagree (instrprof_error's codes and texts), and the
 * handler they go to (stderr unless mp_instr_set_warn_handler says else).
 */
#include <stdio.h>

#include "instrprof.h"
#include "instrprof_priv.h"

/* LLVM's instrprof_error codes that merging can raise, with their text
 * and whether llvm-profdata adds its "same binary" hint. */
static const struct {
  const char *msg;
  int hint;
} ERRS[] = {
    [MP_IERR_COUNT_MISMATCH] =
        {"function basic block count change detected (counter mismatch)", 1},
    [MP_IERR_OVERFLOW] = {"counter overflow", 0},
    [MP_IERR_SITE_MISMATCH] =
        {"function value site count change detected (counter mismatch)", 1},
    [MP_IERR_BITMAP_MISMATCH] =
        {"function bitmap size change detected (bitmap size mismatch)", 0},
};

static void default_warn(const char *msg) { fprintf(stderr, "%s\n", msg); }
static mp_instr_warn_fn warn_fn = default_warn;

void mp_instr_set_warn_handler(mp_instr_warn_fn fn) {
  warn_fn = fn ? fn : default_warn;
}

/* One record's warnings: LLVM reports only the first per record, and its
 * hint only the first time a code is seen. */
void mp_iwarn(mp_iwarn_ctx *w, int code) {
  if (w->reported) return;
  w->reported = 1;
  char line[1200];
  snprintf(line, sizeof line, "%s%s%.*s%s%s", w->src ? w->src : "",
           w->src ? ": " : "", (int)w->name_len, w->name,
           w->name_len ? ": " : "", ERRS[code].msg);
  warn_fn(line);
  uint32_t bit = 1u << code;
  if (!(w->ip->hinted & bit)) {
    w->ip->hinted |= bit;
    if (ERRS[code].hint)
      warn_fn("Make sure that all profile data to be merged is generated "
              "from the same binary.");
  }
}
