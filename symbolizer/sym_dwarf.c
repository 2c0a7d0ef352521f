/* sym_dwarf.c - one link-time address -> inline frames, by LLVM's rules.
 *
 * LLVM (DWARFUnit::getInlinedChainForAddress + getInliningInfoForAddress)
 * finds the innermost subprogram or inlined_subroutine DIE containing the
 * address and walks its parents up to the first subprogram.  sym_index.c
 * gives us that innermost DIE (a node) and its parent links; this file
 * turns the chain into frames.  (dwarf_getscopes would search the whole
 * CU per address and, for inlined instances, climb into the abstract
 * origin's parents instead of the physical caller.)
 *
 * Frame 0 takes line, column and discriminator from the line-table row of
 * the address; frame i > 0 takes DW_AT_call_file/line/column (and
 * DW_AT_GNU_discriminator) of the inlined_subroutine of frame i - 1.
 */
#include <string.h>

#include "sym_internal.h"

#ifndef DW_AT_GNU_discriminator
#define DW_AT_GNU_discriminator 0x2136
#endif

/* What LLVM reports for a function DIE without any name. */
static const char BAD_NAME[] = "<invalid>";

static const char *attr_string(Dwarf_Die *die, int name) {
  Dwarf_Attribute a;
  if (dwarf_attr_integrate(die, name, &a) == NULL)
    return NULL;
  return dwarf_formstring(&a);
}

static const char *function_name(Dwarf_Die *die) {
  const char *s = attr_string(die, DW_AT_linkage_name);
  if (!s)
    s = attr_string(die, DW_AT_MIPS_linkage_name);
  if (!s)
    s = attr_string(die, DW_AT_name);
  return s;
}

static uint32_t attr_u32(Dwarf_Die *die, int name) {
  Dwarf_Attribute a;
  Dwarf_Word w;
  if (dwarf_attr(die, name, &a) == NULL || dwarf_formudata(&a, &w) != 0)
    return 0;
  return (uint32_t)w;
}

/* The unit's line table read by sym_lines.c; 0 when it cannot be (a split
 * unit, whose table is its skeleton's, or one sym_lines.c leaves to libdw). */
static int own_lines(sym_dwarf *d, sym_cu *cu) {
  Dwarf_Attribute a;
  Dwarf_Word off;
  if (d->libdw_only || cu->die.addr != cu->unit.addr || cu->dw != d->dw ||
      dwarf_formudata(dwarf_attr(&cu->die, DW_AT_stmt_list, &a), &off) != 0)
    return 0;
  sym_dwarf_sections(d);
  return sym_lines_read(&cu->table, &d->line, &d->line_str, &d->str, off) == 0;
}

static void cu_lines(sym_dwarf *d, sym_cu *cu) {
  if (cu->lines_ready)
    return;
  cu->lines_ready = 1;
  if (own_lines(d, cu)) {
    cu->own_lines = 1;
    cu->nfiles = cu->table.nnames;
    return;
  }
  if (dwarf_getsrclines(&cu->die, &cu->lines, &cu->nlines) != 0) {
    cu->lines = NULL;
    cu->nlines = 0;
  }
  if (dwarf_getsrcfiles(&cu->die, &cu->files, &cu->nfiles) != 0) {
    cu->files = NULL;
    cu->nfiles = 0;
  }
}

/* libdw joins a relative directory with DW_AT_comp_dir only when the
 * latter is absolute; LLVM always prepends comp_dir to a relative path,
 * except for DWARF 5 directory 0 (which is the comp dir itself).  Distro
 * builds (-fdebug-prefix-map=...=.) have relative comp dirs. */
static const char *first_dir(const sym_cu *cu) {
  if (cu->own_lines)
    return cu->table.dir0;
  const char *const *dirs;
  size_t ndirs;
  return dwarf_getsrcdirs(cu->files, &dirs, &ndirs) == 0 && ndirs ? dirs[0]
                                                                  : NULL;
}

static char *llvm_path(sym_cu *cu, const char *p) {
  Dwarf_Attribute a;
  const char *comp = dwarf_formstring(dwarf_attr(&cu->unit, DW_AT_comp_dir, &a));
  if (p[0] == '/' || !comp || !*comp)
    return mp_xstrndup(p, strlen(p));
  const char *dir0 = first_dir(cu);
  if (dir0) {
    size_t n = strlen(dir0);
    if (n && strncmp(p, dir0, n) == 0 && p[n] == '/')
      return mp_xstrndup(p, strlen(p));
  }
  return sym_join_path(comp, p);
}

static const char *file_path(sym_cu *cu, size_t idx) {
  if ((!cu->own_lines && !cu->files) || idx >= cu->nfiles)
    return NULL;
  if (!cu->paths)
    cu->paths = mp_xcalloc(cu->nfiles, sizeof *cu->paths);
  if (!cu->paths[idx]) {
    const char *p = cu->own_lines ? cu->table.names[idx]
                                  : dwarf_filesrc(cu->files, idx, NULL, NULL);
    if (!p)
      return NULL;
    cu->paths[idx] = llvm_path(cu, p);
  }
  return cu->paths[idx];
}

/* The row LLVM picks: the last row at or below addr within the sequence
 * containing addr.  libdw sorts all sequences by address and puts an
 * end_sequence row before ordinary rows at the same address, so the last
 * row <= addr is it, unless that is an end_sequence (addr in a gap). */
Dwarf_Line *sym_libdw_line_row(Dwarf_Lines *lines, size_t nlines,
                               uint64_t addr) {
  size_t lo = 0, hi = nlines;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    Dwarf_Addr a = 0;
    dwarf_lineaddr(dwarf_onesrcline(lines, mid), &a);
    if (a <= addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0)
    return NULL;
  Dwarf_Line *row = dwarf_onesrcline(lines, lo - 1);
  bool end = false;
  dwarf_lineendsequence(row, &end);
  return end ? NULL : row;
}

static void leaf_location(sym_cu *cu, uint64_t addr, msym_frame *f) {
  if (cu->own_lines) {
    sym_line_row r;
    if (sym_lines_find(&cu->table, addr, &r)) {
      f->line = (uint32_t)r.line;
      f->column = r.column;
      f->discriminator = r.discriminator;
      f->file = file_path(cu, r.file);
    }
    return;
  }
  Dwarf_Line *row =
      cu->lines ? sym_libdw_line_row(cu->lines, cu->nlines, addr) : NULL;
  if (!row)
    return;
  int v = 0;
  unsigned u = 0;
  if (dwarf_lineno(row, &v) == 0)
    f->line = (uint32_t)v;
  if (dwarf_linecol(row, &v) == 0)
    f->column = (uint32_t)v;
  if (dwarf_linediscriminator(row, &u) == 0)
    f->discriminator = u;
  Dwarf_Files *files;
  size_t idx;
  if (dwarf_line_file(row, &files, &idx) == 0 && files == cu->files)
    f->file = file_path(cu, idx);
  else
    f->file = dwarf_linesrc(row, NULL, NULL);
}

/* The attributes frames need of node i, read once: their index in
 * cu->attrs (which may move when another node's are added). */
static uint32_t node_attrs(sym_cu *cu, uint32_t i) {
  if (!cu->attr_index.slots)
    mp_map_init(&cu->attr_index, 1);
  uint32_t k = mp_map_get_or_put(&cu->attr_index, i, (uint32_t)cu->nattrs);
  if (k != MP_MAP_EMPTY)
    return k;
  MP_VEC_RESERVE(cu->attrs, cu->capattrs, cu->nattrs + 1);
  k = (uint32_t)cu->nattrs++;
  sym_node_attrs *n = &cu->attrs[k];
  memset(n, 0, sizeof *n);
  const sym_node *node = &cu->nodes[i];
  Dwarf_Die die;
  if (dwarf_offdie(cu->dw, node->off, &die) == NULL)
    return k;
  n->name = function_name(&die);
  int decl = 0;
  if (dwarf_decl_line(&die, &decl) == 0)
    n->decl_line = (uint32_t)decl;
  if (node->is_subprogram)
    return k;
  n->call_line = attr_u32(&die, DW_AT_call_line);
  n->call_column = attr_u32(&die, DW_AT_call_column);
  n->call_discriminator = attr_u32(&die, DW_AT_GNU_discriminator);
  Dwarf_Attribute a;
  Dwarf_Word idx;
  if (dwarf_attr(&die, DW_AT_call_file, &a) && dwarf_formudata(&a, &idx) == 0)
    n->call_file = file_path(cu, idx);
  return k;
}

/* Node indexes from the innermost up to the first subprogram. */
static size_t node_chain(const sym_cu *cu, uint32_t i, uint32_t **chain,
                         size_t *cap) {
  size_t n = 0;
  while (i != SYM_NO_PARENT) {
    if (n == *cap) {
      *cap = *cap ? 2 * *cap : 64;
      *chain = mp_xrealloc(*chain, *cap * sizeof **chain);
    }
    (*chain)[n++] = i;
    if (cu->nodes[i].is_subprogram)
      break;
    i = cu->nodes[i].parent;
  }
  return n;
}

size_t sym_dwarf_frames(sym_dwarf *d, uint64_t addr, msym_frame **out,
                        size_t *cap) {
  if (!d->dw || sym_dwarf_index(d) != 0)
    return 0;
  const sym_range *r = sym_ranges_find(&d->cu_ranges, addr);
  if (!r)
    return 0;
  sym_cu *cu = &d->cus[r->key];
  sym_cu_build_code(d, cu);
  const sym_range *s = sym_ranges_find(&cu->code, addr);
  if (!s)
    return 0;
  size_t n = node_chain(cu, (uint32_t)s->key, &d->chain, &d->chain_cap);
  uint32_t *chain = d->chain; /* node indexes, then their attributes' */
  cu_lines(d, cu);
  for (size_t i = 0; i < n; i++)
    chain[i] = node_attrs(cu, chain[i]);
  /* Frame 0 without a name is what LLVM drops: report no frames. */
  if (cu->attrs[chain[0]].name == NULL)
    return 0;
  if (*cap < n) {
    *cap = n;
    *out = mp_xrealloc(*out, n * sizeof **out);
  }
  for (size_t i = 0; i < n; i++) {
    const sym_node_attrs *node = &cu->attrs[chain[i]];
    msym_frame *f = &(*out)[i];
    memset(f, 0, sizeof *f);
    f->name = node->name ? node->name : BAD_NAME;
    f->decl_line = node->decl_line;
    if (i == 0) {
      leaf_location(cu, addr, f);
    } else {
      const sym_node_attrs *callee = &cu->attrs[chain[i - 1]];
      f->file = callee->call_file;
      f->line = callee->call_line;
      f->column = callee->call_column;
      f->discriminator = callee->call_discriminator;
    }
  }
  return n;
}
