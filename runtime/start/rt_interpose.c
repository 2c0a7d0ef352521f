/* rt_interpose.c - whether this copy of the runtime is the process's
 * allocator (rt_init_core asks first thing).
 *
 * A second copy of a memory-profiling runtime - ours preloaded into a
 * program linked with libmemprof.a or with LLVM's runtime, or preloaded
 * into a program with an allocator of its own (Chromium's PartitionAlloc)
 * - is not: the program's allocations and the compiler's __memprof_init go
 * to the first, and a second copy that also initialised would map the
 * shadow again and write an empty profile over the first one's.  Such a
 * copy forwards (rt_forwarding, base/rt_state.h): the functions of its
 * own that the process still calls (those the first allocator does not
 * define: strdup, reallocarray...) get their blocks from it.
 *
 * The dynamic linker binds `malloc` to the first module in load order
 * (the executable, then preloaded objects, then the rest) that defines it,
 * so this copy serves malloc when no module before it defines malloc.
 * Each module's dynamic symbol table is searched through its GNU hash
 * table.  Comparing addresses instead fails: a non-PIE executable that
 * takes malloc's address (python3) makes its own PLT entry the address
 * every module sees, although the call reaches the real malloc. */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <string.h>

#include "rt_start.h"

/* The GNU hash of a symbol name (the ELF gABI extension's). */
static uint32_t gnu_hash(const char *s) {
  uint32_t h = 5381;
  for (; *s; s++)
    h = h * 33 + (uint8_t)*s;
  return h;
}

typedef struct dyn_tables {
  const Elf64_Sym *symtab;
  const char *strtab;
  const uint32_t *gnu_hash;
} dyn_tables;

static int tables_of(const struct dl_phdr_info *info, dyn_tables *t) {
  memset(t, 0, sizeof *t);
  for (int i = 0; i < info->dlpi_phnum; i++) {
    if (info->dlpi_phdr[i].p_type != PT_DYNAMIC)
      continue;
    const Elf64_Dyn *d = (const Elf64_Dyn *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    for (; d->d_tag != DT_NULL; d++) {
      /* The loader has relocated these to addresses (the vDSO's are not). */
      uintptr_t v = d->d_un.d_ptr;
      if (v < info->dlpi_addr)
        v += info->dlpi_addr;
      if (d->d_tag == DT_SYMTAB)
        t->symtab = (const Elf64_Sym *)v;
      else if (d->d_tag == DT_STRTAB)
        t->strtab = (const char *)v;
      else if (d->d_tag == DT_GNU_HASH)
        t->gnu_hash = (const uint32_t *)v;
    }
  }
  return t->symtab && t->strtab && t->gnu_hash;
}

/* Whether the module defines (not only references) function `name`. */
static int defines(const struct dl_phdr_info *info, const char *name) {
  dyn_tables t;
  if (!tables_of(info, &t))
    return 0;
  const uint32_t nbuckets = t.gnu_hash[0], symoffset = t.gnu_hash[1];
  const uint32_t bloom_size = t.gnu_hash[2];
  if (!nbuckets)
    return 0;
  const uint32_t *buckets = t.gnu_hash + 4 + bloom_size * 2; /* 64-bit bloom words */
  const uint32_t *chain = buckets + nbuckets;
  uint32_t h = gnu_hash(name);
  uint32_t i = buckets[h % nbuckets];
  if (i < symoffset)
    return 0;
  for (;; i++) {
    uint32_t ch = chain[i - symoffset];
    const Elf64_Sym *s = &t.symtab[i];
    if ((ch | 1) == (h | 1) && !strcmp(t.strtab + s->st_name, name))
      return s->st_shndx != SHN_UNDEF && ELF64_ST_TYPE(s->st_info) == STT_FUNC;
    if (ch & 1)
      return 0;
  }
}

typedef struct scan {
  uintptr_t self; /* an address in this copy */
  int before_us;  /* a module before ours defines malloc */
  int done;
} scan;

static int in_module(const struct dl_phdr_info *info, uintptr_t a) {
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD && a >= lo && a - lo < ph->p_memsz)
      return 1;
  }
  return 0;
}

static int visit(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  scan *s = arg;
  if (s->done)
    return 1;
  if (in_module(info, s->self)) {
    s->done = 1;
    return 1;
  }
  if (defines(info, "malloc")) {
    s->before_us = 1;
    s->done = 1;
    return 1;
  }
  return 0;
}

int rt_serves_malloc(void) {
  scan s = {(uintptr_t)&rt_serves_malloc, 0, 0};
  dl_iterate_phdr(visit, &s);
  return !s.before_us;
}
