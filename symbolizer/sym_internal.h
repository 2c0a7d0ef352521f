/* sym_internal.h - the symbolizer's private types, shared by its files.
 *
 *   symbolizer.c  public API: context, modules, msym_symbolize
 *   sym_elf.c     opening an ELF file, its build id and PT_LOADs, finding
 *                 its separate debug file
 *   sym_zstd.c    zstd-compressed debug sections for libdw before 0.189
 *   sym_debuginfod.c  debug files from debuginfod servers
 *   sym_index.c   the CUs of a module by address, and the subprogram /
 *                 inlined_subroutine tree of a CU (built once per CU by
 *                 sym_scan.c's walk, else libdw's, searched by bisection)
 *   sym_scan.c    the tree read from the raw DIEs, faster; the raw bytes
 *                 of the sections it and sym_lines.c read
 *   sym_ranges.c  the sorted address-range index both walks fill, and the
 *                 tree's nodes
 *   sym_dwarf.c   one address -> inline frames, LLVM's rules
 *   sym_lines.c   one address -> its line-table row, without decoding the
 *                 unit's whole table when it can
 *   sym_cache.c   (module, vaddr) -> frames memo and the frame arena
 *   sym_symtab.c  an address of a module without DWARF named from its ELF
 *                 symbol table (msym_set_symtab_fallback)
 *
 * Errors: the tool's convention (common/error.h): -1 plus a message in an
 * mp_err.
 */
#ifndef MEMPROF_SYM_INTERNAL_H
#define MEMPROF_SYM_INTERNAL_H

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

#include "common/hashmap.h"
#include "symbolizer.h"

/* ---- address ranges ---- */
typedef struct sym_range {
  uint64_t lo, hi; /* [lo, hi) */
  uint64_t key;    /* what the range maps to: CU number or node number */
} sym_range;

/* Ranges are added in any order; sym_ranges_finish turns them into sorted,
 * disjoint segments where an inner range overrides the ranges containing
 * it (on equal ranges the larger key wins), which is LLVM's address-to-DIE
 * map with children added after their parents. */
typedef struct sym_range_index {
  sym_range *r;
  size_t n, cap;
} sym_range_index;

void sym_ranges_add(sym_range_index *ix, uint64_t lo, uint64_t hi,
                    uint64_t key);
void sym_ranges_finish(sym_range_index *ix);
const sym_range *sym_ranges_find(const sym_range_index *ix, uint64_t addr);
void sym_ranges_free(sym_range_index *ix);

/* ---- line tables (sym_lines.c) ---- */

/* A section's bytes as libdw reads them (decompressed). */
typedef struct sym_section {
  const uint8_t *data; /* NULL: the file has no such section */
  size_t size;
} sym_section;

typedef struct sym_line_row {
  uint64_t addr;
  uint32_t file;
  int line;
  uint32_t column, discriminator;
} sym_line_row;

/* Where decoding can resume: right after a row, in the state it left. */
typedef struct sym_line_mark {
  sym_line_row row;
  const uint8_t *at;
} sym_line_mark;

typedef struct sym_line_seq {
  uint64_t lo, hi;      /* [lo, hi): its first row to its end_sequence */
  const uint8_t *start; /* its first opcode */
  size_t mark, nmarks;  /* its marks in sym_lines.marks, by address */
} sym_line_seq;

/* A unit's version 5 line table: the program, its sequences sorted by
 * address, and its file names as libdw gives them (dwarf_filesrc). */
typedef struct sym_lines {
  const uint8_t *prog, *end;
  uint8_t min_inst, line_range, opcode_base;
  int8_t line_base;
  uint8_t std_len[256]; /* operand counts of standard opcodes; 0 past them */
  int16_t special_line[256];   /* what each special opcode adds */
  uint16_t special_addr[256];
  sym_line_seq *seqs;
  size_t nseqs;
  sym_line_mark *marks; /* one every few rows of each sequence */
  size_t nmarks;
  char **names;
  size_t nnames;
  const char *dir0; /* directory entry 0, NULL when there is none */
} sym_lines;

/* The table at `offset` in .debug_line; -1 when it is not one this reader
 * answers for exactly as libdw would (then use dwarf_getsrclines). */
int sym_lines_read(sym_lines *t, const sym_section *line,
                   const sym_section *line_str, const sym_section *str,
                   uint64_t offset);
/* The row libdw's sorted table gives for addr (the last at or below it,
 * not an end_sequence): 1 and *row, or 0 when there is none. */
int sym_lines_find(const sym_lines *t, uint64_t addr, sym_line_row *row);
void sym_lines_free(sym_lines *t);
/* dir/name, allocated. */
char *sym_join_path(const char *dir, const char *name);
/* The row of libdw's sorted table for addr: the last at or below it, NULL
 * if that is an end_sequence or there is none (LLVM's choice; sym_dwarf.c). */
Dwarf_Line *sym_libdw_line_row(Dwarf_Lines *lines, size_t nlines,
                               uint64_t addr);

/* ---- DWARF per compile unit, built lazily ---- */

enum { SYM_NO_PARENT = UINT32_MAX };

/* A subprogram or inlined_subroutine DIE with code.  parent is the nearest
 * enclosing such node (lexical blocks are transparent).  A unit has one
 * per function and inlined call; few are ever in a frame, so what frames
 * need of them is kept apart (sym_node_attrs) for those that are. */
typedef struct sym_node {
  Dwarf_Off off;
  uint32_t parent;
  uint32_t is_subprogram;
} sym_node;

typedef struct sym_node_attrs {
  const char *name;      /* NULL: the DIE has no name at all */
  const char *call_file; /* inlined_subroutine: DW_AT_call_* */
  uint32_t decl_line;
  uint32_t call_line, call_column, call_discriminator;
} sym_node_attrs;

typedef struct sym_cu {
  Dwarf_Die die;  /* the CU DIE: for split DWARF, the split unit's (.dwo) */
  Dwarf_Die unit; /* the DIE in the binary: die itself, or the skeleton */
  Dwarf *dw;      /* the file die's offsets are in (dwarf_offdie) */
  int code_ready; /* nodes and code built */
  sym_node *nodes;
  size_t nnodes, capnodes;
  sym_range_index code; /* innermost node for each address */
  mp_map attr_index;    /* node -> its attributes (slots NULL until used) */
  sym_node_attrs *attrs;
  size_t nattrs, capattrs;
  int lines_ready;      /* lines/files fetched (or failed: NULL) */
  int own_lines;        /* from `table` (sym_lines.c), not libdw */
  sym_lines table;
  Dwarf_Lines *lines;
  size_t nlines;
  Dwarf_Files *files;
  size_t nfiles;
  char **paths; /* file index -> path as LLVM prints it, lazy */
} sym_cu;

typedef struct sym_dwarf {
  Dwarf *dw;
  int ready; /* cus/cu_ranges built */
  sym_cu *cus;
  size_t ncus;
  sym_range_index cu_ranges; /* key = index into cus */
  uint32_t *chain;           /* scratch: node chain of one address */
  size_t chain_cap;
  size_t n_missing_split;    /* skeleton units whose split unit is missing */
  char *missing_split;       /* the first one's .dwo path */
  int libdw_only;            /* no raw readers (msym_set_raw_dwarf) */
  int sections_ready;        /* the sections below looked up */
  sym_section info, line, line_str, str, abbrev, addr, rnglists;
} sym_dwarf;

int sym_dwarf_index(sym_dwarf *d);
void sym_dwarf_free(sym_dwarf *d);
/* Looks up the sections sym_lines.c and sym_scan.c read, once (sym_scan.c). */
void sym_dwarf_sections(sym_dwarf *d);
/* The unit's nodes and code index (sym_scan.c, else the libdw walk). */
void sym_cu_build_code(sym_dwarf *d, sym_cu *cu);
/* What both walks of a unit use to build its tree (sym_ranges.c). */
uint32_t sym_push_node(sym_cu *cu, Dwarf_Off off, uint32_t parent,
                       int is_subprogram);
size_t sym_add_die_ranges(sym_range_index *ix, Dwarf_Die *die, uint64_t key);
int sym_may_hold_code(int tag);
/* The walk over the unit's raw DIEs; -1 when the unit has something it
 * does not read, for the libdw walk to do instead.  Neither finishes the
 * code index (sym_ranges_finish); sym_walk_code starts from nothing. */
int sym_scan_code(sym_dwarf *d, sym_cu *cu);
void sym_walk_code(sym_cu *cu);

/* Frames for `addr`, innermost first, written to `out` (grown with
 * mp_xrealloc).  Returns the number of frames, 0 when no DWARF subprogram
 * covers the address. */
size_t sym_dwarf_frames(sym_dwarf *d, uint64_t addr, msym_frame **out,
                        size_t *cap);

/* ---- per-module memo of symbolized addresses ---- */
typedef struct sym_cache_entry {
  const msym_frame *frames; /* in the arena; NULL when n == 0 */
  uint32_t n;
} sym_cache_entry;

typedef struct sym_arena_chunk {
  struct sym_arena_chunk *next;
  size_t used, cap;
  msym_frame frames[];
} sym_arena_chunk;

typedef struct sym_cache {
  mp_map index; /* vaddr -> entry (common/hashmap.h); slots NULL until used */
  sym_cache_entry *entries;
  size_t n, cap;
  sym_arena_chunk *chunks;
} sym_cache;

/* The frames stored for vaddr, or NULL if it was never stored.  The entry
 * pointer is valid until the next sym_cache_put; the frames until
 * sym_cache_free. */
const sym_cache_entry *sym_cache_get(const sym_cache *c, uint64_t vaddr);
/* Copies frames into the arena; returns the entry (valid as above). */
const sym_cache_entry *sym_cache_put(sym_cache *c, uint64_t vaddr,
                                     const msym_frame *frames, size_t n);
void sym_cache_free(sym_cache *c);

/* ---- ELF files ---- */
typedef struct sym_elf_file {
  int fd;
  Elf *elf;
  char *path;
} sym_elf_file;

/* Opens and validates an ELF64 x86-64 file. */
int sym_elf_open(sym_elf_file *f, const char *path, mp_err *err);
void sym_elf_close(sym_elf_file *f);
int sym_elf_has_section(Elf *elf, const char *name);
/* A section's bytes as libdw reads them: decompressed in place when it
 * opened the file (a .zdebug_* name matches too); {NULL, 0} when absent
 * or still compressed. */
sym_section sym_elf_section(Elf *elf, const char *name);
/* The section after scn (the first for NULL) with its header and name;
 * NULL at the end.  Sections whose header or name cannot be read are
 * skipped. */
Elf_Scn *sym_elf_next_named(Elf *elf, size_t shstrndx, Elf_Scn *scn,
                            GElf_Shdr *sh, const char **name);
/* A build id (at most 32 bytes are shown) as lowercase hex into hex[SYM_HEX_ID]. */
#define SYM_HEX_ID (2 * 32 + 1)
void sym_hex_id(const uint8_t *id, size_t len, char *hex);
size_t sym_elf_build_id(Elf *elf, uint8_t *out, size_t cap);
/* -1 with a message if a .debug_* section uses a compression method
 * neither libdw nor sym_zstd.c can undo. */
int sym_elf_check_compression(Elf *elf, const char *path, mp_err *err);
/* For a libdw without zstd: when `elf` has zstd-compressed .debug_*
 * sections, an in-memory copy with them decompressed (*out, from
 * elf_memory over *image; elf_end it, then free *image) and 1; 0 when
 * there is nothing to do; -1 with a message. */
int sym_elf_unzstd(Elf *elf, const char *path, Elf **out, void **image,
                   mp_err *err);
void sym_elf_exec_segments(Elf *elf, msym_module *m);
/* Opens path as a debug file (a .debug_info, the build id `id`); -1
 * (silently) if it is not one. */
int sym_elf_open_debug_by_id(const char *path, const uint8_t *id, size_t len,
                             sym_elf_file *dbg);
/* The debug file with build id `id` from $DEBUGINFOD_URLS (sym_debuginfod.c);
 * -1 when there is none, no server or no libdebuginfod. */
int sym_debuginfod_find(const uint8_t *id, size_t len, sym_elf_file *dbg);
/* Opens <dir>/.build-id/<xx>/<rest>.debug of the first dir that has it
 * with that build id and a .debug_info; -1 if none does. */
int sym_elf_find_by_build_id(const uint8_t *id, size_t len, char *const *dirs,
                             size_t ndirs, sym_elf_file *dbg);
/* Finds and opens the separate debug file of `bin` (build id, then
 * .gnu_debuglink); returns 0 and fills *dbg, or -1 when there is none. */
int sym_elf_find_debug(const sym_elf_file *bin, const uint8_t *id,
                       size_t id_len, char *const *dirs, size_t ndirs,
                       sym_elf_file *dbg);

/* ---- ELF symbol tables (sym_symtab.c) ---- */
typedef struct sym_symtab {
  int ready; /* funcs built (possibly empty) */
  struct sym_func *funcs; /* sorted by address, one per address */
  size_t n, cap;
  char **owned; /* the "module+0x..." names handed out */
  size_t n_owned, cap_owned;
} sym_symtab;

/* The one frame for link-time address `addr` of the module whose file is
 * `elf` at `path`: the covering function symbol, else "basename+0xADDR";
 * no file, line 0. */
void sym_symtab_frame(sym_symtab *t, Elf *elf, const char *path,
                      uint64_t addr, msym_frame *out);
void sym_symtab_free(sym_symtab *t);

/* ---- the module as the context owns it ---- */
typedef struct sym_module {
  msym_module pub; /* first: msym_module* converts back */
  sym_elf_file bin;
  sym_elf_file dbg; /* fd -1 when debug info is in bin or absent */
  sym_dwarf dwarf;  /* dw NULL when there is no debug info */
  Elf *unzstd;      /* the DWARF source with zstd sections decompressed */
  void *unzstd_image;
  sym_elf_file alt; /* dwz supplementary file we found (fd -1: none or libdw's) */
  Dwarf *alt_dw;    /* its DWARF, given to libdw with dwarf_setalt */
  sym_cache cache;
  sym_symtab symtab; /* built on first use, without DWARF only */
  int placeholder;   /* no file: msym_add_placeholder */
} sym_module;

#endif
