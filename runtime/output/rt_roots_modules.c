/* rt_roots_modules.c - the roots in the loaded modules' data: every
 * writable PT_LOAD segment (.data, .bss, .got and the like) from
 * dl_iterate_phdr, each word that points into the heap attributed to the
 * data symbol that covers it (the module's .symtab, else its .dynsym):
 * one root per global or static variable, and one per word outside any
 * symbol (kind RR_DATA, named module+offset by the reader).
 *
 * The runtime's own data is left out: the shared runtime's whole module,
 * and in a program linked with libmemprof.a the symbols of its files
 * (local symbols after an STT_FILE "rt_*", the rt_ and __memprof names,
 * and the hidden globals within the span those cover in their section).  Segments are listed before the heap is locked (the loader's
 * lock, which a thread inside dlopen holds while it allocates), and read
 * afterwards: a module unloaded in between would be read after its unmap,
 * so a program that dlcloses concurrently with a census is not supported. */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <sys/syscall.h>

#include "rt_roots_priv.h"
#include "rt_symtab.h"
#include "runtime/base/rt_ialloc.h"
#include "runtime/base/rt_libc.h"
#include "runtime/base/rt_sys.h"

#define MAX_MODS 256
#define MAX_SEGS 8
#define NAME_MAX_LEN 512

typedef struct rr_sym {
  uintptr_t addr;
  uint64_t size;
  const char *name;
  uint64_t skip; /* the runtime's own */
} rr_sym;

typedef struct rr_mod {
  char name[NAME_MAX_LEN];
  uintptr_t base;
  uintptr_t lo[MAX_SEGS], hi[MAX_SEGS];
  int nseg;
  int has_runtime; /* libmemprof.a is linked into it */
  const unsigned char *map;
  size_t map_len;
  rr_sym *syms;
  uint64_t nsyms, syms_cap;
} rr_mod;

struct rr_modules {
  rr_mod mod[MAX_MODS];
  int n, seen;
};

/* An object of the runtime's: its module is the runtime's. */
static int own_marker;

static int mod_cb(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  rr_modules *ms = data;
  int first = ms->seen++ == 0;
  if (ms->n == MAX_MODS || (!first && (!info->dlpi_name || !info->dlpi_name[0])))
    return 0;
  rr_mod *m = &ms->mod[ms->n];
  rt_memset(m, 0, sizeof *m);
  m->base = info->dlpi_addr;
  int own = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD)
      continue;
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
    if ((uintptr_t)&own_marker >= lo && (uintptr_t)&own_marker < hi)
      own = 1;
    if ((ph->p_flags & PF_W) && m->nseg < MAX_SEGS) {
      m->lo[m->nseg] = (lo + 7) & ~(uintptr_t)7;
      m->hi[m->nseg++] = hi & ~(uintptr_t)7;
    }
  }
  if (own && !first)
    return 0; /* the shared runtime */
  m->has_runtime = own;
  if (first) {
    long k = rt_syscall(SYS_readlink, "/proc/self/exe", m->name, sizeof m->name - 1);
    m->name[k > 0 ? k : 0] = 0;
  } else {
    size_t k = rt_strnlen(info->dlpi_name, sizeof m->name - 1);
    rt_memcpy(m->name, info->dlpi_name, k);
    m->name[k] = 0;
  }
  if (m->nseg)
    ms->n++;
  return 0;
}

/* ---- symbols ---------------------------------------------------------- */

static int in_segs(const rr_mod *m, uintptr_t a) {
  for (int i = 0; i < m->nseg; i++)
    if (a >= m->lo[i] && a < m->hi[i])
      return 1;
  return 0;
}

static int starts(const char *s, const char *p) {
  while (*p)
    if (*s++ != *p++)
      return 0;
  return 1;
}

static void add_sym(rr_mod *m, const Elf64_Sym *s, const char *name, int skip) {
  if (m->nsyms == m->syms_cap) {
    uint64_t cap = m->syms_cap ? 2 * m->syms_cap : 256;
    rr_sym *n = rt_ialloc(cap * sizeof *n);
    if (!n)
      return;
    if (m->syms) {
      rt_memcpy(n, m->syms, m->nsyms * sizeof *n);
      rt_ifree(m->syms, m->syms_cap * sizeof *n);
    }
    m->syms = n;
    m->syms_cap = cap;
  }
  m->syms[m->nsyms++] = (rr_sym){m->base + s->st_value, s->st_size, name, (uint64_t)skip};
}

/* The section of type `type` and its string table, or 0. */
static int find_table(const rr_mod *m, uint32_t type, const Elf64_Sym **syms, uint64_t *n,
                      const char **strs, uint64_t *strs_len) {
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m->map;
  if (m->map_len < sizeof *eh || rt_memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
      eh->e_ident[EI_CLASS] != ELFCLASS64 ||
      eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > m->map_len)
    return 0;
  const Elf64_Shdr *sh = (const Elf64_Shdr *)(m->map + eh->e_shoff);
  for (int i = 0; i < eh->e_shnum; i++) {
    if (sh[i].sh_type != type || sh[i].sh_link >= eh->e_shnum)
      continue;
    const Elf64_Shdr *st = &sh[sh[i].sh_link];
    if (sh[i].sh_offset + sh[i].sh_size > m->map_len ||
        st->sh_offset + st->sh_size > m->map_len)
      return 0;
    *syms = (const Elf64_Sym *)(m->map + sh[i].sh_offset);
    *n = sh[i].sh_size / sizeof(Elf64_Sym);
    *strs = (const char *)(m->map + st->sh_offset);
    *strs_len = st->sh_size;
    return 1;
  }
  return 0;
}

/* The runtime's own symbols in a module it is linked into: the locals of
 * its files and its rt_ and __memprof names; and, per section, the span
 * they cover, in which its hidden globals (heap_base, ...) lie too. */
#define MAX_SECTIONS 64
typedef struct own_spans {
  uintptr_t lo[MAX_SECTIONS], hi[MAX_SECTIONS];
} own_spans;

static int own_name(const Elf64_Sym *s, const char *name, int rt_file) {
  return (ELF64_ST_BIND(s->st_info) == STB_LOCAL && rt_file) || starts(name, "rt_") ||
         starts(name, "__memprof");
}

static int is_data(const rr_mod *m, const Elf64_Sym *s) {
  return ELF64_ST_TYPE(s->st_info) == STT_OBJECT && s->st_size && s->st_shndx != SHN_UNDEF &&
         in_segs(m, m->base + s->st_value);
}

static int own_hidden(const own_spans *o, const Elf64_Sym *s) {
  uint16_t k = s->st_shndx;
  return k < MAX_SECTIONS && ELF64_ST_VISIBILITY(s->st_other) == STV_HIDDEN &&
         s->st_value >= o->lo[k] && s->st_value < o->hi[k];
}

/* Calls add_sym for each data symbol; with `o`, only to fill the spans. */
static void walk_syms(rr_mod *m, const Elf64_Sym *syms, uint64_t n, const char *strs,
                      uint64_t strs_len, own_spans *o, int fill) {
  int rt_file = 0;
  for (uint64_t i = 0; i < n; i++) {
    const Elf64_Sym *s = &syms[i];
    if (s->st_name >= strs_len ||
        rt_strnlen(strs + s->st_name, strs_len - s->st_name) == strs_len - s->st_name)
      continue; /* a name that runs off its table */
    const char *name = strs + s->st_name;
    if (ELF64_ST_TYPE(s->st_info) == STT_FILE)
      rt_file = starts(name, "rt_");
    if (!is_data(m, s))
      continue;
    int own = m->has_runtime && own_name(s, name, rt_file);
    uint16_t k = s->st_shndx;
    if (fill && own && k < MAX_SECTIONS) {
      if (!o->hi[k] || s->st_value < o->lo[k])
        o->lo[k] = s->st_value;
      if (s->st_value + s->st_size > o->hi[k])
        o->hi[k] = s->st_value + s->st_size;
    }
    if (!fill)
      add_sym(m, s, name, own || (m->has_runtime && own_hidden(o, s)));
  }
}

static void load_syms(rr_mod *m) {
  if (!m->name[0] || !rt_symtab_map_file(m->name, &m->map, &m->map_len))
    return;
  const Elf64_Sym *syms;
  const char *strs;
  uint64_t n, strs_len;
  if (!find_table(m, SHT_SYMTAB, &syms, &n, &strs, &strs_len) &&
      !find_table(m, SHT_DYNSYM, &syms, &n, &strs, &strs_len))
    return;
  own_spans o = {{0}, {0}};
  if (m->has_runtime)
    walk_syms(m, syms, n, strs, strs_len, &o, 1);
  walk_syms(m, syms, n, strs, strs_len, &o, 0);
  rr_sort(m->syms, m->nsyms, sizeof(rr_sym));
}

static const rr_sym *sym_at(const rr_mod *m, uintptr_t a) {
  uint64_t lo = 0, hi = m->nsyms; /* the last addr <= a is in [lo, hi) */
  if (!hi || m->syms[0].addr > a)
    return NULL;
  while (hi - lo > 1) {
    uint64_t mid = (lo + hi) / 2;
    if (m->syms[mid].addr <= a)
      lo = mid;
    else
      hi = mid;
  }
  /* aliases sort together: any of them that covers a */
  for (uint64_t i = lo + 1; i-- > 0 && m->syms[i].addr == m->syms[lo].addr;)
    if (a - m->syms[i].addr < m->syms[i].size)
      return &m->syms[i];
  /* a symbol starting before and covering a (one nested in another) */
  for (uint64_t i = lo, k = 0; i-- > 0 && k < 16; k++)
    if (a - m->syms[i].addr < m->syms[i].size)
      return &m->syms[i];
  return NULL;
}

/* ---- the list and the scan ------------------------------------------------ */

rr_modules *rr_modules_list(void) {
  rr_modules *ms = rt_ialloc(sizeof *ms);
  if (!ms)
    return NULL;
  ms->n = ms->seen = 0;
  dl_iterate_phdr(mod_cb, ms);
  for (int i = 0; i < ms->n; i++)
    load_syms(&ms->mod[i]);
  return ms;
}

/* The dynamic linker's _rtld_global (its list of cached stacks holds the
 * ended threads' control blocks), or NULL in any other module. */
static const rr_sym *rtld_global(const rr_mod *m) {
  static const char name[] = "_rtld_global";
  for (uint64_t i = 0; i < m->nsyms; i++)
    if (rt_strlen(m->syms[i].name) == sizeof name - 1 &&
        !rt_memcmp(m->syms[i].name, name, sizeof name - 1))
      return &m->syms[i];
  return NULL;
}

typedef struct held_blocks {
  const int64_t *blk;
  int n;
  const rr_sym *by; /* the root that holds them */
} held_blocks;

static void open_root(rr_census *c, const rr_mod *m, uint32_t module, const rr_sym *sym,
                      uintptr_t w, held_blocks *h) {
  if (!sym) {
    rr_root_begin(c, RR_DATA, module, w - m->base, 8, 0);
    return;
  }
  rr_root_begin(c, RR_GLOBAL, module, sym->addr - m->base, sym->size,
                rr_str(c, sym->name, rt_strlen(sym->name)));
  if (sym != h->by)
    return;
  for (int i = 0; i < h->n; i++)
    rr_target(c, h->blk[i]);
  h->by = NULL;
}

static void scan_module(rr_census *c, const rr_mod *m, uint32_t module, held_blocks *h) {
  const rr_sym *cur = NULL;
  int open = 0;
  h->by = h->n ? rtld_global(m) : NULL;
  for (int s = 0; s < m->nseg; s++) {
    c->scanned += m->hi[s] - m->lo[s];
    for (const uintptr_t *w = (const uintptr_t *)m->lo[s]; w < (const uintptr_t *)m->hi[s];
         w++) {
      int64_t j = rr_find(c, *w);
      if (j < 0)
        continue;
      const rr_sym *sym = sym_at(m, (uintptr_t)w);
      if (sym && sym->skip)
        continue;
      if (!open || !sym || sym != cur) {
        if (open)
          rr_root_end(c);
        open_root(c, m, module, sym, (uintptr_t)w, h);
        open = 1;
        cur = sym;
      }
      rr_target(c, j);
    }
  }
  if (open)
    rr_root_end(c);
  if (h->by) { /* _rtld_global points to no block itself */
    open_root(c, m, module, h->by, 0, h);
    rr_root_end(c);
  }
}

void rr_modules_scan(rr_census *c, rr_modules *ms, const int64_t *held, int n_held) {
  if (!ms)
    return;
  held_blocks h = {held, n_held, NULL};
  for (int i = 0; i < ms->n; i++) {
    uint64_t name = rr_str(c, ms->mod[i].name, rt_strlen(ms->mod[i].name));
    uint64_t *slot = rr_push(&c->modules, sizeof(uint64_t));
    if (!slot)
      return;
    *slot = name;
    scan_module(c, &ms->mod[i], (uint32_t)c->modules.len, &h);
  }
}

void rr_modules_free(rr_modules *ms) {
  if (!ms)
    return;
  for (int i = 0; i < ms->n; i++) {
    rr_mod *m = &ms->mod[i];
    if (m->syms)
      rt_ifree(m->syms, m->syms_cap * sizeof(rr_sym));
    if (m->map)
      rt_munmap((void *)m->map, m->map_len);
  }
  rt_ifree(ms, sizeof *ms);
}
