/* check.h - `memprof-profdata check`: did the profile's hot/cold hints land
 * in the optimized binary, and where not, why.
 *
 * check_binary.c reads the binary (ELF symbols, PLT slots) and
 * check_disasm.c disassembles its functions with capstone: every call (or
 * tail jump) of an allocation function, with the __hot_cold_t hint it
 * passes.  check_match.c symbolizes those calls (inline frames, as the
 * profile's frames: GUID, line offset, column) and matches them to the
 * report's contexts (profdata/report/report.h, whose verdicts are clang's);
 * check_reason.c says why a context reached no cold hint; check_out.c
 * writes the result as text or JSON (docs/memprof-profdata.md, "check").
 */
#ifndef PROFDATA_CHECK_H
#define PROFDATA_CHECK_H

#include "common/error.h"
#include "common/io.h"
#include "profdata/report/report.h"
#include "symbolizer/symbolizer.h"

typedef enum chk_format { CHK_TEXT, CHK_JSON } chk_format;

/* A run of the optimized binary: libmemprof-hotcold's call-site file
 * (profdata/hcsites/hcsites.h) and its name. */
typedef struct chk_run_file {
  const char *path;
  const struct mp_hcs *sites;
} chk_run_file;

/* Check report `r` (built with the thresholds the optimized build used)
 * against the optimized binary at `binary`, and, when `run` is not NULL,
 * against what a run of it served per hinted call; the result goes to
 * `out`.  Returns 0, or -1 with the reason in err (the binary cannot be
 * read). */
int chk_run(rpt *r, const char *binary, const chk_run_file *run, chk_format f,
            mp_buf *out, mp_err *err);

/* The raw reader's leaf probe (profdata/raw/raw.h, mp_raw_leaf_probe),
 * check_leaf.c: chk_leaf_calls_other with a probe as its ctx. */
typedef struct chk_leaf_probe chk_leaf_probe;
chk_leaf_probe *chk_leaf_probe_new(void);
void chk_leaf_probe_free(chk_leaf_probe *p);
int chk_leaf_calls_other(void *ctx, const msym_module *m, uint64_t vaddr);

#endif
