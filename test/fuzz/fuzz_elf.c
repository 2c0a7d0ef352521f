/* fuzz_elf.c - libFuzzer target for the symbolizer on damaged ELF files:
 * the bytes become a file (memfd) given to msym_add_binary, then addresses
 * across its executable segment are symbolized.  Users pass any file as
 * --profiled-binary; neither libelf/libdw nor our DWARF walk may crash.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "symbolizer/symbolizer.h"

static void symbolize_some(msym_ctx *c, const msym_module *m) {
  uint64_t span = m->exec_memsz ? m->exec_memsz : 64;
  uint64_t probes[] = {0, 1, 2, 5, 8, 16, 33, span / 3, span / 2, span - 1, span,
                       span + 7};
  for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
    const msym_frame *fr;
    size_t n;
    mp_err e;
    if (msym_symbolize(c, m, m->exec_vaddr + probes[i], &fr, &n, &e) != 0)
      continue;
    for (size_t k = 0; k < n; k++) /* touch everything returned */
      if (strlen(fr[k].name) + (fr[k].file ? strlen(fr[k].file) : 0) == (size_t)-1)
        __builtin_trap();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int fd = memfd_create("fuzz-elf", 0);
  if (fd < 0) return 0;
  if (write(fd, data, size) != (ssize_t)size) {
    close(fd);
    return 0;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  msym_ctx *c = msym_new();
  mp_err e;
  if (msym_add_binary(c, path, &e) == 0) {
    for (size_t i = 0; i < msym_num_modules(c); i++)
      symbolize_some(c, msym_module_at(c, i));
  } else if (!e.msg[0]) {
    __builtin_trap(); /* a refusal must say why */
  }
  msym_free(c);
  close(fd);
  return 0;
}
