/* sym_ranges.c - the address-range index (a sorted table from address to
 * key, in which the innermost range wins) and the nodes of a unit's
 * function tree, which both walks of a unit fill: libdw's (sym_index.c)
 * and the raw one (sym_scan.c).
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
