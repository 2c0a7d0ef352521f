/* sym_index.c - sorted address-range indexes over DWARF.
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

void sym_ranges_add(sym_range_index *ix, uint64_t lo, uint64_t hi,
                    uint64_t key) {
  /* Empty ranges and the linkers' tombstones for discarded code cover
   * nothing; LLVM skips them too. */
  if (lo >= hi || lo == (uint64_t)-1)
    return;
  if (ix->n == ix->cap) {
    ix->cap = ix->cap ? 2 * ix->cap : 16;
    ix->r = mp_xrealloc(ix->r, ix->cap * sizeof *ix->r);
  }
  ix->r[ix->n++] = (sym_range){lo, hi, key};
}

/* Same start: the outer range first, so the inner one is pushed later
 * and wins; on equal ranges, the later DIE (the child) wins. */
static inline int range_before(const sym_range *x, const sym_range *y) {
  if (x->lo != y->lo)
    return x->lo < y->lo;
  if (x->hi != y->hi)
    return x->hi > y->hi;
  return x->key < y->key;
}

static inline void swap_ranges(sym_range *a, sym_range *b) {
  sym_range t = *a;
  *a = *b;
  *b = t;
}

static void sift_down(sym_range *r, size_t i, size_t n) {
  for (size_t c; (c = 2 * i + 1) < n; i = c) {
    if (c + 1 < n && range_before(&r[c], &r[c + 1]))
      c++;
    if (!range_before(&r[i], &r[c]))
      return;
    swap_ranges(&r[i], &r[c]);
  }
}

/* Introsort in place: quicksort on a median of three, insertion sort for
 * short slices, heapsort past a depth limit.  In place because a unit's
 * ranges are tens of thousands and every page written for the first time
 * is a fault.  (Equal ranges are equal in every field, so any correct sort
 * gives the same array.) */
static void sort_ranges(sym_range *r, size_t n, unsigned depth) {
  while (n > 16) {
    if (depth-- == 0) {
      for (size_t i = n / 2; i-- > 0;)
        sift_down(r, i, n);
      for (size_t i = n; i-- > 1;) {
        swap_ranges(&r[0], &r[i]);
        sift_down(r, 0, i);
      }
      return;
    }
    size_t m = n / 2;
    if (range_before(&r[m], &r[0]))
      swap_ranges(&r[m], &r[0]);
    if (range_before(&r[n - 1], &r[0]))
      swap_ranges(&r[n - 1], &r[0]);
    if (range_before(&r[n - 1], &r[m]))
      swap_ranges(&r[n - 1], &r[m]);
    sym_range pivot = r[m];
    size_t i = 0, j = n - 1;
    for (;;) {
      while (range_before(&r[i], &pivot))
        i++;
      while (range_before(&pivot, &r[j]))
        j--;
      if (i >= j)
        break;
      swap_ranges(&r[i++], &r[j--]);
    }
    /* [0, j] <= pivot <= [j + 1, n): recurse on the smaller side */
    if (j + 1 < n - j - 1) {
      sort_ranges(r, j + 1, depth);
      r += j + 1;
      n -= j + 1;
    } else {
      sort_ranges(r + j + 1, n - j - 1, depth);
      n = j + 1;
    }
  }
  for (size_t i = 1; i < n; i++) {
    sym_range x = r[i];
    size_t k = i;
    for (; k > 0 && range_before(&x, &r[k - 1]); k--)
      r[k] = r[k - 1];
    r[k] = x;
  }
}

static void emit(sym_range *out, size_t *n, uint64_t lo, uint64_t hi,
                 uint64_t key) {
  if (lo < hi)
    out[(*n)++] = (sym_range){lo, hi, key};
}

/* Sweep over the sorted ranges with a stack of the open ones: each point
 * belongs to the range on top of the stack, i.e. the innermost.  The
 * segments (at most 2n + 1) are written after the ranges in the same
 * array, then moved to its start. */
void sym_ranges_finish(sym_range_index *ix) {
  size_t n = ix->n;
  if (!n)
    return;
  unsigned depth = 0;
  for (size_t k = n; k; k >>= 1)
    depth += 2;
  sort_ranges(ix->r, n, depth);
  if (ix->cap < 3 * n + 1) {
    ix->cap = 3 * n + 1;
    ix->r = mp_xrealloc(ix->r, ix->cap * sizeof *ix->r);
  }
  sym_range *in = ix->r, *out = ix->r + n;
  sym_range *stack = mp_xmalloc(n * sizeof *stack);
  size_t nout = 0, sp = 0;
  uint64_t cur = 0;
  for (size_t i = 0; i <= n; i++) {
    uint64_t lo = i < n ? in[i].lo : UINT64_MAX;
    while (sp && stack[sp - 1].hi <= lo) {
      sym_range top = stack[--sp];
      if (top.hi > cur) {
        emit(out, &nout, cur, top.hi, top.key);
        cur = top.hi;
      }
    }
    if (i == n)
      break;
    if (sp)
      emit(out, &nout, cur, lo, stack[sp - 1].key);
    if (lo > cur)
      cur = lo;
    stack[sp++] = in[i];
  }
  free(stack);
  memmove(ix->r, out, nout * sizeof *out);
  ix->n = nout;
}

const sym_range *sym_ranges_find(const sym_range_index *ix, uint64_t addr) {
  size_t lo = 0, hi = ix->n; /* first segment with lo > addr */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (ix->r[mid].lo <= addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo && addr < ix->r[lo - 1].hi)
    return &ix->r[lo - 1];
  return NULL;
}

void sym_ranges_free(sym_range_index *ix) {
  free(ix->r);
  memset(ix, 0, sizeof *ix);
}

/* Adds every [start, end) of `die` (low/high pc or DW_AT_ranges); returns
 * how many non-empty ranges were added. */
size_t sym_add_die_ranges(sym_range_index *ix, Dwarf_Die *die, uint64_t key) {
  Dwarf_Addr base, start, end;
  ptrdiff_t off = 0;
  size_t before = ix->n;
  while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0)
    sym_ranges_add(ix, start, end, key);
  return ix->n - before;
}

uint32_t sym_push_node(sym_cu *cu, Dwarf_Off off, uint32_t parent,
                       int is_subprogram) {
  if (cu->nnodes == cu->capnodes) {
    cu->capnodes = cu->capnodes ? 2 * cu->capnodes : 256;
    cu->nodes = mp_xrealloc(cu->nodes, cu->capnodes * sizeof *cu->nodes);
  }
  sym_node *n = &cu->nodes[cu->nnodes];
  memset(n, 0, sizeof *n);
  n->off = off;
  n->parent = parent;
  n->is_subprogram = (uint32_t)is_subprogram;
  return (uint32_t)cu->nnodes++;
}

/* DIEs whose children may hold code.  Skipping the rest (types,
 * variables, parameters) halves the work: without DW_AT_sibling (clang
 * emits none) dwarf_siblingof parses a skipped subtree once, a visited one
 * twice. */
int sym_may_hold_code(int tag) {
  switch (tag) {
  case DW_TAG_subprogram:
  case DW_TAG_inlined_subroutine:
  case DW_TAG_lexical_block:
  case DW_TAG_namespace:
  case DW_TAG_module:
  case DW_TAG_try_block:
  case DW_TAG_catch_block:
    return 1;
  default:
    return 0;
  }
}

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
  if (sym_scan_code(d, cu) != 0) /* start again, the slow way */
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

void sym_dwarf_sections(sym_dwarf *d) {
  if (d->sections_ready)
    return;
  Elf *elf = dwarf_getelf(d->dw);
  d->line = sym_elf_section(elf, ".debug_line");
  d->line_str = sym_elf_section(elf, ".debug_line_str");
  d->str = sym_elf_section(elf, ".debug_str");
  d->abbrev = sym_elf_section(elf, ".debug_abbrev");
  d->addr = sym_elf_section(elf, ".debug_addr");
  d->rnglists = sym_elf_section(elf, ".debug_rnglists");
  d->sections_ready = 1;
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
