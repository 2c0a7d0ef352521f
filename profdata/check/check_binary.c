/* check_binary.c - what `check` reads of the optimized binary with libelf:
 * its function symbols (.symtab, else .dynsym), the GOT slots the dynamic
 * linker fills (.rela.plt and .rela.dyn, with their symbols' names), its
 * executable sections; and which functions allocate (chk_alloc_kind).
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check_priv.h"

/* ---- allocation functions --------------------------------------------- */

/* clang-22's __hot_cold_t forms and the argument that carries the hint
 * (SimplifyLibCalls.cpp, optimizeNew). */
static const struct {
  const char *name;
  int arg;
} HINTED[] = {
    {"_Znwm12__hot_cold_t", 1},
    {"_Znam12__hot_cold_t", 1},
    {"_ZnwmRKSt9nothrow_t12__hot_cold_t", 2},
    {"_ZnamRKSt9nothrow_t12__hot_cold_t", 2},
    {"_ZnwmSt11align_val_t12__hot_cold_t", 2},
    {"_ZnamSt11align_val_t12__hot_cold_t", 2},
    {"_ZnwmSt11align_val_tRKSt9nothrow_t12__hot_cold_t", 3},
    {"_ZnamSt11align_val_tRKSt9nothrow_t12__hot_cold_t", 3},
    {"__size_returning_new_hot_cold", 1},
    {"__size_returning_new_aligned_hot_cold", 2},
};

/* The forms clang rewrites into those. */
static const char *const NEW_FORMS[] = {
    "_Znwm", "_Znam", "_ZnwmRKSt9nothrow_t", "_ZnamRKSt9nothrow_t",
    "_ZnwmSt11align_val_t", "_ZnamSt11align_val_t",
    "_ZnwmSt11align_val_tRKSt9nothrow_t",
    "_ZnamSt11align_val_tRKSt9nothrow_t", "__size_returning_new",
    "__size_returning_new_aligned",
};

static const char *const C_ALLOC[] = {
    "malloc", "calloc", "realloc", "reallocarray", "aligned_alloc",
    "posix_memalign", "memalign", "valloc", "pvalloc", "strdup", "strndup",
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

chk_kind chk_alloc_kind(const char *name, int *arg) {
  if (!name) return CHK_OTHER;
  size_t len = strcspn(name, "@"); /* "malloc@GLIBC_2.2.5" */
  for (size_t i = 0; i < COUNT(HINTED); i++)
    if (strlen(HINTED[i].name) == len && !strncmp(name, HINTED[i].name, len)) {
      if (arg) *arg = HINTED[i].arg;
      return CHK_HINTED;
    }
  for (size_t i = 0; i < COUNT(NEW_FORMS); i++)
    if (strlen(NEW_FORMS[i]) == len && !strncmp(name, NEW_FORMS[i], len))
      return CHK_NEW;
  for (size_t i = 0; i < COUNT(C_ALLOC); i++)
    if (strlen(C_ALLOC[i]) == len && !strncmp(name, C_ALLOC[i], len))
      return CHK_C_ALLOC;
  return CHK_OTHER;
}

/* ---- the file ----------------------------------------------------------- */

struct chk_elf_priv {
  int fd;
  Elf *elf;
};

static int by_sym_addr(const void *a, const void *b) {
  const chk_sym *x = a, *y = b;
  if (x->addr != y->addr) return x->addr < y->addr ? -1 : 1;
  /* an allocation function's name first among aliases */
  int kx = chk_alloc_kind(x->name, NULL) != CHK_OTHER;
  int ky = chk_alloc_kind(y->name, NULL) != CHK_OTHER;
  return ky - kx;
}

static int by_slot_addr(const void *a, const void *b) {
  const chk_slot *x = a, *y = b;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The function symbols of one symbol table section. */
static size_t read_syms(chk_elf *e, Elf_Scn *scn, const GElf_Shdr *sh) {
  Elf_Data *d = elf_getdata(scn, NULL);
  if (!d || !sh->sh_entsize) return 0;
  size_t n = sh->sh_size / sh->sh_entsize, cap = e->n_syms, before = e->n_syms;
  for (size_t i = 0; i < n; i++) {
    GElf_Sym s;
    if (!gelf_getsym(d, (int)i, &s)) continue;
    int type = GELF_ST_TYPE(s.st_info);
    if ((type != STT_FUNC && type != STT_GNU_IFUNC) || !s.st_value ||
        s.st_shndx == SHN_UNDEF)
      continue;
    const char *name = elf_strptr(e->priv->elf, sh->sh_link, s.st_name);
    if (!name || !*name) continue;
    MP_VEC_RESERVE(e->syms, cap, e->n_syms + 1);
    e->syms[e->n_syms++] =
        (chk_sym){name, s.st_value, s.st_size, (int)s.st_shndx};
  }
  return e->n_syms - before;
}

/* GOT slots that name a symbol, from one SHT_RELA section. */
static void read_relocs(chk_elf *e, Elf_Scn *scn, const GElf_Shdr *sh,
                        size_t *cap) {
  Elf_Data *d = elf_getdata(scn, NULL);
  Elf_Scn *symscn = elf_getscn(e->priv->elf, sh->sh_link);
  GElf_Shdr symsh;
  if (!d || !symscn || !gelf_getshdr(symscn, &symsh) || !sh->sh_entsize) return;
  Elf_Data *sd = elf_getdata(symscn, NULL);
  if (!sd) return;
  size_t n = sh->sh_size / sh->sh_entsize;
  for (size_t i = 0; i < n; i++) {
    GElf_Rela r;
    GElf_Sym s;
    if (!gelf_getrela(d, (int)i, &r)) continue;
    size_t si = GELF_R_SYM(r.r_info);
    if (!si || !gelf_getsym(sd, (int)si, &s)) continue;
    const char *name = elf_strptr(e->priv->elf, symsh.sh_link, s.st_name);
    if (!name || !*name) continue;
    MP_VEC_RESERVE(e->got, *cap, e->n_got + 1);
    e->got[e->n_got++] = (chk_slot){r.r_offset, name};
  }
}

static void add_exec(chk_elf *e, Elf_Scn *scn, const GElf_Shdr *sh,
                     const char *name, size_t *cap) {
  Elf_Data *d = elf_getdata(scn, NULL);
  if (!d || !d->d_buf || d->d_size < sh->sh_size) return;
  MP_VEC_RESERVE(e->exec, *cap, e->n_exec + 1);
  chk_section *x = &e->exec[e->n_exec++];
  memset(x, 0, sizeof *x);
  x->addr = sh->sh_addr;
  x->size = sh->sh_size;
  x->data = d->d_buf;
  x->is_plt = !strncmp(name, ".plt", 4);
  snprintf(x->name, sizeof x->name, "%s", name);
}

int chk_elf_open(const char *path, chk_elf *e, mp_err *err) {
  memset(e, 0, sizeof *e);
  elf_version(EV_CURRENT);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return mp_fail(err, "cannot open: %s", strerror(errno));
  Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
  GElf_Ehdr eh;
  if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
      eh.e_machine != EM_X86_64) {
    if (elf) elf_end(elf);
    close(fd);
    return mp_fail(err, "not an x86-64 ELF file");
  }
  e->priv = mp_xmalloc(sizeof *e->priv);
  e->priv->fd = fd;
  e->priv->elf = elf;
  size_t shstr, cap_got = 0, cap_exec = 0;
  if (elf_getshdrstrndx(elf, &shstr) != 0) shstr = 0;
  Elf_Scn *dynsym = NULL, *scn = NULL;
  GElf_Shdr dynsh;
  size_t from_symtab = 0;
  while ((scn = elf_nextscn(elf, scn))) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh)) continue;
    const char *name = elf_strptr(elf, shstr, sh.sh_name);
    if (!name) name = "";
    if (sh.sh_type == SHT_SYMTAB) from_symtab += read_syms(e, scn, &sh);
    if (sh.sh_type == SHT_DYNSYM) dynsym = scn, dynsh = sh;
    if (sh.sh_type == SHT_RELA) read_relocs(e, scn, &sh, &cap_got);
    if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR))
      add_exec(e, scn, &sh, name, &cap_exec);
  }
  if (!from_symtab && dynsym) read_syms(e, dynsym, &dynsh);
  /* a stripped binary may have neither: qsort must not see NULL */
  if (e->n_syms) qsort(e->syms, e->n_syms, sizeof *e->syms, by_sym_addr);
  if (e->n_got) qsort(e->got, e->n_got, sizeof *e->got, by_slot_addr);
  return 0;
}

void chk_elf_close(chk_elf *e) {
  if (e->priv) {
    elf_end(e->priv->elf);
    close(e->priv->fd);
    free(e->priv);
  }
  free(e->syms);
  free(e->got);
  free(e->plt);
  free(e->exec);
  memset(e, 0, sizeof *e);
}

/* ---- lookups ------------------------------------------------------------ */

/* The first symbol whose address is >= addr (n_syms when none). */
static size_t lower_bound(const chk_elf *e, uint64_t addr) {
  size_t lo = 0, hi = e->n_syms;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (e->syms[mid].addr < addr) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const chk_sym *chk_elf_func_at(const chk_elf *e, uint64_t addr) {
  size_t i = lower_bound(e, addr + 1);
  /* the nearest symbols at or below addr; a sized one must cover it */
  while (i > 0) {
    const chk_sym *s = &e->syms[--i];
    if (s->size ? addr < s->addr + s->size : 1) return s;
    if (i > 0 && e->syms[i - 1].addr != s->addr) break;
  }
  return NULL;
}

static const char *find_slot(const chk_slot *v, size_t n, uint64_t addr) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (v[mid].addr < addr) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && v[lo].addr == addr ? v[lo].name : NULL;
}

const char *chk_elf_got_name(const chk_elf *e, uint64_t addr) {
  return find_slot(e->got, e->n_got, addr);
}

const char *chk_elf_target_name(const chk_elf *e, uint64_t addr) {
  const char *plt = find_slot(e->plt, e->n_plt, addr);
  if (plt) return plt;
  size_t i = lower_bound(e, addr);
  return i < e->n_syms && e->syms[i].addr == addr ? e->syms[i].name : NULL;
}
