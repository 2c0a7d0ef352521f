/* unwind_cfi_driver.c - runs the runtime's CFI reader (runtime/record/rt_cfi.c,
 * compiled in) on a loaded library, for test_rt_unwind.py to compare with
 * readelf's interpretation of the same tables.
 *
 * argv[1] is a library: it is dlopen'ed (libraries already loaded are
 * found), its PT_GNU_EH_FRAME and the loaded segment holding it are
 * taken from dl_iterate_phdr, as the runtime takes them from the ELF
 * headers.  Each line of stdin is a link-time address A (hex); the reply
 * line is the rule for a return address just after A (so the rule of the
 * row holding A): "kind cfa_off rbp rbp_off ra_off" with rt_unwind.h's
 * enumerations. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_unwind.h"

static rt_cfi_module module;
static uintptr_t bias;

static int find_module(struct dl_phdr_info *info, size_t size, void *want) {
  (void)size;
  if (info->dlpi_addr != (uintptr_t)want)
    return 0;
  const ElfW(Phdr) *hdr = NULL;
  for (int i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
      hdr = &info->dlpi_phdr[i];
  if (!hdr)
    return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type == PT_LOAD && ph->p_vaddr <= hdr->p_vaddr &&
        hdr->p_vaddr < ph->p_vaddr + ph->p_filesz) {
      bias = info->dlpi_addr;
      module.hdr = (const uint8_t *)(bias + hdr->p_vaddr);
      module.lo = (const uint8_t *)(bias + ph->p_vaddr);
      module.hi = module.lo + ph->p_filesz;
      return 1;
    }
  }
  return 0;
}

int main(int argc, char **argv) {
  void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
  struct link_map *lm;
  if (!h || dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0) {
    fprintf(stderr, "cannot load %s\n", argc > 1 ? argv[1] : "(none)");
    return 2;
  }
  if (!dl_iterate_phdr(find_module, (void *)lm->l_addr)) {
    fprintf(stderr, "%s: no unwind tables\n", argv[1]);
    return 2;
  }
  char line[64];
  while (fgets(line, sizeof line, stdin)) {
    uintptr_t a = strtoull(line, NULL, 16);
    rt_cfa_rule r = rt_cfi_rule(&module, bias + a + 1);
    printf("%d %d %d %d %d\n", r.kind, r.cfa_off, r.rbp, r.rbp_off, r.ra_off);
  }
  return 0;
}
