/* sym_scan.c - a unit's subprogram tree read straight from .debug_info.
 *
 * sym_index.c's walk finds the subprogram and inlined_subroutine DIEs with
 * code through libdw, which decodes every attribute of every DIE it steps
 * over (without DW_AT_sibling, which clang does not emit, skipping a
 * subtree means reading it).  In a unit of a hundred thousand DIEs that is
 * most of a merge's time.  This file does the same walk over the raw bytes:
 * the unit's abbreviations are decoded once, a DIE whose attributes all
 * have a fixed size is skipped in one step, and only the functions'
 * DW_AT_low_pc/high_pc and DWARF 5 DW_AT_ranges lists are decoded; a
 * function whose ranges are anything else (DWARF 4 .debug_ranges, unusual
 * forms, bases libdw would compute) is handed to libdw's dwarf_ranges.
 *
 * The result must be the walk's, node for node.  Anything this file does
 * not read (a form it does not know, an abbreviation code not in the
 * table, bytes past the unit, a DW_AT_sibling that does not point where
 * the subtree ends) makes sym_scan_code return -1, and the caller runs the
 * libdw walk instead.
 */
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "sym_internal.h"

/* The raw bytes of the sections the raw readers decode (this file and
 * sym_lines.c), once per module. */
void sym_dwarf_sections(sym_dwarf *d) {
  if (d->sections_ready)
    return;
  Elf *elf = dwarf_getelf(d->dw);
  d->info = sym_elf_section(elf, ".debug_info");
  d->line = sym_elf_section(elf, ".debug_line");
  d->line_str = sym_elf_section(elf, ".debug_line_str");
  d->str = sym_elf_section(elf, ".debug_str");
  d->abbrev = sym_elf_section(elf, ".debug_abbrev");
  d->addr = sym_elf_section(elf, ".debug_addr");
  d->rnglists = sym_elf_section(elf, ".debug_rnglists");
  d->sections_ready = 1;
}

#ifndef DW_FORM_GNU_addr_index
#define DW_FORM_GNU_addr_index 0x1f01
#define DW_FORM_GNU_str_index 0x1f02
#endif
#ifndef DW_AT_GNU_addr_base
#define DW_AT_GNU_addr_base 0x2133
#endif
#ifndef DW_FORM_GNU_ref_alt
#define DW_FORM_GNU_ref_alt 0x1f20
#define DW_FORM_GNU_strp_alt 0x1f21
#endif

/* ---- the unit's abbreviations ---- */

typedef struct spec {
  uint32_t name, form;
} spec;

typedef struct abbrev {
  uint32_t tag;
  uint8_t defined, children, sibling; /* sibling: has DW_AT_sibling */
  uint8_t fn;         /* a subprogram or inlined_subroutine */
  uint8_t holds_code; /* sym_may_hold_code(tag) */
  int32_t size; /* bytes of all attributes when every form is fixed, else -1 */
  uint32_t first, n; /* its attributes in scan.specs */
  uint32_t first_op, nops; /* how to skip them, in scan.ops */
} abbrev;

/* Skipping a DIE's attributes: runs of fixed-size forms are one step. */
enum { V_NONE, V_LEB, V_STRING, V_BLOCK1, V_BLOCK2, V_BLOCK4, V_BLOCK_LEB,
       V_OTHER };
typedef struct skip_op {
  uint32_t bytes; /* fixed bytes to skip first */
  uint16_t kind;  /* then a variable-size value of this kind (V_*) */
  uint16_t form;  /* its form, for V_OTHER (DW_FORM_indirect) */
} skip_op;

typedef struct scan {
  sym_cu *cu;
  unsigned version, addr_size, offset_size;
  const uint8_t *info;     /* .debug_info */
  const sym_section *addr; /* .debug_addr */
  uint64_t addr_base;
  int has_addr_base;
  const sym_section *rnglists; /* .debug_rnglists */
  uint64_t rnglists_base, cu_base;
  int has_rnglists_base, has_cu_base;
  abbrev *ab;
  size_t nab;
  spec *specs;
  size_t nspecs, capspecs;
  skip_op *ops;
  size_t nops, capops;
} scan;

/* Bytes a form's value takes when that does not depend on the value;
 * -1 when it does, -2 for a form this file does not know. */
static int form_size(const scan *s, uint32_t form) {
  switch (form) {
  case DW_FORM_flag_present:
  case DW_FORM_implicit_const: return 0;
  case DW_FORM_data1:
  case DW_FORM_ref1:
  case DW_FORM_flag:
  case DW_FORM_strx1:
  case DW_FORM_addrx1: return 1;
  case DW_FORM_data2:
  case DW_FORM_ref2:
  case DW_FORM_strx2:
  case DW_FORM_addrx2: return 2;
  case DW_FORM_strx3:
  case DW_FORM_addrx3: return 3;
  case DW_FORM_data4:
  case DW_FORM_ref4:
  case DW_FORM_ref_sup4:
  case DW_FORM_strx4:
  case DW_FORM_addrx4: return 4;
  case DW_FORM_data8:
  case DW_FORM_ref8:
  case DW_FORM_ref_sig8:
  case DW_FORM_ref_sup8: return 8;
  case DW_FORM_data16: return 16;
  case DW_FORM_addr: return (int)s->addr_size;
  case DW_FORM_ref_addr:
    return (int)(s->version == 2 ? s->addr_size : s->offset_size);
  case DW_FORM_strp:
  case DW_FORM_sec_offset:
  case DW_FORM_line_strp:
  case DW_FORM_strp_sup:
  case DW_FORM_GNU_ref_alt:
  case DW_FORM_GNU_strp_alt: return (int)s->offset_size;
  case DW_FORM_block1:
  case DW_FORM_block2:
  case DW_FORM_block4:
  case DW_FORM_block:
  case DW_FORM_exprloc:
  case DW_FORM_string:
  case DW_FORM_sdata:
  case DW_FORM_udata:
  case DW_FORM_ref_udata:
  case DW_FORM_strx:
  case DW_FORM_addrx:
  case DW_FORM_loclistx:
  case DW_FORM_rnglistx:
  case DW_FORM_GNU_addr_index:
  case DW_FORM_GNU_str_index:
  case DW_FORM_indirect: return -1;
  default: return -2;
  }
}

/* Skips one value; DW_FORM_indirect names its form first. */
static void skip_value(const scan *s, mp_cursor *r, uint32_t form) {
  int n = form_size(s, form);
  if (n >= 0) {
    mp_skip(r, (uint64_t)n);
    return;
  }
  switch (form) {
  case DW_FORM_block1: mp_skip(r, mp_fixed(r, 1)); return;
  case DW_FORM_block2: mp_skip(r, mp_fixed(r, 2)); return;
  case DW_FORM_block4: mp_skip(r, mp_fixed(r, 4)); return;
  case DW_FORM_block:
  case DW_FORM_exprloc: mp_skip(r, mp_uleb(r)); return;
  case DW_FORM_string: mp_cstr(r); return;
  case DW_FORM_indirect: {
    uint64_t f = mp_uleb(r);
    if (f == DW_FORM_indirect || f == DW_FORM_implicit_const || f > UINT32_MAX)
      r->bad = 1;
    else
      skip_value(s, r, (uint32_t)f);
    return;
  }
  default:
    if (n == -2)
      r->bad = 1;
    else
      mp_uleb(r); /* the LEB128 forms */
    return;
  }
}

static void push_op(scan *s, skip_op op) {
  if (s->nops == s->capops) {
    s->capops = s->capops ? 2 * s->capops : 256;
    s->ops = mp_xrealloc(s->ops, s->capops * sizeof *s->ops);
  }
  s->ops[s->nops++] = op;
}

static uint16_t value_kind(uint32_t form) {
  switch (form) {
  case DW_FORM_block1: return V_BLOCK1;
  case DW_FORM_block2: return V_BLOCK2;
  case DW_FORM_block4: return V_BLOCK4;
  case DW_FORM_block:
  case DW_FORM_exprloc: return V_BLOCK_LEB;
  case DW_FORM_string: return V_STRING;
  case DW_FORM_indirect: return V_OTHER;
  default: return V_LEB; /* the rest of form_size's variable forms */
  }
}

static void plan_skip(scan *s, abbrev *a) {
  a->first_op = (uint32_t)s->nops;
  skip_op op = {0, V_NONE, 0};
  for (uint32_t i = 0; i < a->n; i++) {
    uint32_t form = s->specs[a->first + i].form;
    int n = form_size(s, form);
    if (n >= 0) {
      op.bytes += (uint32_t)n;
      continue;
    }
    op.kind = value_kind(form);
    op.form = (uint16_t)form; /* known forms are below 0x2000 */
    push_op(s, op);
    op = (skip_op){0, V_NONE, 0};
  }
  if (op.bytes)
    push_op(s, op);
  a->nops = (uint32_t)(s->nops - a->first_op);
}

static inline void skip_leb(mp_cursor *r) {
  while (r->p < r->end)
    if (!(*r->p++ & 0x80))
      return;
  r->bad = 1;
}

static void skip_attrs(const scan *s, mp_cursor *r, const abbrev *a) {
  const skip_op *op = &s->ops[a->first_op], *last = op + a->nops;
  for (; op < last && !r->bad; op++) {
    mp_skip(r, op->bytes);
    switch (op->kind) {
    case V_NONE: break;
    case V_LEB: skip_leb(r); break;
    case V_STRING: mp_cstr(r); break;
    case V_BLOCK1: mp_skip(r, mp_fixed(r, 1)); break;
    case V_BLOCK2: mp_skip(r, mp_fixed(r, 2)); break;
    case V_BLOCK4: mp_skip(r, mp_fixed(r, 4)); break;
    case V_BLOCK_LEB: mp_skip(r, mp_uleb(r)); break;
    default: skip_value(s, r, op->form); break;
    }
  }
}

static int read_abbrevs(scan *s, const sym_section *sec, uint64_t off) {
  if (!sec->data || off >= sec->size)
    return -1;
  mp_cursor r = {sec->data + off, sec->data + sec->size, 0};
  for (;;) {
    uint64_t code = mp_uleb(&r);
    if (r.bad)
      return -1;
    if (code == 0)
      return 0;
    if (code > (1u << 20))
      return -1; /* sparse codes: leave them to libdw */
    if (code >= s->nab) {
      size_t n = s->nab ? s->nab : 64;
      while (n <= code)
        n *= 2;
      s->ab = mp_xrealloc(s->ab, n * sizeof *s->ab);
      memset(s->ab + s->nab, 0, (n - s->nab) * sizeof *s->ab);
      s->nab = n;
    }
    abbrev *a = &s->ab[code];
    if (a->defined)
      return -1; /* libdw takes the first: not worth matching */
    a->defined = 1;
    a->tag = (uint32_t)mp_uleb(&r);
    a->fn = a->tag == DW_TAG_subprogram || a->tag == DW_TAG_inlined_subroutine;
    a->holds_code = (uint8_t)sym_may_hold_code((int)a->tag);
    a->children = (uint8_t)mp_fixed(&r, 1);
    a->first = (uint32_t)s->nspecs;
    a->size = 0;
    for (;;) {
      uint64_t name = mp_uleb(&r), form = mp_uleb(&r);
      if (r.bad || name > UINT32_MAX || form > UINT32_MAX)
        return -1;
      if (name == 0 && form == 0)
        break;
      if (form == DW_FORM_implicit_const)
        mp_uleb(&r); /* the value (signed): never needed here */
      int n = form_size(s, (uint32_t)form);
      if (n == -2)
        return -1;
      if (name == DW_AT_sibling)
        a->sibling = 1;
      if (n < 0 || name == DW_AT_sibling)
        a->size = -1;
      else if (a->size >= 0)
        a->size += n;
      if (s->nspecs == s->capspecs) {
        s->capspecs = s->capspecs ? 2 * s->capspecs : 256;
        s->specs = mp_xrealloc(s->specs, s->capspecs * sizeof *s->specs);
      }
      s->specs[s->nspecs++] = (spec){(uint32_t)name, (uint32_t)form};
    }
    a->n = (uint32_t)(s->nspecs - a->first);
    plan_skip(s, a);
  }
}

/* ---- one DIE's attributes ---- */

/* What the walk needs of a DIE: its pc attributes (form 0: absent), and
 * where DW_AT_sibling says its subtree ends (NULL: none). */
typedef struct die_attrs {
  uint32_t low_form, high_form;
  uint64_t low, high;
  int has_ranges;
  uint32_t ranges_form; /* DW_FORM_rnglistx or sec_offset, else 0 */
  uint64_t ranges;
  const uint8_t *sibling;
} die_attrs;

static uint64_t value_of(mp_cursor *r, const scan *s, uint32_t form) {
  switch (form) {
  case DW_FORM_addr: return mp_fixed(r, s->addr_size);
  case DW_FORM_data1:
  case DW_FORM_addrx1: return mp_fixed(r, 1);
  case DW_FORM_data2:
  case DW_FORM_addrx2: return mp_fixed(r, 2);
  case DW_FORM_addrx3: return mp_fixed(r, 3);
  case DW_FORM_data4:
  case DW_FORM_addrx4:
  case DW_FORM_ref4: return mp_fixed(r, 4);
  case DW_FORM_data8:
  case DW_FORM_ref8: return mp_fixed(r, 8);
  case DW_FORM_ref1: return mp_fixed(r, 1);
  case DW_FORM_ref2: return mp_fixed(r, 2);
  case DW_FORM_udata:
  case DW_FORM_addrx:
  case DW_FORM_ref_udata: return mp_uleb(r);
  default: skip_value(s, r, form); return 0;
  }
}

static int is_ref(uint32_t form) {
  return form == DW_FORM_ref1 || form == DW_FORM_ref2 ||
         form == DW_FORM_ref4 || form == DW_FORM_ref8 ||
         form == DW_FORM_ref_udata;
}

/* Reads the attributes of a DIE whose abbreviation is `a`; the unit
 * starts at `unit` (references are relative to it). */
static void read_attrs(const scan *s, mp_cursor *r, const abbrev *a,
                       const uint8_t *unit, die_attrs *out) {
  memset(out, 0, sizeof *out);
  for (uint32_t i = 0; i < a->n && !r->bad; i++) {
    const spec *sp = &s->specs[a->first + i];
    switch (sp->name) {
    case DW_AT_low_pc:
      if (out->low_form || sp->form == DW_FORM_indirect)
        goto other;
      out->low_form = sp->form;
      out->low = value_of(r, s, sp->form);
      break;
    case DW_AT_high_pc:
      if (out->high_form || sp->form == DW_FORM_indirect)
        goto other;
      out->high_form = sp->form;
      out->high = value_of(r, s, sp->form);
      break;
    case DW_AT_ranges:
      if (!out->has_ranges && (sp->form == DW_FORM_rnglistx ||
                               sp->form == DW_FORM_sec_offset)) {
        out->ranges_form = sp->form;
        out->ranges = sp->form == DW_FORM_rnglistx
                          ? mp_uleb(r)
                          : mp_fixed(r, s->offset_size);
        out->has_ranges = 1;
        break;
      }
      out->has_ranges = 1;
      goto other;
    case DW_AT_sibling:
      if (out->sibling || !is_ref(sp->form)) {
        r->bad = 1; /* libdw's rules for those are not copied here */
        break;
      }
      out->sibling = unit + value_of(r, s, sp->form);
      break;
    default:
    other:
      skip_value(s, r, sp->form);
    }
  }
}

/* ---- ranges ---- */

static int address(const scan *s, uint32_t form, uint64_t v, uint64_t *out) {
  if (form == DW_FORM_addr) {
    *out = v;
    return 1;
  }
  if (form != DW_FORM_addrx && form != DW_FORM_addrx1 &&
      form != DW_FORM_addrx2 && form != DW_FORM_addrx3 &&
      form != DW_FORM_addrx4)
    return 0;
  uint64_t at = s->addr_base + v * s->addr_size;
  if (!s->has_addr_base || !s->addr->data || v > s->addr->size ||
      at < s->addr_base || at + s->addr_size > s->addr->size)
    return 0;
  mp_cursor r = {s->addr->data + at, s->addr->data + s->addr->size, 0};
  *out = mp_fixed(&r, s->addr_size);
  return 1;
}

/* A DWARF 5 unit's DW_AT_ranges list, read as libdw's dwarf_ranges reads
 * it (its rnglists base and base address as libdw finds them, when they
 * are plain); 1 and the ranges added, or 0 and none when anything is not
 * as expected, for libdw to read instead. */
static int read_rnglist(const scan *s, const die_attrs *a, uint64_t key) {
  const sym_section *sec = s->rnglists;
  uint64_t off, osz = s->offset_size, asz = s->addr_size;
  if (s->version != 5 || !s->has_cu_base || !sec->data)
    return 0;
  if (a->ranges_form == DW_FORM_sec_offset) {
    off = a->ranges;
  } else {
    uint64_t b = s->rnglists_base;
    if (!s->has_rnglists_base || osz > sec->size || b > sec->size - osz ||
        a->ranges > (sec->size - osz - b) / osz)
      return 0;
    mp_cursor t = {sec->data + b + a->ranges * osz, sec->data + sec->size, 0};
    off = mp_fixed(&t, osz) + b;
  }
  if (off >= sec->size)
    return 0;
  mp_cursor c = {sec->data + off, sec->data + sec->size, 0};
  sym_range_index *ix = &s->cu->code;
  size_t first = ix->n;
  uint64_t base = s->cu_base, b, e;
  for (;;) {
    uint8_t code = (uint8_t)mp_fixed(&c, 1);
    switch (c.bad ? 0xff : code) {
    case DW_RLE_end_of_list: return 1;
    case DW_RLE_base_addressx:
      if (!address(s, DW_FORM_addrx, mp_uleb(&c), &base))
        goto fail;
      continue;
    case DW_RLE_startx_endx:
      if (!address(s, DW_FORM_addrx, mp_uleb(&c), &b) ||
          !address(s, DW_FORM_addrx, mp_uleb(&c), &e))
        goto fail;
      break;
    case DW_RLE_startx_length:
      if (!address(s, DW_FORM_addrx, mp_uleb(&c), &b))
        goto fail;
      e = b + mp_uleb(&c);
      break;
    case DW_RLE_offset_pair:
      b = base + mp_uleb(&c);
      e = base + mp_uleb(&c);
      break;
    case DW_RLE_base_address: base = mp_fixed(&c, asz); continue;
    case DW_RLE_start_end:
      b = mp_fixed(&c, asz);
      e = mp_fixed(&c, asz);
      break;
    case DW_RLE_start_length:
      b = mp_fixed(&c, asz);
      e = b + mp_uleb(&c);
      break;
    default: goto fail;
    }
    if (c.bad)
      goto fail;
    sym_ranges_add(ix, b, e, key);
  }
fail:
  ix->n = first;
  return 0;
}

/* The DIE's ranges into the unit's code index, as dwarf_ranges gives
 * them: [low, high) when both are there, else DW_AT_ranges (through
 * libdw when read_rnglist does not read them). Returns how many were
 * added. */
static size_t add_ranges(const scan *s, const die_attrs *a, Dwarf_Off off,
                         uint64_t key) {
  sym_cu *cu = s->cu;
  if (!a->low_form && !a->high_form && !a->has_ranges)
    return 0;
  uint64_t lo, hi;
  int fast = a->low_form && a->high_form && address(s, a->low_form, a->low, &lo);
  if (fast && !address(s, a->high_form, a->high, &hi)) {
    fast = s->version >= 4 &&
           (a->high_form == DW_FORM_data1 || a->high_form == DW_FORM_data2 ||
            a->high_form == DW_FORM_data4 || a->high_form == DW_FORM_data8 ||
            a->high_form == DW_FORM_udata);
    hi = lo + a->high;
  }
  size_t before = cu->code.n;
  if (fast) {
    sym_ranges_add(&cu->code, lo, hi, key);
    return cu->code.n - before;
  }
  /* Without DW_AT_low_pc, dwarf_ranges goes straight to DW_AT_ranges. */
  if (!a->low_form && a->ranges_form && read_rnglist(s, a, key))
    return cu->code.n - before;
  Dwarf_Die die;
  if (dwarf_offdie(cu->dw, off, &die) == NULL)
    return 0;
  return sym_add_die_ranges(&cu->code, &die, key);
}

/* ---- the walk ---- */

typedef struct level {
  uint32_t parent;        /* node the DIEs at this level hang under */
  int walk;               /* sym_index.c's walk visits this level */
  const uint8_t *sibling; /* where the DIE owning the level says it ends */
} level;

static void push_level(level **stack, size_t *sp, size_t *cap, level l) {
  if (*sp == *cap) {
    *cap = *cap ? 2 * *cap : 32;
    *stack = mp_xrealloc(*stack, *cap * sizeof **stack);
  }
  (*stack)[(*sp)++] = l;
}

static int walk_unit(scan *s, const uint8_t *unit, const uint8_t *die,
                     const uint8_t *end) {
  sym_cu *cu = s->cu;
  mp_cursor r = {die, end, 0};
  level *stack = NULL;
  size_t sp = 0, cap = 0;
  int rc = -1;
  /* The unit DIE: its children are walked. */
  uint64_t code = mp_uleb(&r);
  if (r.bad || code == 0 || code >= s->nab || !s->ab[code].defined)
    goto out;
  const abbrev *a = &s->ab[code];
  die_attrs da;
  read_attrs(s, &r, a, unit, &da);
  if (r.bad)
    goto out;
  if (!a->children) { /* a unit without children */
    rc = da.sibling && da.sibling != r.p ? -1 : 0;
    goto out;
  }
  push_level(&stack, &sp, &cap, (level){SYM_NO_PARENT, 1, da.sibling});
  while (r.p < end) {
    const uint8_t *at = r.p;
    code = *r.p < 0x80 ? *r.p++ : mp_uleb(&r);
    if (r.bad)
      goto out;
    if (code == 0) {
      level done = stack[--sp];
      if (done.sibling && done.sibling != r.p)
        goto out;
      if (sp == 0)
        break;
      continue;
    }
    if (code >= s->nab || !s->ab[code].defined)
      goto out;
    a = &s->ab[code];
    const level *up = &stack[sp - 1];
    da.sibling = NULL;
    if (!up->walk || !a->fn) { /* most DIEs: stepped over */
      if (a->size >= 0)
        mp_skip(&r, (uint64_t)a->size);
      else if (!a->sibling)
        skip_attrs(s, &r, a);
      else
        read_attrs(s, &r, a, unit, &da);
      if (r.bad)
        goto out;
      if (a->children)
        push_level(&stack, &sp, &cap,
                   (level){up->parent, up->walk && a->holds_code, da.sibling});
      else if (da.sibling && da.sibling != r.p)
        goto out;
      continue;
    }
    read_attrs(s, &r, a, unit, &da);
    if (r.bad)
      goto out;
    uint32_t here = up->parent;
    uint32_t idx = sym_push_node(cu, (Dwarf_Off)(at - s->info), here,
                                 a->tag == DW_TAG_subprogram);
    if (add_ranges(s, &da, (Dwarf_Off)(at - s->info), idx))
      here = idx;
    else
      cu->nnodes--;
    if (a->children)
      push_level(&stack, &sp, &cap, (level){here, a->holds_code, da.sibling});
    else if (da.sibling && da.sibling != r.p)
      goto out;
  }
  /* The unit may end without its closing zeros: libdw stops there too. */
  rc = 0;
out:
  free(stack);
  return rc;
}

/* Room for the nodes and ranges a unit of `bytes` can have, at most one
 * function DIE every BYTES_PER_FUNCTION: growing the arrays by doubling
 * copied them (and faulted in their pages) several times over, while
 * room reserved and never written costs no page. */
enum { BYTES_PER_FUNCTION = 16 };

static void reserve(sym_cu *cu, uint64_t bytes) {
  size_t n = (size_t)(bytes / BYTES_PER_FUNCTION) + 1;
  if (cu->capnodes < n) {
    cu->nodes = mp_xrealloc(cu->nodes, n * sizeof *cu->nodes);
    cu->capnodes = n;
  }
  if (cu->code.cap < n) {
    cu->code.r = mp_xrealloc(cu->code.r, n * sizeof *cu->code.r);
    cu->code.cap = n;
  }
}

int sym_scan_code(sym_dwarf *d, sym_cu *cu) {
  if (cu->die.addr != cu->unit.addr || cu->dw != d->dw)
    return -1; /* split units: the walk through libdw */
  Dwarf_Off die_off = dwarf_dieoffset(&cu->die);
  Dwarf_Off cu_off = die_off - dwarf_cuoffset(&cu->die); /* the header's */
  Dwarf_Off next, abbrev_off;
  size_t hsize;
  Dwarf_Half version;
  uint8_t asize, osize;
  if (dwarf_next_unit(d->dw, cu_off, &next, &hsize, &version, &abbrev_off,
                      &asize, &osize, NULL, NULL) != 0 ||
      version < 2 || version > 5 || (asize != 4 && asize != 8) ||
      (osize != 4 && osize != 8) || die_off < cu_off || next <= die_off)
    return -1;
  sym_dwarf_sections(d);
  scan s = {.cu = cu, .version = version, .addr_size = asize,
            .offset_size = osize, .addr = &d->addr};
  s.info = (const uint8_t *)cu->die.addr - die_off;
  /* The unit must lie in the section libdw reads it from: a damaged
   * length would have the walk (and the room reserved for it) go past. */
  if (s.info != d->info.data || next > d->info.size)
    return -1;
  Dwarf_Attribute attr;
  Dwarf_Word base;
  /* libdw prefers DW_AT_GNU_addr_base: such units take the slow way. */
  if (!dwarf_hasattr(&cu->die, DW_AT_GNU_addr_base) &&
      dwarf_formudata(dwarf_attr(&cu->die, DW_AT_addr_base, &attr), &base) == 0) {
    s.addr_base = base;
    s.has_addr_base = 1;
  }
  /* The list base and base address libdw would use, where they are plain:
   * an explicit DW_AT_rnglists_base (libdw recomputes a zero one) and the
   * unit's DW_AT_low_pc. */
  s.rnglists = &d->rnglists;
  Dwarf_Addr low;
  if (dwarf_formudata(dwarf_attr(&cu->die, DW_AT_rnglists_base, &attr),
                      &base) == 0 && base != 0) {
    s.rnglists_base = base;
    s.has_rnglists_base = 1;
  }
  if (dwarf_lowpc(&cu->die, &low) == 0 && low != (Dwarf_Addr)-1) {
    s.cu_base = low;
    s.has_cu_base = 1;
  }
  int rc = -1;
  reserve(cu, next - die_off);
  if (read_abbrevs(&s, &d->abbrev, abbrev_off) == 0)
    rc = walk_unit(&s, s.info + cu_off, cu->die.addr, s.info + next);
  free(s.ab);
  free(s.specs);
  free(s.ops);
  return rc;
}
