/* sym_symtab.c - naming an address of a module without debug information
 * from its ELF symbol table, as heaptrack, perf and DHAT do: the function
 * symbol covering the address (.symtab, else .dynsym), else
 * "<module basename>+0x<address>".
 *
 * Only used when the context's symbol-table fallback is on
 * (msym_set_symtab_fallback) and the module has no DWARF, so that results
 * for modules with debug information never change.  The frames carry no
 * file and line 0 (docs/symbolization.md, "Modules without debug
 * information").
 *
 * Function symbols are STT_FUNC and STT_GNU_IFUNC with a section and an
 * address.  Symbols at one address are aliases: the global one wins over a
 * weak one over a local one, then the shorter name, then the smaller in
 * strcmp order, so the choice does not depend on the symbol order.  A
 * symbol of size 0 (hand-written assembly) covers up to the next symbol.
 * Names point into libelf's view of the file (open until the module is
 * freed); the "module+0x..." names are allocated here.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym_internal.h"

typedef struct sym_func {
  uint64_t lo, hi; /* [lo, hi); hi == lo: size 0, up to the next symbol */
  const char *name;
  int rank; /* binding: 0 global, 1 weak, 2 local */
} sym_func;

static int bind_rank(unsigned char info) {
  switch (GELF_ST_BIND(info)) {
  case STB_GLOBAL: return 0;
  case STB_WEAK: return 1;
  default: return 2;
  }
}

static int cmp_func(const void *a, const void *b) {
  const sym_func *x = a, *y = b;
  if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
  if (x->rank != y->rank) return x->rank - y->rank;
  size_t lx = strlen(x->name), ly = strlen(y->name);
  if (lx != ly) return lx < ly ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* The function symbols of one symbol table section. */
static void read_table(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
                       sym_symtab *t) {
  Elf_Data *d = elf_getdata(scn, NULL);
  if (!d || !sh->sh_entsize) return;
  size_t n = sh->sh_size / sh->sh_entsize;
  for (size_t i = 0; i < n; i++) {
    GElf_Sym s;
    if (!gelf_getsym(d, (int)i, &s)) continue;
    int type = GELF_ST_TYPE(s.st_info);
    if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
        s.st_shndx == SHN_UNDEF || s.st_value == 0)
      continue;
    const char *name = elf_strptr(elf, sh->sh_link, s.st_name);
    if (!name || !*name) continue;
    MP_VEC_RESERVE(t->funcs, t->cap, t->n + 1);
    t->funcs[t->n++] = (sym_func){s.st_value, s.st_value + s.st_size, name,
                                  bind_rank(s.st_info)};
  }
}

/* Sorted, one symbol per address (the preferred alias). */
static void build(Elf *elf, sym_symtab *t) {
  t->ready = 1;
  if (!elf) return; /* a placeholder module: no file */
  size_t shstrndx;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return;
  Elf_Scn *dyn = NULL, *full = NULL;
  GElf_Shdr dyn_sh, full_sh, sh;
  for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
    if (!gelf_getshdr(scn, &sh)) continue;
    if (sh.sh_type == SHT_SYMTAB && !full) full = scn, full_sh = sh;
    if (sh.sh_type == SHT_DYNSYM && !dyn) dyn = scn, dyn_sh = sh;
  }
  if (full) read_table(elf, full, &full_sh, t);
  if (!t->n && dyn) read_table(elf, dyn, &dyn_sh, t);
  if (!t->n) return;
  qsort(t->funcs, t->n, sizeof *t->funcs, cmp_func);
  size_t k = 0;
  for (size_t i = 0; i < t->n; i++) {
    if (k && t->funcs[k - 1].lo == t->funcs[i].lo) {
      if (t->funcs[i].hi > t->funcs[k - 1].hi) t->funcs[k - 1].hi = t->funcs[i].hi;
      continue;
    }
    t->funcs[k++] = t->funcs[i];
  }
  t->n = k;
}

/* The symbol covering addr, or NULL. */
static const sym_func *covering(const sym_symtab *t, uint64_t addr) {
  size_t lo = 0, hi = t->n; /* first symbol above addr */
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (t->funcs[mid].lo <= addr) lo = mid + 1;
    else hi = mid;
  }
  if (!lo) return NULL;
  const sym_func *f = &t->funcs[lo - 1];
  if (addr < f->hi) return f;
  return f->hi == f->lo ? f : NULL;
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* "module+0xADDR", kept until sym_symtab_free. */
static const char *offset_name(sym_symtab *t, const char *path, uint64_t addr) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s+0x%" PRIx64, base_name(path), addr);
  MP_VEC_RESERVE(t->owned, t->cap_owned, t->n_owned + 1);
  char *s = mp_xstrndup(buf, strlen(buf));
  t->owned[t->n_owned++] = s;
  return s;
}

void sym_symtab_frame(sym_symtab *t, Elf *elf, const char *path,
                      uint64_t addr, msym_frame *out) {
  if (!t->ready) build(elf, t);
  const sym_func *f = covering(t, addr);
  *out = (msym_frame){f ? f->name : offset_name(t, path, addr), NULL, 0, 0, 0, 0};
}

void sym_symtab_free(sym_symtab *t) {
  for (size_t i = 0; i < t->n_owned; i++) free(t->owned[i]);
  free(t->owned);
  free(t->funcs);
  memset(t, 0, sizeof *t);
}
