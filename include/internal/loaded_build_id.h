/* loaded_build_id.h - the GNU build id of a module as the dynamic loader
 * mapped it (dl_iterate_phdr's view): its PT_NOTE segments searched with
 * mpf_note_build_id.  Header-only and free of libc calls, for the two
 * libraries that name modules from inside the allocator at exit: the
 * runtime's raw-profile segment table (runtime/output/rt_dump.c) and
 * libmemprof-hotcold's site file (hotcold/hc_site_file.c). */
#ifndef MEMPROF_LOADED_BUILD_ID_H
#define MEMPROF_LOADED_BUILD_ID_H

#include <link.h>
#include <stddef.h>
#include <stdint.h>

#include "memprof_format.h"

/* Copies the first build id among the module's notes to out (at most cap
 * bytes) and returns its length; 0 when it has none. */
static inline size_t mpf_loaded_build_id(const struct dl_phdr_info *info, uint8_t *out,
                                         size_t cap) {
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE)
      continue;
    const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
    size_t n = mpf_note_build_id(p, p + ph->p_memsz, out, cap);
    if (n)
      return n;
  }
  return 0;
}

#endif
