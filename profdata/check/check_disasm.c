/* check_disasm.c - the binary's calls, with capstone (x86-64).
 *
 * The PLT sections are read first: each entry's `jmp [rip+X]` names the
 * entry after the symbol of GOT slot X.  Then every function is
 * disassembled from its symbol's start to its end (an executable section
 * without function symbols as a whole): a `call` or `jmp` whose target is
 * an allocation function (directly, through a PLT entry or through a GOT
 * slot) is an allocation call; other direct calls, and jumps to another
 * function's start (tail calls), are the edges LTO's clones are told apart
 * by (check_match.c).
 *
 * The hint of a __hot_cold_t call is the last value written to the low 8
 * bits of its argument register before the call: looking back over the
 * function's instructions from the call, the first one that writes the
 * register decides it: `mov reg, imm` gives imm, `xor reg, reg` 0, and
 * `mov reg, reg2` continues with reg2; anything else, a call, a jump or a
 * return first, leaves it unknown.  clang-22 materializes the hint with a
 * `mov esi, imm` right before the call.
 */
#include <capstone/capstone.h>
#include <stdlib.h>
#include <string.h>

#include "check_priv.h"

/* ---- registers ------------------------------------------------------------ */

/* The integer registers by family: 64, 32, 16 and 8 (low, high) bits. */
static const x86_reg FAMILY[][5] = {
    {X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL, X86_REG_AH},
    {X86_REG_RBX, X86_REG_EBX, X86_REG_BX, X86_REG_BL, X86_REG_BH},
    {X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL, X86_REG_CH},
    {X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL, X86_REG_DH},
    {X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL, X86_REG_INVALID},
    {X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL, X86_REG_INVALID},
    {X86_REG_RBP, X86_REG_EBP, X86_REG_BP, X86_REG_BPL, X86_REG_INVALID},
    {X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL, X86_REG_INVALID},
    {X86_REG_R8, X86_REG_R8D, X86_REG_R8W, X86_REG_R8B, X86_REG_INVALID},
    {X86_REG_R9, X86_REG_R9D, X86_REG_R9W, X86_REG_R9B, X86_REG_INVALID},
    {X86_REG_R10, X86_REG_R10D, X86_REG_R10W, X86_REG_R10B, X86_REG_INVALID},
    {X86_REG_R11, X86_REG_R11D, X86_REG_R11W, X86_REG_R11B, X86_REG_INVALID},
    {X86_REG_R12, X86_REG_R12D, X86_REG_R12W, X86_REG_R12B, X86_REG_INVALID},
    {X86_REG_R13, X86_REG_R13D, X86_REG_R13W, X86_REG_R13B, X86_REG_INVALID},
    {X86_REG_R14, X86_REG_R14D, X86_REG_R14W, X86_REG_R14B, X86_REG_INVALID},
    {X86_REG_R15, X86_REG_R15D, X86_REG_R15W, X86_REG_R15B, X86_REG_INVALID},
};
/* The System V argument registers' families: rdi, rsi, rdx, rcx, r8, r9. */
static const int ARG_FAMILY[] = {5, 4, 3, 2, 8, 9};

static int family(unsigned reg) {
  if (reg == X86_REG_INVALID) return -1;
  for (int f = 0; f < 16; f++)
    for (int k = 0; k < 5; k++)
      if (FAMILY[f][k] == reg) return f;
  return -1;
}

/* Whether the register write keeps the family's low 8 bits (ah..dh). */
static int is_high8(unsigned reg) {
  return reg == X86_REG_AH || reg == X86_REG_BH || reg == X86_REG_CH ||
         reg == X86_REG_DH;
}

/* ---- the hint -------------------------------------------------------------- */

typedef struct scan {
  csh cs;
  chk_elf *e;
  chk_calls *out;
  cs_insn *win;   /* the function's instructions so far (a ring) */
  size_t n_win;   /* instructions in the ring */
  size_t head;    /* next slot */
} scan;

#define WINDOW 64

static int is_control(const cs_insn *in) {
  for (uint8_t i = 0; i < in->detail->groups_count; i++) {
    uint8_t g = in->detail->groups[i];
    if (g == CS_GRP_JUMP || g == CS_GRP_CALL || g == CS_GRP_RET ||
        g == CS_GRP_INT || g == CS_GRP_IRET)
      return 1;
  }
  return 0;
}

/* Whether `in` writes a register of family f (other than its high byte). */
static int writes_family(csh cs, const cs_insn *in, int f) {
  cs_regs rd, wr;
  uint8_t nrd = 0, nwr = 0;
  if (cs_regs_access(cs, in, rd, &nrd, wr, &nwr) != CS_ERR_OK) return 1;
  for (uint8_t i = 0; i < nwr; i++)
    if (family(wr[i]) == f && !is_high8(wr[i])) return 1;
  return 0;
}

/* The value the instruction leaves in family f's low byte: 0-255, or
 * CHK_NO_VALUE; *follow is set to the family to continue with when it is
 * a register move. */
static int written_value(const cs_insn *in, int f, int *follow) {
  const cs_x86 *x = &in->detail->x86;
  *follow = -1;
  if (x->op_count != 2 || x->operands[0].type != X86_OP_REG ||
      family(x->operands[0].reg) != f)
    return CHK_NO_VALUE;
  const cs_x86_op *src = &x->operands[1];
  if ((in->id == X86_INS_MOV || in->id == X86_INS_MOVABS) &&
      src->type == X86_OP_IMM)
    return (int)(src->imm & 0xff);
  if (in->id == X86_INS_XOR && src->type == X86_OP_REG &&
      src->reg == x->operands[0].reg)
    return 0;
  if ((in->id == X86_INS_MOV || in->id == X86_INS_MOVZX ||
       in->id == X86_INS_MOVSX) && src->type == X86_OP_REG &&
      !is_high8(src->reg))
    *follow = family(src->reg);
  return CHK_NO_VALUE;
}

/* The hint in argument `arg` at the call, the ring's newest instruction. */
static int hint_value(scan *s, int arg) {
  int f = ARG_FAMILY[arg];
  for (size_t k = 1; k < s->n_win; k++) {
    const cs_insn *in = &s->win[(s->head + WINDOW - 1 - k) % WINDOW];
    if (is_control(in)) return CHK_NO_VALUE;
    if (!writes_family(s->cs, in, f)) continue;
    int follow;
    int v = written_value(in, f, &follow);
    if (v != CHK_NO_VALUE || follow < 0) return v;
    f = follow;
  }
  return CHK_NO_VALUE;
}

/* ---- calls ------------------------------------------------------------------ */

static void push_call(chk_call **v, size_t *n, size_t *cap, const chk_call *c) {
  MP_VEC_RESERVE(*v, *cap, *n + 1);
  (*v)[(*n)++] = *c;
}

/* The target of a call or jump: a direct address, or a GOT slot's name. */
static void target_of(const cs_insn *in, uint64_t *addr, const char **slot,
                      const chk_elf *e) {
  const cs_x86 *x = &in->detail->x86;
  *addr = 0;
  *slot = NULL;
  if (x->op_count != 1) return;
  const cs_x86_op *o = &x->operands[0];
  if (o->type == X86_OP_IMM) *addr = (uint64_t)o->imm;
  if (o->type == X86_OP_MEM && o->mem.base == X86_REG_RIP &&
      o->mem.index == X86_REG_INVALID)
    *slot = chk_elf_got_name(e, in->address + in->size + (uint64_t)o->mem.disp);
}

static void on_branch(scan *s, const cs_insn *in, uint64_t func) {
  int is_call = in->id == X86_INS_CALL;
  if (!is_call && in->id != X86_INS_JMP) return;
  uint64_t addr;
  const char *name;
  target_of(in, &addr, &name, s->e);
  if (addr) name = chk_elf_target_name(s->e, addr);
  int arg = 0;
  chk_kind k = chk_alloc_kind(name, &arg);
  chk_call c = {in->address, addr, func, NULL, (uint8_t)k, CHK_NO_VALUE,
                in->size, (uint8_t)!is_call};
  if (k != CHK_OTHER) {
    c.callee = name;
    if (k == CHK_HINTED) c.value = hint_value(s, arg);
    push_call(&s->out->alloc, &s->out->n_alloc, &s->out->cap_alloc, &c);
    return;
  }
  /* edges: calls, and jumps to the start of another function */
  if (!addr || (!is_call && (addr == func || !chk_elf_target_name(s->e, addr))))
    return;
  push_call(&s->out->edge, &s->out->n_edge, &s->out->cap_edge, &c);
}

/* Disassemble [addr, addr + size) of section x as one function. */
static void scan_range(scan *s, const chk_section *x, uint64_t addr,
                       uint64_t size, uint64_t func) {
  const uint8_t *code = x->data + (addr - x->addr);
  size_t left = size;
  uint64_t pc = addr;
  s->n_win = 0;
  s->head = 0;
  while (left > 0) {
    cs_insn *in = &s->win[s->head];
    if (!cs_disasm_iter(s->cs, &code, &left, &pc, in)) {
      /* not an instruction (data in code): skip a byte */
      code++, left--, pc++;
      s->n_win = 0;
      continue;
    }
    s->head = (s->head + 1) % WINDOW;
    if (s->n_win < WINDOW) s->n_win++;
    on_branch(s, in, func);
  }
}

/* PLT entries: the 8-byte aligned start of each `jmp [rip+X]`'s entry. */
static void scan_plt(scan *s, const chk_section *x) {
  const uint8_t *code = x->data;
  size_t left = x->size;
  uint64_t pc = x->addr;
  cs_insn *in = &s->win[0];
  while (left > 0) {
    if (!cs_disasm_iter(s->cs, &code, &left, &pc, in)) {
      code++, left--, pc++;
      continue;
    }
    if (in->id != X86_INS_JMP) continue;
    uint64_t addr;
    const char *name;
    target_of(in, &addr, &name, s->e);
    if (!name) continue;
    chk_elf *e = s->e;
    MP_VEC_RESERVE(e->plt, e->cap_plt, e->n_plt + 1);
    e->plt[e->n_plt++] = (chk_slot){in->address & ~(uint64_t)7, name};
  }
}

static int by_addr(const void *a, const void *b) {
  const chk_slot *x = a, *y = b;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int by_call_addr(const void *a, const void *b) {
  const chk_call *x = a, *y = b;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Every function symbol inside section x, or x whole when it has none. */
static void scan_section(scan *s, const chk_section *x) {
  const chk_elf *e = s->e;
  int any = 0;
  for (size_t i = 0; i < e->n_syms; i++) {
    const chk_sym *f = &e->syms[i];
    if (f->addr < x->addr || f->addr >= x->addr + x->size) continue;
    if (i > 0 && e->syms[i - 1].addr == f->addr) continue; /* an alias */
    uint64_t end = f->size ? f->addr + f->size : x->addr + x->size;
    if (!f->size && i + 1 < e->n_syms && e->syms[i + 1].addr < end)
      end = e->syms[i + 1].addr;
    if (end > x->addr + x->size) end = x->addr + x->size;
    scan_range(s, x, f->addr, end - f->addr, f->addr);
    any = 1;
  }
  if (!any) scan_range(s, x, x->addr, x->size, 0);
}

static int open_scan(scan *s, chk_elf *e, chk_calls *out, mp_err *err) {
  memset(s, 0, sizeof *s);
  if (cs_open(CS_ARCH_X86, CS_MODE_64, &s->cs) != CS_ERR_OK)
    return mp_fail(err, "capstone: cannot disassemble x86-64");
  cs_option(s->cs, CS_OPT_DETAIL, CS_OPT_ON);
  s->e = e;
  s->out = out;
  s->win = mp_xcalloc(WINDOW, sizeof *s->win);
  cs_detail *details = mp_xcalloc(WINDOW, sizeof *details);
  for (size_t i = 0; i < WINDOW; i++) s->win[i].detail = &details[i];
  return 0;
}

static void close_scan(scan *s) {
  free(s->win[0].detail);
  free(s->win);
  cs_close(&s->cs);
}

/* The PLT entries' names, sorted by address. */
static void name_plt(scan *s) {
  chk_elf *e = s->e;
  for (size_t i = 0; i < e->n_exec; i++)
    if (e->exec[i].is_plt) scan_plt(s, &e->exec[i]);
  if (e->n_plt) qsort(e->plt, e->n_plt, sizeof *e->plt, by_addr); /* NULL when none */
}

int chk_disasm(chk_elf *e, chk_calls *out, mp_err *err) {
  memset(out, 0, sizeof *out);
  scan s;
  if (open_scan(&s, e, out, err) != 0) return -1;
  name_plt(&s);
  for (size_t i = 0; i < e->n_exec; i++)
    if (!e->exec[i].is_plt) scan_section(&s, &e->exec[i]);
  if (out->n_alloc) qsort(out->alloc, out->n_alloc, sizeof *out->alloc, by_call_addr);
  if (out->n_edge) qsort(out->edge, out->n_edge, sizeof *out->edge, by_call_addr);
  close_scan(&s);
  return 0;
}

/* ---- the call before a return address ----------------------------------- */

struct chk_caller {
  scan s;
  chk_calls none; /* on_branch's output, unused */
};

chk_caller *chk_caller_open(chk_elf *e, mp_err *err) {
  chk_caller *c = mp_xcalloc(1, sizeof *c);
  if (open_scan(&c->s, e, &c->none, err) != 0) {
    free(c);
    return NULL;
  }
  name_plt(&c->s);
  return c;
}

void chk_caller_close(chk_caller *c) {
  if (!c) return;
  close_scan(&c->s);
  chk_calls_free(&c->none);
  free(c);
}

/* The executable section holding [addr, addr + len), or NULL. */
static const chk_section *exec_at(const chk_elf *e, uint64_t addr, size_t len) {
  for (size_t i = 0; i < e->n_exec; i++)
    if (addr >= e->exec[i].addr && addr + len <= e->exec[i].addr + e->exec[i].size)
      return &e->exec[i];
  return NULL;
}

/* Call instructions' lengths, most likely first: `call rel32`, `call
 * [rip+X]` (and `bnd call rel32`), `call reg`, `call r8-r15`,
 * `call [reg+disp8]`, `call [reg+disp32]`. */
static const uint8_t CALL_LENGTHS[] = {5, 6, 2, 3, 4, 7};

int chk_call_before(chk_caller *c, uint64_t ret, chk_call *out) {
  const chk_elf *e = c->s.e;
  cs_insn *in = &c->s.win[0];
  for (size_t k = 0; k < sizeof CALL_LENGTHS; k++) {
    uint64_t addr = ret - CALL_LENGTHS[k];
    const chk_section *x = exec_at(e, addr, CALL_LENGTHS[k]);
    if (!x || x->is_plt) continue;
    const uint8_t *code = x->data + (addr - x->addr);
    size_t left = CALL_LENGTHS[k];
    uint64_t pc = addr;
    if (!cs_disasm_iter(c->s.cs, &code, &left, &pc, in) ||
        in->id != X86_INS_CALL || pc != ret)
      continue;
    uint64_t target;
    const char *name;
    target_of(in, &target, &name, e);
    if (target) name = chk_elf_target_name(e, target);
    *out = (chk_call){addr, target, 0, name, (uint8_t)chk_alloc_kind(name, NULL),
                      CHK_NO_VALUE, in->size, 0};
    return 1;
  }
  return 0;
}

void chk_calls_free(chk_calls *c) {
  free(c->alloc);
  free(c->edge);
  memset(c, 0, sizeof *c);
}
