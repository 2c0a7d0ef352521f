/* raw.h - reading LLVM raw memory profiles (v3, v4, v5; several dumps per
 * file) into the model, symbolizing every PC with the symbolizer.
 *
 * The raw file is validated completely before anything is added to the
 * profile: a damaged file is refused whole, with a message saying what is
 * wrong and where (byte offset).  Records are built as LLVM's
 * RawMemProfReader does (docs/memprof-profdata.md): alloc sites in the
 * record of the leaf function and of each inline parent up to the first
 * physical frame; call sites for every other PC; PCs that do not symbolize
 * or fall in a memprof runtime's files are dropped.
 */
#ifndef PROFDATA_RAW_H
#define PROFDATA_RAW_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "profdata/model/model.h"
#include "symbolizer/symbolizer.h"

int mp_is_raw(const void *data, size_t len);

/* Read one raw file (all its dumps) into `p`.  `sym` holds the profiled
 * binaries; a PC is symbolized in the module whose build id matches its
 * segment.  `name` is used in messages only. */
int mp_read_raw(mp_profile *p, const char *name, const void *data, size_t len,
                msym_ctx *sym, mp_err *err);

/* The same for many files into one profile: the reader remembers every
 * (module, address) it symbolized and every normalized call stack it built,
 * so a context seen in an earlier file costs one lookup and one MIB merge.
 * The result is identical to calling mp_read_raw once per file.  `p` and
 * `sym` must outlive the reader. */
typedef struct mp_raw_reader mp_raw_reader;
mp_raw_reader *mp_raw_reader_new(mp_profile *p, msym_ctx *sym);
/* A hint: about `files` raw profiles will be read. */
void mp_raw_reader_expect(mp_raw_reader *r, size_t files);
/* Only the first n modules of the reader's symbolizer were given as
 * profiled binaries; the others were found by build id
 * (mp_raw_find_libraries), and a leaf PC in one of those is inside a
 * library, as one in no module is (raw_stack.in_library).  Default: all. */
void mp_raw_reader_given(mp_raw_reader *r, size_t n);
/* Whether the call before link-time address `vaddr` of module `m` (a
 * stack's leaf PC as recorded: the call's return address minus one) is of
 * a function that is not an allocation function: 1 when it is, 0 when it
 * is of an allocation function or its target is not known.  The block was
 * then allocated inside that function, which reached the allocator by a
 * tail jump (libstdc++'s basic_string::_M_create jumps to operator new),
 * so the unwound stack lacks its frame: the context is counted as one a
 * library allocated (raw_stack.in_library).  Without a probe (the
 * default) no leaf is looked at.  The reader asks once per leaf PC. */
typedef int (*mp_raw_leaf_probe)(void *ctx, const msym_module *m,
                                 uint64_t vaddr);
void mp_raw_reader_probe(mp_raw_reader *r, mp_raw_leaf_probe probe, void *ctx);
int mp_raw_reader_read(mp_raw_reader *r, const char *name, const void *data,
                       size_t len, mp_err *err);
void mp_raw_reader_free(mp_raw_reader *r);

/* mp_raw_reader_read in two steps.  mp_raw_prepare validates the file and
 * normalizes its call stacks; it reads only what the reader was created
 * with (the binaries), so it may run on another thread while mp_raw_add
 * adds an earlier file to the same reader.  mp_raw_add symbolizes and adds
 * the records; files must be added in input order for the output to be
 * that of mp_raw_reader_read.  `data` must stay mapped until
 * mp_raw_file_free. */
typedef struct raw_file mp_raw_file;
int mp_raw_prepare(const mp_raw_reader *r, const char *name, const void *data,
                   size_t len, mp_raw_file **out, mp_err *err);
int mp_raw_add(mp_raw_reader *r, mp_raw_file *f, mp_err *err);
void mp_raw_file_free(mp_raw_file *f);

/* mp_raw_add in two steps, for a pipeline: mp_raw_add_stacks symbolizes
 * the file's call stacks (the reader's caches, the profile's frames,
 * strings and stacks); mp_raw_add_mibs then adds its MIBs and call sites
 * (the profile's records only).  So the MIBs of file i may be added on one
 * thread while the stacks of file i + 1 are added on another.  Each step
 * takes the files in input order, a file's stacks before its MIBs, and
 * nothing else may use the profile while MIBs are being added. */
int mp_raw_add_stacks(mp_raw_reader *r, mp_raw_file *f, mp_err *err);
void mp_raw_add_mibs(mp_raw_reader *r, mp_raw_file *f);
/* After mp_raw_add_stacks: whether an eighth or more of the file's stacks
 * were new to the reader. */
int mp_raw_mostly_new(const mp_raw_file *f);

/* After mp_raw_add_stacks: the model stack of every stack id the file's
 * MIBs use, so that data keyed by the raw profile's stack ids (a
 * timeline, timeline.h) can be joined to the profile's contexts.
 * Fills malloc'd parallel arrays (*ids, *stacks) of *n entries; a stack
 * with no symbolizable frame maps to MP_RAW_NO_FRAMES. */
#define MP_RAW_NO_FRAMES UINT32_MAX
void mp_raw_stack_ids(const mp_raw_reader *r, const mp_raw_file *f,
                      uint64_t **ids, uint32_t **stacks, size_t *n);

/* Add to sym the modules of the processes the preloaded raw inputs
 * profiled (the program and its shared libraries), found by the paths in
 * their notes or by build id in the system's library directories, or as
 * placeholders (raw_libs.c).  Inputs that are not raw profiles of preloaded
 * processes are skipped.  Returns how many inputs were such profiles. */
size_t mp_raw_find_libraries(msym_ctx *sym, const char *const *inputs,
                             size_t n_inputs);

#endif
