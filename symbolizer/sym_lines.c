/* sym_lines.c - the line-table row of an address without the whole table.
 *
 * libdw's dwarf_getsrclines decodes a unit's entire line program into one
 * allocated row each, sorts them all and copies them, and dwarf_getsrcfiles
 * (elfutils before 0.191) does the same to get at the file names.  A profile
 * needs the rows of a few addresses; a unit such as SQLite's amalgamation
 * has hundreds of thousands.  So for the common case (DWARF 5 tables as
 * clang and GCC write them) this file decodes the program once without
 * storing rows, keeping where each sequence starts and the addresses it
 * covers, and an address then decodes only its own sequence.
 *
 * The answer must be the row libdw's table gives (sym_dwarf.c's line_row:
 * the last row at or below the address in libdw's sorted order, none if
 * that is an end_sequence).  That is the last row at or below the address
 * in the sequence containing it as long as each sequence's addresses never
 * decrease and sequences do not overlap; a table where that does not hold,
 * which libdw would reject, or that uses anything this file does not read
 * (other versions, forms or address sizes) is left to libdw: sym_lines_read
 * returns -1 and the caller falls back.  The file names are built as libdw
 * builds them (a relative name is joined to its directory entry).
 */
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "sym_internal.h"

/* ---- the header ---- */

/* A string of an entry format: in place, or in .debug_line_str/.debug_str. */
static const char *entry_string(mp_cursor *c, unsigned form, unsigned offset_size,
                                const sym_section *line_str,
                                const sym_section *str) {
  if (form == DW_FORM_string)
    return mp_cstr(c);
  const sym_section *sec = form == DW_FORM_line_strp ? line_str
                           : form == DW_FORM_strp    ? str
                                                     : NULL;
  uint64_t off = mp_fixed(c, offset_size);
  if (!sec || !sec->data || off >= sec->size ||
      !memchr(sec->data + off, 0, sec->size - off)) {
    c->bad = 1;
    return NULL;
  }
  return (const char *)sec->data + off;
}

/* Skips a value of an entry format's form; 0 for a form not read here. */
static int skip_form(mp_cursor *c, unsigned form, unsigned offset_size) {
  switch (form) {
  case DW_FORM_data1: mp_skip(c, 1); return 1;
  case DW_FORM_data2: mp_skip(c, 2); return 1;
  case DW_FORM_data4: mp_skip(c, 4); return 1;
  case DW_FORM_data8: mp_skip(c, 8); return 1;
  case DW_FORM_data16: mp_skip(c, 16); return 1;
  case DW_FORM_udata: mp_uleb(c); return 1;
  case DW_FORM_block: mp_skip(c, mp_uleb(c)); return 1;
  case DW_FORM_line_strp:
  case DW_FORM_strp: mp_skip(c, offset_size); return 1;
  case DW_FORM_string: mp_cstr(c); return 1;
  default: return 0;
  }
}

static int udata_form(mp_cursor *c, unsigned form, uint64_t *v) {
  switch (form) {
  case DW_FORM_data1: *v = mp_fixed(c, 1); return 1;
  case DW_FORM_data2: *v = mp_fixed(c, 2); return 1;
  case DW_FORM_data4: *v = mp_fixed(c, 4); return 1;
  case DW_FORM_data8: *v = mp_fixed(c, 8); return 1;
  case DW_FORM_udata: *v = mp_uleb(c); return 1;
  default: return 0;
  }
}

enum { MAX_FORMS = 16 };

typedef struct entry_format {
  unsigned n;
  unsigned content[MAX_FORMS], form[MAX_FORMS];
} entry_format;

static int read_format(mp_cursor *c, entry_format *f) {
  f->n = (unsigned)mp_fixed(c, 1);
  if (f->n > MAX_FORMS)
    return -1;
  for (unsigned i = 0; i < f->n; i++) {
    f->content[i] = (unsigned)mp_uleb(c);
    f->form[i] = (unsigned)mp_uleb(c);
  }
  return c->bad ? -1 : 0;
}

/* One directory or file entry: its path and (files) directory index. */
static int read_entry(mp_cursor *c, const entry_format *f, unsigned offset_size,
                      const sym_section *line_str, const sym_section *str,
                      const char **path, uint64_t *dir) {
  *path = NULL;
  *dir = UINT64_MAX;
  for (unsigned i = 0; i < f->n; i++) {
    if (f->content[i] == DW_LNCT_path) {
      if (f->form[i] != DW_FORM_string && f->form[i] != DW_FORM_line_strp &&
          f->form[i] != DW_FORM_strp)
        return -1;
      *path = entry_string(c, f->form[i], offset_size, line_str, str);
    } else if (f->content[i] == DW_LNCT_directory_index) {
      if (!udata_form(c, f->form[i], dir))
        return -1;
    } else if (!skip_form(c, f->form[i], offset_size)) {
      return -1;
    }
  }
  return c->bad || !*path ? -1 : 0;
}

char *sym_join_path(const char *dir, const char *name) {
  size_t ld = strlen(dir), ln = strlen(name);
  char *s = mp_xmalloc(ld + ln + 2);
  memcpy(s, dir, ld);
  s[ld] = '/';
  memcpy(s + ld + 1, name, ln + 1);
  return s;
}

/* Directories and files of a version 5 header, named as libdw names them. */
static int read_names(mp_cursor *c, sym_lines *t, unsigned offset_size,
                      const sym_section *line_str, const sym_section *str) {
  entry_format f;
  if (read_format(c, &f) != 0)
    return -1;
  uint64_t ndirs = mp_uleb(c);
  if (c->bad || (f.n == 0 && ndirs) || ndirs > (uint64_t)(c->end - c->p))
    return -1;
  const char **dirs = mp_xcalloc(ndirs + 1, sizeof *dirs);
  int rc = -1;
  for (uint64_t i = 0; i < ndirs; i++) {
    uint64_t unused;
    if (read_entry(c, &f, offset_size, line_str, str, &dirs[i], &unused) != 0)
      goto out;
  }
  if (read_format(c, &f) != 0)
    goto out;
  uint64_t nfiles = mp_uleb(c);
  if (c->bad || (f.n == 0 && nfiles) || nfiles > (uint64_t)(c->end - c->p))
    goto out;
  /* Entry 0 is the primary file; a table without files still has the
   * entry libdw calls "???". */
  t->nnames = nfiles ? nfiles : 1;
  t->names = mp_xcalloc(t->nnames, sizeof *t->names);
  if (!nfiles)
    t->names[0] = mp_xstrndup("???", 3);
  for (uint64_t i = 0; i < nfiles; i++) {
    const char *name;
    uint64_t dir;
    if (read_entry(c, &f, offset_size, line_str, str, &name, &dir) != 0 ||
        dir >= ndirs)
      goto out;
    t->names[i] = name[0] == '/' ? mp_xstrndup(name, strlen(name))
                                 : sym_join_path(dirs[dir], name);
  }
  t->dir0 = ndirs ? dirs[0] : NULL;
  rc = 0;
out:
  free(dirs);
  return rc;
}

/* ---- the program ---- */

enum {
  /* libdw keeps these in bit-fields and rejects a table whose rows do not
   * fit (Dwarf_Line in libdwP.h). */
  MAX_COLUMN = 0xffff,
  MAX_DISCRIMINATOR = 0xffffff,
  MAX_ISA = 0xff,
};

typedef struct state {
  uint64_t addr;
  int64_t line;
  uint64_t file, column, discriminator, isa;
} state;

static void reset(state *s) {
  memset(s, 0, sizeof *s);
  s->file = 1;
  s->line = 1;
}

/* What happened at one opcode. */
enum { OP_NONE, OP_ROW, OP_END, OP_BAD };

/* Column, discriminator and isa are checked where they are set (a value
 * libdw would reject only in a row already sends the table to libdw). */
static int row_fits(const state *s) {
  return s->line >= INT32_MIN && s->line <= INT32_MAX;
}

/* Runs one opcode at c on s (libdw's read_srclines, max_ops_per_instr 1). */
static inline int step(const sym_lines *t, mp_cursor *c, state *s) {
  if (c->p >= c->end) {
    c->bad = 1;
    return OP_BAD;
  }
  uint8_t op = *c->p++;
  if (op >= t->opcode_base) { /* most opcodes: a special one */
    s->line += t->special_line[op];
    s->addr += t->special_addr[op];
    return OP_ROW;
  }
  if (op == 0) {
    uint8_t len = (uint8_t)mp_fixed(c, 1);
    if (c->bad || len == 0 || (size_t)(c->end - c->p) < len)
      return OP_BAD;
    const uint8_t *next = c->p + len;
    uint8_t sub = *c->p++;
    switch (sub) {
    case DW_LNE_end_sequence: return OP_END;
    case DW_LNE_set_address:
      if (len != 9)
        return OP_BAD;
      s->addr = mp_fixed(c, 8);
      break;
    case DW_LNE_set_discriminator:
      if (t->std_len[DW_LNE_set_discriminator] != 1)
        return OP_BAD;
      s->discriminator = mp_uleb(c);
      if (s->discriminator > MAX_DISCRIMINATOR)
        return OP_BAD; /* libdw rejects a row with it; this, even without */
      break;
    default:
      /* DW_LNE_define_file (before version 5) and vendor operations:
       * nothing this file's tables use. */
      return OP_BAD;
    }
    return c->bad || c->p != next ? OP_BAD : OP_NONE;
  }
  if (op > DW_LNS_set_isa) { /* a standard opcode newer than libdw's */
    for (unsigned n = t->std_len[op]; n > 0; n--)
      mp_uleb(c);
    return c->bad ? OP_BAD : OP_NONE;
  }
  /* libdw rejects a known opcode whose declared operand count differs. */
  static const uint8_t operands[DW_LNS_set_isa + 1] = {
      [DW_LNS_advance_pc] = 1, [DW_LNS_advance_line] = 1,
      [DW_LNS_set_file] = 1,   [DW_LNS_set_column] = 1,
      [DW_LNS_fixed_advance_pc] = 1, [DW_LNS_set_isa] = 1};
  if (t->std_len[op] != operands[op])
    return OP_BAD;
  uint64_t u;
  int64_t v;
  switch (op) {
  case DW_LNS_copy: return OP_ROW;
  case DW_LNS_advance_pc:
    u = mp_uleb(c);
    if (u > UINT32_MAX)
      return OP_BAD;
    s->addr += (uint32_t)(t->min_inst * (uint32_t)u); /* libdw's unsigned int */
    break;
  case DW_LNS_advance_line:
    v = mp_sleb(c);
    if (v < INT32_MIN || v > INT32_MAX)
      return OP_BAD;
    s->line += v;
    break;
  case DW_LNS_set_file:
    s->file = mp_uleb(c);
    if (s->file > UINT32_MAX)
      return OP_BAD;
    break;
  case DW_LNS_set_column:
    s->column = mp_uleb(c);
    if (s->column > MAX_COLUMN)
      return OP_BAD;
    break;
  case DW_LNS_const_add_pc:
    s->addr += (uint64_t)t->min_inst * ((255u - t->opcode_base) / t->line_range);
    break;
  case DW_LNS_fixed_advance_pc: s->addr += mp_fixed(c, 2); break;
  case DW_LNS_set_isa:
    s->isa = mp_uleb(c);
    if (s->isa > MAX_ISA)
      return OP_BAD;
    break;
  default: /* negate_stmt, basic_block, prologue_end, epilogue_begin */
    break;
  }
  return c->bad ? OP_BAD : OP_NONE;
}

static sym_line_row row_of(const state *s) {
  return (sym_line_row){s->addr, (uint32_t)s->file, (int)s->line,
                        (uint32_t)s->column, (uint32_t)s->discriminator};
}

static void after_row(state *s) { s->discriminator = 0; }

/* Rows between marks: a lookup decodes at most this many. */
enum { MARK_ROWS = 32 };

static void add_mark(sym_lines *t, size_t *cap, const state *s,
                     const uint8_t *at) {
  if (t->nmarks == *cap) {
    *cap = *cap ? 2 * *cap : 256;
    t->marks = mp_xrealloc(t->marks, *cap * sizeof *t->marks);
  }
  t->marks[t->nmarks++] = (sym_line_mark){row_of(s), at};
}

static void add_seq(sym_lines *t, size_t *cap, sym_line_seq q) {
  if (t->nseqs == *cap) {
    *cap = *cap ? 2 * *cap : 16;
    t->seqs = mp_xrealloc(t->seqs, *cap * sizeof *t->seqs);
  }
  t->seqs[t->nseqs++] = q;
}

static int seq_cmp(const void *a, const void *b) {
  const sym_line_seq *x = a, *y = b;
  if (x->lo != y->lo)
    return x->lo < y->lo ? -1 : 1;
  return (x->hi > y->hi) - (x->hi < y->hi);
}

/* One pass over the program: where each sequence starts, what it covers
 * and a mark every MARK_ROWS rows, checking what libdw checks and what
 * sym_lines_find assumes. */
static int index_sequences(sym_lines *t) {
  mp_cursor c = {t->prog, t->end, 0};
  size_t cap = 0, mark_cap = 0, rows = 0;
  state s;
  reset(&s);
  sym_line_seq q = {0, 0, c.p, 0, 0};
  int any = 0;
  uint64_t last = 0;
  while (c.p < c.end) {
    int r = step(t, &c, &s);
    if (r == OP_BAD)
      return -1;
    if (r == OP_NONE)
      continue;
    if (!row_fits(&s) || (any && s.addr < last))
      return -1; /* a row libdw rejects, or addresses going back */
    if (r == OP_END) {
      /* A row at the end address sorts after the end in libdw's table
       * and answers for that address, which belongs to no sequence here. */
      if (any && last == s.addr)
        return -1;
      q.lo = any ? q.lo : s.addr;
      q.hi = s.addr;
      q.nmarks = t->nmarks - q.mark;
      add_seq(t, &cap, q);
      reset(&s);
      q = (sym_line_seq){0, 0, c.p, t->nmarks, 0};
      any = 0;
      continue;
    }
    if (!any)
      q.lo = s.addr;
    any = 1;
    last = s.addr;
    if (++rows % MARK_ROWS == 0)
      add_mark(t, &mark_cap, &s, c.p);
    after_row(&s);
  }
  if (any)
    return -1; /* a last sequence without its end: libdw makes one up */
  if (t->nseqs > 1) /* none: seqs may be NULL, which qsort may not get */
    qsort(t->seqs, t->nseqs, sizeof *t->seqs, seq_cmp);
  for (size_t i = 1; i < t->nseqs; i++)
    if (t->seqs[i].lo < t->seqs[i - 1].hi)
      return -1;
  return 0;
}

/* ---- the unit's table ---- */

static int read_header(sym_lines *t, const sym_section *line,
                       const sym_section *line_str, const sym_section *str,
                       uint64_t off) {
  if (!line->data || off >= line->size)
    return -1;
  mp_cursor c = {line->data + off, line->data + line->size, 0};
  unsigned offset_size = 4;
  uint64_t len = mp_fixed(&c, 4);
  if (len == 0xffffffffu) {
    offset_size = 8;
    len = mp_fixed(&c, 8);
  }
  if (c.bad || len > (uint64_t)(c.end - c.p))
    return -1;
  c.end = c.p + len;
  unsigned version = (unsigned)mp_fixed(&c, 2);
  unsigned addr_size = (unsigned)mp_fixed(&c, 1);
  unsigned seg_size = (unsigned)mp_fixed(&c, 1);
  if (version != 5 || addr_size != 8 || seg_size != 0)
    return -1;
  uint64_t hlen = mp_fixed(&c, offset_size);
  if (c.bad || hlen > (uint64_t)(c.end - c.p))
    return -1;
  const uint8_t *prog = c.p + hlen;
  t->min_inst = (uint8_t)mp_fixed(&c, 1);
  uint8_t max_ops = (uint8_t)mp_fixed(&c, 1);
  mp_fixed(&c, 1); /* default_is_stmt: frames do not use it */
  t->line_base = (int8_t)mp_fixed(&c, 1);
  t->line_range = (uint8_t)mp_fixed(&c, 1);
  t->opcode_base = (uint8_t)mp_fixed(&c, 1);
  if (c.bad || max_ops != 1 || t->line_range == 0 || t->opcode_base == 0)
    return -1;
  for (unsigned op = t->opcode_base; op < 256; op++) {
    unsigned adj = op - t->opcode_base;
    t->special_line[op] = (int16_t)(t->line_base + (int)(adj % t->line_range));
    t->special_addr[op] = (uint16_t)(t->min_inst * (adj / t->line_range));
  }
  /* std_len[op] for 1 <= op < opcode_base; ops past the array read 0 */
  memset(t->std_len, 0, sizeof t->std_len);
  if ((size_t)(c.end - c.p) < (size_t)t->opcode_base - 1)
    return -1;
  memcpy(t->std_len + 1, c.p, t->opcode_base - 1u);
  c.p += t->opcode_base - 1u;
  if (read_names(&c, t, offset_size, line_str, str) != 0 || c.p != prog)
    return -1;
  t->prog = prog;
  t->end = c.end;
  return 0;
}

int sym_lines_read(sym_lines *t, const sym_section *line,
                   const sym_section *line_str, const sym_section *str,
                   uint64_t offset) {
  memset(t, 0, sizeof *t);
  if (read_header(t, line, line_str, str, offset) != 0 ||
      index_sequences(t) != 0) {
    sym_lines_free(t);
    return -1;
  }
  return 0;
}

/* The last element of [0, n) whose address is at most addr, n if none. */
#define LAST_AT_OR_BELOW(arr, n, field, addr, out)                            \
  do {                                                                        \
    size_t lo_ = 0, hi_ = (n);                                                \
    while (lo_ < hi_) {                                                       \
      size_t mid_ = lo_ + (hi_ - lo_) / 2;                                    \
      if ((arr)[mid_].field <= (addr))                                        \
        lo_ = mid_ + 1;                                                       \
      else                                                                    \
        hi_ = mid_;                                                           \
    }                                                                         \
    (out) = lo_ ? lo_ - 1 : (n);                                              \
  } while (0)

int sym_lines_find(const sym_lines *t, uint64_t addr, sym_line_row *row) {
  size_t i;
  LAST_AT_OR_BELOW(t->seqs, t->nseqs, lo, addr, i);
  if (i == t->nseqs || addr >= t->seqs[i].hi)
    return 0;
  const sym_line_seq *q = &t->seqs[i];
  const sym_line_mark *marks = t->marks + q->mark;
  size_t m;
  LAST_AT_OR_BELOW(marks, q->nmarks, row.addr, addr, m);
  mp_cursor c = {q->start, t->end, 0};
  state s;
  reset(&s);
  int found = 0;
  if (m < q->nmarks) { /* resume after the mark's row */
    const sym_line_mark *k = &marks[m];
    *row = k->row;
    found = 1;
    /* isa only decides whether a table is read here: not needed again */
    s = (state){k->row.addr, k->row.line, k->row.file, k->row.column, 0, 0};
    c.p = k->at;
  }
  for (;;) {
    int r = step(t, &c, &s); /* the sequence was checked: never OP_BAD */
    if (r == OP_END || r == OP_BAD || (r == OP_ROW && s.addr > addr))
      break;
    if (r == OP_ROW) {
      *row = row_of(&s);
      found = 1;
      after_row(&s);
    }
  }
  return found;
}

void sym_lines_free(sym_lines *t) {
  for (size_t i = 0; i < t->nnames; i++)
    free(t->names[i]);
  free(t->names);
  free(t->seqs);
  free(t->marks);
  memset(t, 0, sizeof *t);
}
