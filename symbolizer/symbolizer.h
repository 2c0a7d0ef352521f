/* symbolizer.h - program counters to inline frames, with libdw/libelf.
 *
 * Call sequence (modelled on elfutils' libdwfl users):
 *   msym_ctx *c = msym_new();
 *   msym_add_debug_dir(c, "/usr/lib/debug");           // optional, repeatable
 *   msym_add_binary(c, "./prog", &err);                // repeatable: exe, .so
 *   const msym_module *m = msym_find_build_id(c, id, id_len);
 *   msym_symbolize(c, m, vaddr, &frames, &n);          // vaddr = link-time address
 *   msym_free(c);
 *
 * A module is one ELF file identified by its GNU build id.  Its debug
 * information comes from the file itself or, when the file has none, from a
 * separate debug file found by build id (<dir>/.build-id/xx/rest.debug) or
 * by .gnu_debuglink under the debug directories.
 *
 * Frames follow LLVM's DWARF symbolizer in inlined mode: frame 0 is the
 * innermost (inlined) function containing the address, with the line-table
 * row's line and column; each next frame is the enclosing function, with the
 * call line and column of the inlined call it contains.  The last frame is
 * the physical (non-inlined) function.  Names are linkage names when DWARF
 * has one (DW_AT_linkage_name, DW_AT_MIPS_linkage_name, following
 * abstract_origin and specification), DW_AT_name otherwise.
 *
 * Results are cached per (module, vaddr): each unique PC is symbolized once.
 * All returned pointers stay valid until msym_free.
 *
 * Errors: functions return 0 on success and -1 on failure, with a message in
 * the caller's mp_err (common/error.h).
 */
#ifndef MEMPROF_SYMBOLIZER_H
#define MEMPROF_SYMBOLIZER_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

typedef struct msym_frame {
  const char *name;      /* linkage name, or plain name; never NULL */
  const char *file;      /* source path (comp dir joined), or NULL */
  uint32_t line;         /* source line of this frame's location */
  uint32_t column;
  uint32_t discriminator;
  uint32_t decl_line;    /* DW_AT_decl_line of the function, 0 if unknown */
} msym_frame;

typedef struct msym_module {
  const char *path;       /* the ELF file given to msym_add_binary */
  uint8_t build_id[32];
  size_t build_id_len;    /* 0 if the file has no build id */
  uint64_t exec_vaddr;    /* p_vaddr of the first executable PT_LOAD */
  uint64_t exec_memsz;
  int num_exec_segments;  /* LLVM's reader insists on exactly 1 */
  int has_debug_info;
} msym_module;

typedef struct msym_ctx msym_ctx;

msym_ctx *msym_new(void);
void msym_free(msym_ctx *c);

/* With `on`, an address of a module that has no DWARF (msym_module's
 * has_debug_info 0) gets one frame named from the module's ELF symbol
 * table: the function symbol covering it (.symtab, else .dynsym; STT_FUNC
 * or STT_GNU_IFUNC), else "<file basename>+0x<vaddr in hex>"; with file
 * NULL and line, column and decl_line 0 (sym_symtab.c).  Off by default,
 * as LLVM's symbolizer in llvm-profdata never reads symbol tables; modules
 * with DWARF give the same frames either way.  Set it before symbolizing. */
void msym_set_symtab_fallback(msym_ctx *c, int on);

/* With `on` (the default), the units' function trees and line tables are
 * read from the raw DWARF bytes (sym_scan.c, sym_lines.c), which skips
 * what libdw would decode for nothing; anything those readers do not know
 * goes to libdw.  Off: libdw reads everything.  Same frames either way.
 * Set it before adding binaries. */
void msym_set_raw_dwarf(msym_ctx *c, int on);

/* Debug directories searched for separate debug files of binaries added
 * afterwards.  When none is given, /usr/lib/debug is searched. */
int msym_add_debug_dir(msym_ctx *c, const char *dir, mp_err *err);
/* Open an ELF file (executable or shared library) and index it. */
int msym_add_binary(msym_ctx *c, const char *path, mp_err *err);
/* The same, only if the file's GNU build id is `id` (len > 0): returns 1,
 * adding nothing, when it is another file. */
int msym_add_binary_with_id(msym_ctx *c, const char *path, const uint8_t *id,
                            size_t len, mp_err *err);

/* A module known only by its path and build id (a process's module whose
 * file is gone or replaced), with the link-time address and size of its
 * executable segment: every address of it gets one frame named
 * "<path's basename>+0x<vaddr in hex>", as the symbol-table fallback
 * names an address no symbol covers, so that a frame is never lost. */
void msym_add_placeholder(msym_ctx *c, const char *path, const uint8_t *id,
                          size_t len, uint64_t exec_vaddr, uint64_t exec_memsz);

/* The GNU build id of the ELF file at path into out (at most cap bytes);
 * returns its length, 0 when the file has none or is no ELF64 x86-64 file. */
size_t msym_file_build_id(const char *path, uint8_t *out, size_t cap);

size_t msym_num_modules(const msym_ctx *c);
const msym_module *msym_module_at(const msym_ctx *c, size_t i);
const msym_module *msym_find_build_id(const msym_ctx *c, const uint8_t *id,
                                      size_t len);
/* The file the module's DWARF is read from (the binary itself or its
 * separate debug file), NULL if it has none. */
const char *msym_module_debug_file(const msym_module *m);

/* Split DWARF units (-gsplit-dwarf) of module `m` whose .dwo file could
 * not be found: their code gets no frames.  Returns how many, and in
 * *first (if not NULL) the path of the first one; 0 when all were found,
 * when the module has no DWARF, and before any address of the module was
 * symbolized (the units are looked at then).  libdw 0.188 reads .dwo
 * files, not .dwp packages (elfutils 0.190 added those). */
size_t msym_module_missing_split(msym_ctx *c, const msym_module *m,
                                 const char **first);
/* What users are told about those units (how many, the first, and that a
 * BINARY.dwp beside it is not read), into buf; returns how many (0: buf
 * untouched). */
size_t msym_missing_split_message(msym_ctx *c, const msym_module *m,
                                  char *buf, size_t cap);
/* Symbolize link-time address `vaddr` of module `m`.  On success *frames
 * points at *n frames, innermost first; *n == 0 means no debug information
 * covers the address (LLVM then drops the PC). */
int msym_symbolize(msym_ctx *c, const msym_module *m, uint64_t vaddr,
                   const msym_frame **frames, size_t *n, mp_err *err);

#endif
