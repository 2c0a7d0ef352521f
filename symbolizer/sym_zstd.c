/* sym_zstd.c - DWARF sections compressed with zstd (-gz=zstd, objcopy
 * --compress-debug-sections=zstd) for a libdw that cannot decompress them
 * (elfutils before 0.189, Debian 12's 0.188 among them).
 *
 * libdw reads DWARF from an Elf handle, and libelf 0.188 only undoes zlib.
 * So we hand libdw an in-memory copy of the file in which each zstd
 * .debug_* section is replaced by its decompressed bytes: the copy keeps
 * every original byte, the decompressed sections are appended after them,
 * and only those sections' headers change (offset, size, no
 * SHF_COMPRESSED).  Addresses, program headers and all other sections stay
 * as they are, so the DWARF reads exactly as libdw 0.189 would read it.
 * Every offset and size comes from an untrusted file: each is checked
 * against the file before use.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdwfl.h>
#include <zstd.h>

#include "sym_internal.h"

#ifndef ELFCOMPRESS_ZSTD
#define ELFCOMPRESS_ZSTD 2
#endif

/* A section may claim at most this many times its compressed size once
 * decompressed: a hostile header (or zstd frame header) can claim any
 * size for a few bytes of payload, and the copy is allocated before
 * decompressing.  DWARF compresses about 3-10 to 1. */
#define MAX_RATIO 1024

/* libdw learned zstd in 0.189. */
static int libdw_reads_zstd(void) {
  int major = 0, minor = 0;
  const char *v = dwfl_version(NULL);
  return v && sscanf(v, "%d.%d", &major, &minor) == 2 &&
         (major > 0 || minor >= 189);
}

static uint64_t align16(uint64_t n) { return (n + 15) & ~(uint64_t)15; }

typedef struct zsec {
  size_t index;         /* section index */
  uint64_t off, size;   /* compressed bytes after the Elf64_Chdr */
  uint64_t plain;       /* ch_size */
} zsec;

/* The zstd .debug_* sections of `elf` (raw file `raw`, `len` bytes) into
 * *out (malloc'd); returns how many, or -1 with a message. */
static long find_zstd(Elf *elf, const char *raw, size_t len, const char *path,
                      zsec **out, mp_err *err) {
  size_t shstrndx;
  *out = NULL;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0)
    return 0;
  long n = 0, cap = 0;
  GElf_Shdr sh;
  const char *name;
  for (Elf_Scn *scn = sym_elf_next_named(elf, shstrndx, NULL, &sh, &name); scn;
       scn = sym_elf_next_named(elf, shstrndx, scn, &sh, &name)) {
    if (!(sh.sh_flags & SHF_COMPRESSED) || sh.sh_type == SHT_NOBITS ||
        strncmp(name, ".debug_", 7) != 0)
      continue;
    Elf64_Chdr ch;
    if (sh.sh_size < sizeof ch || sh.sh_offset > len ||
        sh.sh_size > len - sh.sh_offset) {
      free(*out);
      return mp_fail(err, "%s: %s lies outside the file", path, name);
    }
    memcpy(&ch, raw + sh.sh_offset, sizeof ch);
    if (ch.ch_type != ELFCOMPRESS_ZSTD)
      continue;
    uint64_t packed = sh.sh_size - sizeof ch;
    if (ch.ch_size > packed * MAX_RATIO + 4096) {
      free(*out);
      return mp_fail(err,
                      "%s: %s claims %llu bytes once decompressed, more than "
                      "%d times its %llu compressed bytes",
                      path, name, (unsigned long long)ch.ch_size, MAX_RATIO,
                      (unsigned long long)packed);
    }
    if (n == cap) {
      cap = cap ? 2 * cap : 16;
      *out = mp_xrealloc(*out, (size_t)cap * sizeof **out);
    }
    (*out)[n++] = (zsec){elf_ndxscn(scn), sh.sh_offset + sizeof ch, packed,
                         ch.ch_size};
  }
  return n;
}

/* Section header `index` of the copy, or NULL if the table is not where
 * the ELF header says (checked against the copy's original length). */
static Elf64_Shdr *shdr_at(char *image, size_t len, size_t index) {
  Elf64_Ehdr eh;
  memcpy(&eh, image, sizeof eh);
  if (eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > len ||
      index >= (len - eh.e_shoff) / sizeof(Elf64_Shdr))
    return NULL;
  return (Elf64_Shdr *)(void *)(image + eh.e_shoff + index * sizeof(Elf64_Shdr));
}

int sym_elf_unzstd(Elf *elf, const char *path, Elf **out, void **image,
                   mp_err *err) {
  *out = NULL;
  *image = NULL;
  if (libdw_reads_zstd())
    return 0;
  size_t len;
  const char *raw = elf_rawfile(elf, &len);
  if (!raw || len < sizeof(Elf64_Ehdr))
    return 0;
  zsec *z;
  long n = find_zstd(elf, raw, len, path, &z, err);
  if (n <= 0)
    return (int)n;
  uint64_t total = align16(len);
  for (long i = 0; i < n; i++)
    total += align16(z[i].plain);
  char *copy = total <= SIZE_MAX ? malloc((size_t)total) : NULL;
  if (!copy) {
    free(z);
    return mp_fail(err, "%s: no memory to decompress its zstd debug sections "
                         "(%llu bytes)", path, (unsigned long long)total);
  }
  memcpy(copy, raw, len);
  memset(copy + len, 0, align16(len) - len);
  uint64_t at = align16(len);
  for (long i = 0; i < n; i++) {
    size_t got = ZSTD_decompress(copy + at, (size_t)z[i].plain,
                                 raw + z[i].off, (size_t)z[i].size);
    Elf64_Shdr *sh = shdr_at(copy, len, z[i].index);
    if (ZSTD_isError(got) || got != z[i].plain || !sh) {
      free(z);
      free(copy);
      return mp_fail(err, "%s: a zstd-compressed debug section does not "
                           "decompress: %s", path,
                      ZSTD_isError(got) ? ZSTD_getErrorName(got)
                      : sh              ? "wrong size"
                                        : "bad section header table");
    }
    sh->sh_offset = at;
    sh->sh_size = z[i].plain;
    sh->sh_flags &= ~(uint64_t)SHF_COMPRESSED;
    sh->sh_addralign = 1;
    at += align16(z[i].plain);
  }
  free(z);
  Elf *m = elf_memory(copy, (size_t)total);
  if (!m || elf_kind(m) != ELF_K_ELF) {
    elf_end(m);
    free(copy);
    return mp_fail(err, "%s: cannot reopen it with its debug sections "
                         "decompressed: %s", path, elf_errmsg(-1));
  }
  *out = m;
  *image = copy;
  return 1;
}
