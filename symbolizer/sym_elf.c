/* sym_elf.c - ELF files: opening and validating them (ELF64 x86-64 only,
 * as LLVM's RawMemProfReader), the GNU build id, the executable PT_LOADs,
 * and finding a stripped file's separate debug file.
 *
 * Debug file search order (LLVM's llvm-symbolizer, and GDB's):
 *   1. by build id: <debugdir>/.build-id/<xx>/<rest>.debug
 *   2. by .gnu_debuglink (name + CRC32 of the debug file):
 *      <dir of binary>/<name>, <dir of binary>/.debug/<name>,
 *      <debugdir>/<absolute dir of binary>/<name>
 *   (3. a debuginfod server: sym_debuginfod.c, called after these)
 * A candidate must be an ELF64 x86-64 file with a .debug_info section; a
 * build-id candidate must carry the same build id, a debuglink candidate
 * the recorded CRC and must not be the binary itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <elfutils/libdwelf.h>

#include "sym_internal.h"

static int open_fail(const char *path, int e, mp_err *err) {
  if (e == ENOENT)
    return mp_fail(err, "%s: no such file", path);
  return mp_fail(err, "%s: cannot open: %s", path, strerror(e));
}

static int check_header(Elf *elf, const char *path, mp_err *err) {
  if (elf_kind(elf) != ELF_K_ELF)
    return mp_fail(err, "%s: not an ELF file", path);
  GElf_Ehdr eh;
  if (gelf_getehdr(elf, &eh) == NULL)
    return mp_fail(err, "%s: not an ELF file: %s", path, elf_errmsg(-1));
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_X86_64)
    return mp_fail(err,
                    "%s: unsupported target (ELF class %d, data %d, machine "
                    "%d): only little-endian ELF64 x86-64 is supported",
                    path, eh.e_ident[EI_CLASS], eh.e_ident[EI_DATA],
                    eh.e_machine);
  return 0;
}

int sym_elf_open(sym_elf_file *f, const char *path, mp_err *err) {
  f->fd = -1;
  f->elf = NULL;
  f->path = NULL;
  elf_version(EV_CURRENT);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return open_fail(path, errno, err);
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return mp_fail(err, "%s: not an ELF file (not a regular file)", path);
  }
  Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
  if (!elf || check_header(elf, path, err) != 0) {
    if (!elf)
      mp_fail(err, "%s: not an ELF file", path);
    elf_end(elf);
    close(fd);
    return -1;
  }
  f->fd = fd;
  f->elf = elf;
  f->path = mp_xstrndup(path, strlen(path));
  return 0;
}

void sym_elf_close(sym_elf_file *f) {
  if (f->elf)
    elf_end(f->elf);
  if (f->fd >= 0)
    close(f->fd);
  free(f->path);
  f->fd = -1;
  f->elf = NULL;
  f->path = NULL;
}

Elf_Scn *sym_elf_next_named(Elf *elf, size_t shstrndx, Elf_Scn *scn,
                            GElf_Shdr *sh, const char **name) {
  while ((scn = elf_nextscn(elf, scn)) != NULL) {
    if (gelf_getshdr(scn, sh) == NULL)
      continue;
    if ((*name = elf_strptr(elf, shstrndx, sh->sh_name)) != NULL)
      return scn;
  }
  return NULL;
}

int sym_elf_has_section(Elf *elf, const char *name) {
  size_t shstrndx;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0)
    return 0;
  GElf_Shdr sh;
  const char *n;
  for (Elf_Scn *scn = sym_elf_next_named(elf, shstrndx, NULL, &sh, &n); scn;
       scn = sym_elf_next_named(elf, shstrndx, scn, &sh, &n))
    if (strcmp(n, name) == 0)
      return sh.sh_type != SHT_NOBITS && sh.sh_size > 0;
  return 0;
}

int sym_elf_check_compression(Elf *elf, const char *path, mp_err *err) {
  size_t shstrndx;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0)
    return 0;
  GElf_Shdr sh;
  const char *n;
  for (Elf_Scn *scn = sym_elf_next_named(elf, shstrndx, NULL, &sh, &n); scn;
       scn = sym_elf_next_named(elf, shstrndx, scn, &sh, &n)) {
    GElf_Chdr ch;
    if (!(sh.sh_flags & SHF_COMPRESSED) || strncmp(n, ".debug_", 7) != 0 ||
        gelf_getchdr(scn, &ch) == NULL)
      continue;
    /* zlib: libelf; zstd: libdw from 0.189, before that sym_zstd.c */
    if (ch.ch_type != ELFCOMPRESS_ZLIB && ch.ch_type != 2)
      return mp_fail(err,
                      "%s: %s is compressed with an unknown method (%u); "
                      "decompress it (llvm-objcopy "
                      "--decompress-debug-sections) or build with -gz=zlib",
                      path, n, (unsigned)ch.ch_type);
  }
  return 0;
}

size_t sym_elf_build_id(Elf *elf, uint8_t *out, size_t cap) {
  const void *id;
  ssize_t n = dwelf_elf_gnu_build_id(elf, &id);
  if (n <= 0)
    return 0;
  if ((size_t)n > cap)
    n = (ssize_t)cap;
  memcpy(out, id, (size_t)n);
  return (size_t)n;
}

void sym_elf_exec_segments(Elf *elf, msym_module *m) {
  size_t n = 0;
  m->num_exec_segments = 0;
  if (elf_getphdrnum(elf, &n) != 0)
    return;
  for (size_t i = 0; i < n; i++) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, (int)i, &ph) == NULL || ph.p_type != PT_LOAD ||
        !(ph.p_flags & PF_X))
      continue;
    if (m->num_exec_segments++ == 0) {
      m->exec_vaddr = ph.p_vaddr;
      m->exec_memsz = ph.p_memsz;
    }
  }
}

/* ---- separate debug files ---- */

/* The CRC-32 .gnu_debuglink records (zlib's, the same polynomial). */
static uint32_t crc32_file(int fd, int *ok) {
  uLong crc = crc32_z(0, Z_NULL, 0);
  unsigned char buf[1 << 16];
  ssize_t r;
  *ok = 0;
  if (lseek(fd, 0, SEEK_SET) != 0)
    return 0;
  while ((r = read(fd, buf, sizeof buf)) > 0)
    crc = crc32_z(crc, buf, (z_size_t)r);
  *ok = r == 0;
  return (uint32_t)crc;
}

/* Opens path as a debug file; 0 on success, -1 (silently) otherwise. */
static int try_debug(const char *path, sym_elf_file *dbg) {
  mp_err ignored;
  if (access(path, R_OK) != 0 || sym_elf_open(dbg, path, &ignored) != 0)
    return -1;
  if (!sym_elf_has_section(dbg->elf, ".debug_info")) {
    sym_elf_close(dbg);
    return -1;
  }
  return 0;
}

void sym_hex_id(const uint8_t *id, size_t len, char *hex) {
  size_t i = 0;
  for (; i < len && 2 * i + 2 < SYM_HEX_ID; i++)
    snprintf(hex + 2 * i, 3, "%02x", id[i]);
  hex[2 * i] = 0;
}

int sym_elf_open_debug_by_id(const char *path, const uint8_t *id, size_t len,
                             sym_elf_file *dbg) {
  if (try_debug(path, dbg) != 0)
    return -1;
  uint8_t got[32];
  size_t n = sym_elf_build_id(dbg->elf, got, sizeof got);
  if (n == len && memcmp(got, id, len) == 0)
    return 0;
  sym_elf_close(dbg);
  return -1;
}

int sym_elf_find_by_build_id(const uint8_t *id, size_t len, char *const *dirs,
                             size_t ndirs, sym_elf_file *dbg) {
  if (len < 2)
    return -1;
  char hex[SYM_HEX_ID];
  sym_hex_id(id, len, hex);
  for (size_t d = 0; d < ndirs; d++) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/.build-id/%.2s/%s.debug", dirs[d], hex,
             hex + 2);
    if (sym_elf_open_debug_by_id(path, id, len, dbg) == 0)
      return 0;
  }
  return -1;
}

static int same_file(int fd, const char *path) {
  struct stat a, b;
  return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev &&
         a.st_ino == b.st_ino;
}

static int try_debuglink(const sym_elf_file *bin, const char *path,
                         uint32_t crc, sym_elf_file *dbg) {
  if (same_file(bin->fd, path) || try_debug(path, dbg) != 0)
    return -1;
  int ok;
  if (crc32_file(dbg->fd, &ok) == crc && ok)
    return 0;
  sym_elf_close(dbg);
  return -1;
}

/* dir + "/" + rest into path; -1 if it does not fit. */
static int join(char *path, const char *dir, const char *rest) {
  int n = snprintf(path, PATH_MAX, "%s/%s", dir, rest);
  return n < 0 || n >= PATH_MAX ? -1 : 0;
}

static void dir_of(const char *path, char *dir) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    strcpy(dir, ".");
  else if (slash == path)
    strcpy(dir, "/");
  else
    snprintf(dir, PATH_MAX, "%.*s", (int)(slash - path), path);
}

static int by_debuglink(const sym_elf_file *bin, char *const *dirs,
                        size_t ndirs, sym_elf_file *dbg) {
  GElf_Word crc;
  const char *name = dwelf_elf_gnu_debuglink(bin->elf, &crc);
  if (!name || !*name)
    return -1;
  char dir[PATH_MAX], abs[PATH_MAX], path[PATH_MAX], sub[PATH_MAX];
  dir_of(bin->path, dir);
  if (join(path, dir, name) == 0 && try_debuglink(bin, path, crc, dbg) == 0)
    return 0;
  if (join(sub, dir, ".debug") == 0 && join(path, sub, name) == 0 &&
      try_debuglink(bin, path, crc, dbg) == 0)
    return 0;
  if (!realpath(dir, abs))
    return -1;
  for (size_t d = 0; d < ndirs; d++)
    if (join(sub, dirs[d], abs + 1) == 0 && join(path, sub, name) == 0 &&
        try_debuglink(bin, path, crc, dbg) == 0)
      return 0;
  return -1;
}

int sym_elf_find_debug(const sym_elf_file *bin, const uint8_t *id,
                       size_t id_len, char *const *dirs, size_t ndirs,
                       sym_elf_file *dbg) {
  if (sym_elf_find_by_build_id(id, id_len, dirs, ndirs, dbg) == 0)
    return 0;
  return by_debuglink(bin, dirs, ndirs, dbg);
}

/* A section as libdw reads it: decompressed in place when it opened the
 * file, so one still marked compressed is treated as absent. */
sym_section sym_elf_section(Elf *elf, const char *name) {
  size_t shstrndx;
  GElf_Shdr sh;
  const char *n;
  sym_section out = {NULL, 0};
  if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
    return out;
  for (Elf_Scn *scn = NULL;
       (scn = sym_elf_next_named(elf, shstrndx, scn, &sh, &n)) != NULL;) {
    if (strcmp(n, name) != 0 && !(n[0] == '.' && n[1] == 'z' &&
                                  strcmp(n + 2, name + 1) == 0))
      continue;
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!(sh.sh_flags & SHF_COMPRESSED) && sh.sh_type != SHT_NOBITS && data &&
        data->d_buf)
      out = (sym_section){data->d_buf, data->d_size};
    break;
  }
  return out;
}
