/* rt_cfi.c - x86-64 call frame information as the stack walk needs it:
 * the rule (rt_unwind.h) by which a return address's function finds its
 * caller, read from the module's mapped .eh_frame.
 *
 * The FDE covering the PC is found by binary search in .eh_frame_hdr's
 * sorted table; its CIE is parsed for the alignment factors, the pointer
 * encoding and the initial instructions; then the CFA program runs up to
 * the PC, tracking only what the walk can use: the CFA (a register and an
 * offset), the return address and %rbp.  Everything else is parsed and
 * ignored.  Anything the walk could not follow (a CFA expression or in
 * another register, a return address not in memory, malformed data)
 * yields an FP rule, which is what the walk did before it had tables.
 *
 * Runs inside malloc, so it allocates nothing, takes no lock and reads
 * only the module's segment [lo, hi): every cursor is bounded by it, and
 * every loop by the bytes it consumes. */
#include "rt_unwind.h"

/* DWARF register numbers */
#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16

#define DW_EH_PE_omit 0xff
#define DW_EH_PE_datarel 0x30
#define DW_EH_PE_sdata4 0x0b
#define MAX_STATES 8 /* DW_CFA_remember_state depth */

typedef struct cursor {
  const uint8_t *p, *end;
  int bad; /* ran past end or met something unsupported */
} cursor;

static uint64_t rd_fixed(cursor *c, unsigned n) {
  if (c->bad || (size_t)(c->end - c->p) < n) {
    c->bad = 1;
    return 0;
  }
  uint64_t v = 0;
  for (unsigned i = 0; i < n; i++)
    v |= (uint64_t)c->p[i] << (8 * i);
  c->p += n;
  return v;
}

static uint8_t rd_u8(cursor *c) { return (uint8_t)rd_fixed(c, 1); }

static uint64_t rd_uleb(cursor *c) {
  uint64_t v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    uint8_t b = rd_u8(c);
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80))
      return v;
  }
  c->bad = 1;
  return 0;
}

static int64_t rd_sleb(cursor *c) {
  uint64_t v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    uint8_t b = rd_u8(c);
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      if ((b & 0x40) && shift + 7 < 64)
        v |= ~0ULL << (shift + 7);
      return (int64_t)v;
    }
  }
  c->bad = 1;
  return 0;
}

static int64_t sign_extend(uint64_t v, unsigned bytes) {
  unsigned sh = 64 - 8 * bytes;
  return (int64_t)(v << sh) >> sh;
}

/* A value in pointer encoding `enc`'s format (no base applied). */
static uint64_t rd_format(cursor *c, uint8_t enc) {
  switch (enc & 0x0f) {
  case 0x00: return rd_fixed(c, 8);              /* absptr */
  case 0x01: return rd_uleb(c);                  /* uleb128 */
  case 0x02: return rd_fixed(c, 2);              /* udata2 */
  case 0x03: return rd_fixed(c, 4);              /* udata4 */
  case 0x04: return rd_fixed(c, 8);              /* udata8 */
  case 0x09: return (uint64_t)rd_sleb(c);        /* sleb128 */
  case 0x0a: return (uint64_t)sign_extend(rd_fixed(c, 2), 2);
  case 0x0b: return (uint64_t)sign_extend(rd_fixed(c, 4), 4);
  case 0x0c: return rd_fixed(c, 8);              /* sdata8 */
  }
  c->bad = 1;
  return 0;
}

/* A pointer in encoding `enc`: absolute, or relative to its own address or
 * to `datarel` (the .eh_frame_hdr).  Indirect and other bases: bad. */
static uintptr_t rd_pointer(cursor *c, uint8_t enc, const uint8_t *datarel) {
  const uint8_t *at = c->p;
  uint64_t v = rd_format(c, enc);
  switch (enc & 0xf0) {
  case 0x00: return v;
  case 0x10: return (uintptr_t)at + v;
  case DW_EH_PE_datarel:
    if (datarel)
      return (uintptr_t)datarel + v;
  }
  c->bad = 1;
  return 0;
}

/* ---- .eh_frame_hdr ----------------------------------------------------- */

/* The FDE whose table entry is the last starting at or below pc, or NULL.
 * Only the linkers' table encoding (4-byte offsets from the header) is
 * read; a header without a table gives no FDE. */
static const uint8_t *search_table(const rt_cfi_module *m, uintptr_t pc) {
  const uint8_t *h = m->hdr;
  if (h < m->lo || m->hi - h < 4 || h[0] != 1 || h[2] == DW_EH_PE_omit ||
      h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
    return NULL;
  cursor c = {h + 4, m->hi, 0};
  rd_pointer(&c, h[1], h); /* eh_frame_ptr: not needed */
  uint64_t count = rd_pointer(&c, h[2], h);
  if (c.bad || count > (uint64_t)(m->hi - c.p) / 8)
    return NULL;
  const uint8_t *table = c.p;
  size_t lo = 0, hi = (size_t)count; /* entries [0, lo) start at or below pc */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    cursor e = {table + 8 * mid, m->hi, 0};
    uintptr_t start = (uintptr_t)h + (uintptr_t)sign_extend(rd_fixed(&e, 4), 4);
    if (start <= pc)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (!lo)
    return NULL;
  cursor e = {table + 8 * (lo - 1) + 4, m->hi, 0};
  const uint8_t *fde = h + sign_extend(rd_fixed(&e, 4), 4);
  return fde >= m->lo && fde < m->hi ? fde : NULL;
}

/* ---- CIE and FDE --------------------------------------------------------- */

typedef struct cie {
  uint64_t code_align;
  int64_t data_align;
  uint8_t fde_enc;
  int has_aug_len; /* 'z': FDEs carry an augmentation length */
  cursor insns;    /* the initial instructions */
} cie;

/* The record at p: its body in *body (after the length); 0 if it does not
 * fit in the module. */
static int record(const rt_cfi_module *m, const uint8_t *p, cursor *body) {
  cursor c = {p, m->hi, 0};
  uint64_t len = rd_fixed(&c, 4);
  if (len == 0xffffffffu)
    len = rd_fixed(&c, 8);
  if (c.bad || len == 0 || len > (uint64_t)(m->hi - c.p))
    return 0;
  *body = (cursor){c.p, c.p + len, 0};
  return 1;
}

static int parse_cie(const rt_cfi_module *m, const uint8_t *p, cie *out) {
  cursor c;
  if (p < m->lo || !record(m, p, &c) || rd_fixed(&c, 4) != 0)
    return 0;
  uint8_t version = rd_u8(&c);
  if (version != 1 && version != 3)
    return 0;
  char aug[8];
  unsigned n = 0;
  for (uint8_t ch; (ch = rd_u8(&c)) != 0 && !c.bad;)
    if (n == sizeof aug - 1)
      return 0;
    else
      aug[n++] = (char)ch;
  aug[n] = 0;
  out->code_align = rd_uleb(&c);
  out->data_align = rd_sleb(&c);
  uint64_t ra_reg = version == 1 ? rd_u8(&c) : rd_uleb(&c);
  out->fde_enc = 0; /* absptr */
  out->has_aug_len = aug[0] == 'z';
  if (n && !out->has_aug_len)
    return 0; /* an augmentation we cannot skip */
  if (out->has_aug_len) {
    uint64_t len = rd_uleb(&c);
    if (c.bad || len > (uint64_t)(c.end - c.p))
      return 0;
    cursor a = {c.p, c.p + len, 0};
    c.p += len;
    for (unsigned i = 1; i < n && !a.bad; i++) {
      if (aug[i] == 'R')
        out->fde_enc = rd_u8(&a);
      else if (aug[i] == 'P')
        rd_format(&a, rd_u8(&a)); /* the personality routine: not needed */
      else if (aug[i] == 'L')
        rd_u8(&a); /* LSDA encoding */
      else if (aug[i] != 'S' && aug[i] != 'B')
        break; /* the rest is skipped by the length */
    }
    if (a.bad)
      return 0;
  }
  out->insns = c;
  return !c.bad && ra_reg == REG_RA && out->code_align;
}

/* ---- the CFA program ----------------------------------------------------- */

enum { R_SAME, R_UNDEF, R_OFFSET, R_OTHER };
typedef struct reg_rule {
  uint8_t how;
  int64_t off; /* R_OFFSET: saved at CFA + off */
} reg_rule;

typedef struct row {
  uint64_t cfa_reg;
  int64_t cfa_off;
  int cfa_expr;
  reg_rule rbp, ra;
} row;

typedef struct machine {
  row cur, initial; /* initial: after the CIE's instructions (DW_CFA_restore) */
  row saved[MAX_STATES];
  unsigned depth;
  uintptr_t loc, target;
  const cie *cie;
} machine;

static reg_rule *rule_of(row *r, uint64_t reg) {
  return reg == REG_RBP ? &r->rbp : reg == REG_RA ? &r->ra : NULL;
}

static void set_rule(machine *mc, uint64_t reg, uint8_t how, int64_t off) {
  reg_rule *r = rule_of(&mc->cur, reg);
  if (r)
    *r = (reg_rule){how, off};
}

static void restore_rule(machine *mc, uint64_t reg) {
  reg_rule *r = rule_of(&mc->cur, reg);
  if (r)
    *r = *rule_of(&mc->initial, reg);
}

/* Moves the location; 0 once it passes the target (the row is found). */
static int advance(machine *mc, uint64_t delta) {
  mc->loc += delta * mc->cie->code_align;
  return mc->loc <= mc->target;
}

/* Skips a DW_FORM_block operand (expressions). */
static void skip_block(cursor *c) {
  uint64_t len = rd_uleb(c);
  if (c->bad || len > (uint64_t)(c->end - c->p))
    c->bad = 1;
  else
    c->p += len;
}

/* One instruction; 0 when the row for the target is complete or the
 * program cannot be followed (c->bad). */
static int step(machine *mc, cursor *c) {
  uint8_t op = rd_u8(c);
  int64_t daf = mc->cie->data_align;
  uint64_t reg;
  switch (op >> 6) {
  case 1: return advance(mc, op & 0x3f);
  case 2: set_rule(mc, op & 0x3f, R_OFFSET, (int64_t)rd_uleb(c) * daf); return 1;
  case 3: restore_rule(mc, op & 0x3f); return 1;
  }
  switch (op) {
  case 0x00: return 1; /* nop */
  case 0x01: /* set_loc */
    mc->loc = rd_pointer(c, mc->cie->fde_enc, NULL);
    return mc->loc <= mc->target;
  case 0x02: return advance(mc, rd_fixed(c, 1));
  case 0x03: return advance(mc, rd_fixed(c, 2));
  case 0x04: return advance(mc, rd_fixed(c, 4));
  case 0x05: /* offset_extended */
    reg = rd_uleb(c);
    set_rule(mc, reg, R_OFFSET, (int64_t)rd_uleb(c) * daf);
    return 1;
  case 0x06: restore_rule(mc, rd_uleb(c)); return 1;
  case 0x07: set_rule(mc, rd_uleb(c), R_UNDEF, 0); return 1;
  case 0x08: set_rule(mc, rd_uleb(c), R_SAME, 0); return 1;
  case 0x09: /* register: the value is in another register */
    reg = rd_uleb(c);
    rd_uleb(c);
    set_rule(mc, reg, R_OTHER, 0);
    return 1;
  case 0x0a: /* remember_state */
    if (mc->depth == MAX_STATES)
      c->bad = 1;
    else
      mc->saved[mc->depth++] = mc->cur;
    return 1;
  case 0x0b: /* restore_state */
    if (!mc->depth)
      c->bad = 1;
    else
      mc->cur = mc->saved[--mc->depth];
    return 1;
  case 0x0c: /* def_cfa */
    mc->cur.cfa_reg = rd_uleb(c);
    mc->cur.cfa_off = (int64_t)rd_uleb(c);
    mc->cur.cfa_expr = 0;
    return 1;
  case 0x0d: mc->cur.cfa_reg = rd_uleb(c); return 1; /* def_cfa_register */
  case 0x0e: mc->cur.cfa_off = (int64_t)rd_uleb(c); return 1; /* def_cfa_offset */
  case 0x0f: skip_block(c); mc->cur.cfa_expr = 1; return 1; /* def_cfa_expression */
  case 0x10: /* expression */
  case 0x16: /* val_expression */
    reg = rd_uleb(c);
    skip_block(c);
    set_rule(mc, reg, R_OTHER, 0);
    return 1;
  case 0x11: /* offset_extended_sf */
    reg = rd_uleb(c);
    set_rule(mc, reg, R_OFFSET, rd_sleb(c) * daf);
    return 1;
  case 0x12: /* def_cfa_sf */
    mc->cur.cfa_reg = rd_uleb(c);
    mc->cur.cfa_off = rd_sleb(c) * daf;
    mc->cur.cfa_expr = 0;
    return 1;
  case 0x13: mc->cur.cfa_off = rd_sleb(c) * daf; return 1; /* def_cfa_offset_sf */
  case 0x14: /* val_offset: the value is CFA + offset, not in memory */
  case 0x15: /* val_offset_sf */
    reg = rd_uleb(c);
    if (op == 0x14)
      rd_uleb(c);
    else
      rd_sleb(c);
    set_rule(mc, reg, R_OTHER, 0);
    return 1;
  case 0x2e: rd_uleb(c); return 1; /* GNU_args_size */
  case 0x2f: /* GNU_negative_offset_extended */
    reg = rd_uleb(c);
    set_rule(mc, reg, R_OFFSET, -(int64_t)rd_uleb(c) * daf);
    return 1;
  }
  c->bad = 1;
  return 0;
}

/* Runs c to its end or to the target's row; 0 if it cannot be followed. */
static int run(machine *mc, cursor *c) {
  while (c->p < c->end && !c->bad)
    if (!step(mc, c))
      break;
  return !c->bad;
}

static int fits_i32(int64_t v) { return v >= -0x7fffffff && v <= 0x7fffffff; }

/* The walk's rule from the row of the target. */
static rt_cfa_rule to_rule(const row *r) {
  rt_cfa_rule fp = {RT_CFA_FP, RT_RBP_SAVED, 16, -16, -8};
  if (r->ra.how == R_UNDEF)
    return (rt_cfa_rule){RT_CFA_STOP, RT_RBP_SAME, 0, 0, 0};
  if (r->cfa_expr || r->ra.how != R_OFFSET || !fits_i32(r->cfa_off) ||
      !fits_i32(r->ra.off) || (r->rbp.how == R_OFFSET && !fits_i32(r->rbp.off)))
    return fp;
  rt_cfa_rule out = {0, RT_RBP_SAME, (int32_t)r->cfa_off, 0, (int32_t)r->ra.off};
  if (r->rbp.how == R_OFFSET)
    out.rbp = RT_RBP_SAVED, out.rbp_off = (int32_t)r->rbp.off;
  else if (r->rbp.how != R_SAME)
    out.rbp = RT_RBP_UNDEF;
  if (r->cfa_reg == REG_RSP)
    out.kind = RT_CFA_SP;
  else if (r->cfa_reg == REG_RBP)
    out.kind = RT_CFA_RBP;
  else
    return fp;
  if (out.kind == RT_CFA_RBP && out.cfa_off == 16 && out.rbp == RT_RBP_SAVED &&
      out.rbp_off == -16 && out.ra_off == -8)
    return fp;
  return out;
}

rt_cfa_rule rt_cfi_rule(const rt_cfi_module *m, uintptr_t pc) {
  const rt_cfa_rule fp = {RT_CFA_FP, RT_RBP_SAVED, 16, -16, -8};
  uintptr_t target = pc - 1;
  const uint8_t *fde = search_table(m, target);
  cursor c;
  if (!fde || !record(m, fde, &c))
    return fp;
  const uint8_t *id_at = c.p;
  uint64_t cie_off = rd_fixed(&c, 4);
  cie ci;
  if (c.bad || !cie_off || cie_off > (uint64_t)(id_at - m->lo) ||
      !parse_cie(m, id_at - cie_off, &ci))
    return fp;
  uintptr_t begin = rd_pointer(&c, ci.fde_enc, NULL);
  uint64_t range = rd_format(&c, ci.fde_enc);
  if (c.bad || target < begin || target - begin >= range)
    return fp; /* no FDE covers pc: code without unwind information */
  if (ci.has_aug_len)
    skip_block(&c);
  machine mc = {.cie = &ci, .loc = begin, .target = target};
  mc.cur = (row){REG_RSP, 8, 0, {R_SAME, 0}, {R_OFFSET, -8}};
  /* The CIE's instructions set the initial row whatever their advances. */
  mc.target = UINTPTR_MAX;
  if (!run(&mc, &ci.insns) || mc.depth)
    return fp;
  mc.initial = mc.cur;
  mc.loc = begin;
  mc.target = target;
  if (!run(&mc, &c))
    return fp;
  return to_rule(&mc.cur);
}
