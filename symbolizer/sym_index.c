/* sym_index.c - a module's CUs by address, and each CU's function tree.
 *
 * Clang emits no .debug_aranges, and elfutils 0.188's dwarf_addrdie then
 * finds nothing, while a linear dwarf_haspc scan over all CUs costs
 * O(#CUs) per address.  So each module gets one table of CU ranges (from
 * the CU DIEs' DW_AT_low_pc/high_pc/ranges).  Each CU, on first use, gets
 * the tree of its subprogram and inlined_subroutine DIEs with code, and a
 * table from address to the innermost of them, in the manner of LLVM's
 * DWARFUnit address-to-DIE map and heaptrack's dwarfdiecache.  A lookup is
 * then two binary searches plus a walk up the parent links: no DIE-tree
 * search per address (dwarf_getscopes walks the whole CU every time).
 */
#include <stdlib.h>
#include <string.h>

#include "sym_internal.h"

/* One pass over the CU's DIEs.  Subroutines without code (declarations,
 * abstract instances) get no node. */
static void walk(sym_cu *cu, Dwarf_Die *parent_die, uint32_t parent) {
  Dwarf_Die child;
  if (dwarf_child(parent_die, &child) != 0)
    return;
  do {
    int tag = dwarf_tag(&child);
    uint32_t here = parent;
    if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
      uint32_t idx = sym_push_node(cu, dwarf_dieoffset(&child), parent,
                                   tag == DW_TAG_subprogram);
      if (sym_add_die_ranges(&cu->code, &child, idx))
        here = idx;
      else
        cu->nnodes--;
    }
    if (sym_may_hold_code(tag))
      walk(cu, &child, here);
  } while (dwarf_siblingof(&child, &child) == 0);
}

void sym_walk_code(sym_cu *cu) {
  cu->nnodes = 0;
  cu->code.n = 0;
  walk(cu, &cu->die, SYM_NO_PARENT);
}

void sym_cu_build_code(sym_dwarf *d, sym_cu *cu) {
  if (cu->code_ready)
    return;
  if (d->libdw_only || sym_scan_code(d, cu) != 0) /* (again) the slow way */
    sym_walk_code(cu);
  sym_ranges_finish(&cu->code);
  cu->code_ready = 1;
}

static sym_cu *push_cu(sym_dwarf *d, size_t *cap, Dwarf_Die *die,
                       Dwarf_Die *unit) {
  if (d->ncus == *cap) {
    *cap = *cap ? 2 * *cap : 64;
    d->cus = mp_xrealloc(d->cus, *cap * sizeof *d->cus);
  }
  sym_cu *cu = &d->cus[d->ncus++];
  memset(cu, 0, sizeof *cu);
  cu->die = *die;
  cu->unit = *unit;
  cu->dw = dwarf_cu_getdwarf(die->cu);
  return cu;
}

#ifndef DW_AT_GNU_dwo_name
#define DW_AT_GNU_dwo_name 0x2130
#endif

/* A skeleton unit whose split unit libdw could not open (it looks for
 * DW_AT_dwo_name under DW_AT_comp_dir and beside the file): its code gets
 * no frames, as in LLVM, and the first such .dwo is kept for the message. */
static void note_missing_split(sym_dwarf *d, Dwarf_Die *skeleton) {
  if (d->n_missing_split++)
    return;
  Dwarf_Attribute a;
  const char *name = dwarf_formstring(dwarf_attr(skeleton, DW_AT_dwo_name, &a));
  if (!name)
    name = dwarf_formstring(dwarf_attr(skeleton, DW_AT_GNU_dwo_name, &a));
  const char *dir = dwarf_formstring(dwarf_attr(skeleton, DW_AT_comp_dir, &a));
  if (!name)
    name = "?";
  size_t ld = dir && name[0] != '/' ? strlen(dir) : 0, ln = strlen(name);
  d->missing_split = mp_xmalloc(ld + ln + 2);
  if (ld) {
    memcpy(d->missing_split, dir, ld);
    d->missing_split[ld++] = '/';
  }
  memcpy(d->missing_split + ld, name, ln + 1);
}

/* A CU without ranges of its own is covered by its functions (LLVM's
 * DWARFUnit::collectAddressRanges does the same). */
static void add_cu_from_functions(sym_dwarf *d, sym_cu *cu, uint64_t key) {
  sym_cu_build_code(d, cu);
  for (size_t i = 0; i < cu->code.n; i++)
    sym_ranges_add(&d->cu_ranges, cu->code.r[i].lo, cu->code.r[i].hi, key);
}

int sym_dwarf_index(sym_dwarf *d) {
  if (d->ready)
    return 0;
  Dwarf_CU *unit = NULL;
  Dwarf_Half version;
  uint8_t type;
  Dwarf_Die cudie, subdie;
  size_t cap = 0;
  while (dwarf_get_units(d->dw, unit, &unit, &version, &type, &cudie,
                         &subdie) == 0) {
    /* Split DWARF: the skeleton in the binary has the unit's address
     * ranges and line table, the split unit (.dwo) its functions.  Type
     * units hold no code. */
    Dwarf_Die *die = &cudie;
    if (type == DW_UT_skeleton) {
      if (subdie.addr == NULL) {
        note_missing_split(d, &cudie);
        continue;
      }
      die = &subdie;
    } else if (type != DW_UT_compile && type != DW_UT_partial) {
      continue;
    }
    sym_cu *cu = push_cu(d, &cap, die, &cudie);
    uint64_t key = d->ncus - 1;
    if (sym_add_die_ranges(&d->cu_ranges, &cu->unit, key) == 0)
      add_cu_from_functions(d, cu, key);
  }
  sym_ranges_finish(&d->cu_ranges);
  d->ready = 1;
  return 0;
}

void sym_dwarf_free(sym_dwarf *d) {
  for (size_t i = 0; i < d->ncus; i++) {
    sym_cu *cu = &d->cus[i];
    sym_ranges_free(&cu->code);
    free(cu->nodes);
    if (cu->attr_index.slots)
      mp_map_free(&cu->attr_index);
    free(cu->attrs);
    for (size_t k = 0; cu->paths && k < cu->nfiles; k++)
      free(cu->paths[k]);
    free(cu->paths);
    sym_lines_free(&cu->table);
  }
  free(d->cus);
  free(d->chain);
  free(d->missing_split);
  sym_ranges_free(&d->cu_ranges);
  if (d->dw)
    dwarf_end(d->dw);
  memset(d, 0, sizeof *d);
}
