/* rt_symtab.c - function names for the text profile without allocating:
 * dladdr finds the module; its ELF file is mmap'd (once, cached) and the
 * static .symtab searched for the FUNC symbol covering the PC, so local
 * functions such as `main` get names too (dladdr alone sees only dynamic
 * symbols). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "rt_symtab.h"
#include "runtime/base/rt_libc.h"
#include "runtime/base/rt_lock.h"
#include "runtime/base/rt_sys.h"

#define MAX_MODULES 32

typedef struct module {
  uintptr_t base; /* dli_fbase */
  const unsigned char *map;
  size_t len;
  const Elf64_Sym *syms;
  size_t nsyms;
  const char *strs;
  int is_dyn;
} module;

static module mods[MAX_MODULES];
static int nmods;
static rt_mutex mu = RT_MUTEX_INIT;

int rt_symtab_map_file(const char *path, const unsigned char **map, size_t *len) {
  int fd = rt_open(path, O_RDONLY, 0);
  if (fd < 0)
    return 0;
  struct stat st;
  long r = rt_syscall(SYS_fstat, fd, &st, 0);
  void *p = NULL;
  if (r == 0 && st.st_size > (off_t)sizeof(Elf64_Ehdr)) {
    long a = rt_syscall6(SYS_mmap, 0, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (a > 0 || a < -4096)
      p = (void *)a;
  }
  rt_close(fd);
  if (!p)
    return 0;
  *map = p;
  *len = (size_t)st.st_size;
  return 1;
}

static void find_symtab(module *m) {
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m->map;
  if (rt_memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
      eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > m->len)
    return;
  m->is_dyn = eh->e_type == ET_DYN;
  const Elf64_Shdr *sh = (const Elf64_Shdr *)(m->map + eh->e_shoff);
  for (int i = 0; i < eh->e_shnum; i++) {
    if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
      continue;
    const Elf64_Shdr *str = &sh[sh[i].sh_link];
    if (sh[i].sh_offset + sh[i].sh_size > m->len || str->sh_offset + str->sh_size > m->len)
      return;
    m->syms = (const Elf64_Sym *)(m->map + sh[i].sh_offset);
    m->nsyms = sh[i].sh_size / sizeof(Elf64_Sym);
    m->strs = (const char *)(m->map + str->sh_offset);
    return;
  }
}

static module *module_for(const Dl_info *info) {
  for (int i = 0; i < nmods; i++)
    if (mods[i].base == (uintptr_t)info->dli_fbase)
      return &mods[i];
  if (nmods == MAX_MODULES)
    return NULL;
  module *m = &mods[nmods];
  rt_memset(m, 0, sizeof *m);
  m->base = (uintptr_t)info->dli_fbase;
  /* The main executable is named by argv[0]; its real file is this. */
  const char *path = info->dli_fname[0] == '/' ? info->dli_fname : "/proc/self/exe";
  if (rt_symtab_map_file(path, &m->map, &m->len))
    find_symtab(m);
  nmods++;
  return m;
}

const char *rt_symbolize(uintptr_t pc, const char **module_name, uintptr_t *offset) {
  Dl_info info;
  *module_name = NULL;
  if (!dladdr((void *)pc, &info) || !info.dli_fname)
    return NULL;
  *module_name = info.dli_fname;
  *offset = pc - (uintptr_t)info.dli_fbase;
  const char *name = info.dli_sname;
  rt_mutex_lock(&mu);
  module *m = module_for(&info);
  if (m && m->syms) {
    uintptr_t addr = m->is_dyn ? pc - m->base : pc;
    for (size_t i = 0; i < m->nsyms; i++) {
      const Elf64_Sym *s = &m->syms[i];
      if (ELF64_ST_TYPE(s->st_info) == STT_FUNC && s->st_value <= addr &&
          addr < s->st_value + s->st_size) {
        name = m->strs + s->st_name;
        break;
      }
    }
  }
  rt_mutex_unlock(&mu);
  return name;
}

void rt_symtab_fork_prepare(void) { rt_mutex_lock(&mu); }
void rt_symtab_fork_parent(void) { rt_mutex_unlock(&mu); }
void rt_symtab_fork_child(void) { rt_mutex_reset(&mu); }
