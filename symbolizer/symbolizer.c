/* symbolizer.c - the public API: the context, its debug directories and
 * modules, and msym_symbolize with its per-module memo.  The work is done
 * in sym_elf.c (files), sym_index.c (range indexes), sym_dwarf.c (frames),
 * sym_symtab.c (symbol tables, for modules without DWARF) and sym_cache.c
 * (memo).
 */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>

#include "sym_internal.h"

static const char *const DEFAULT_DEBUG_DIR = "/usr/lib/debug";

struct msym_ctx {
  sym_module **mods;
  size_t nmods, capmods;
  char **dirs; /* given debug dirs; none -> DEFAULT_DEBUG_DIR */
  size_t ndirs;
  msym_frame *scratch; /* frames of the address being symbolized */
  size_t scratch_cap;
  int symtab_fallback; /* msym_set_symtab_fallback */
  int libdw_only;      /* msym_set_raw_dwarf(c, 0) */
};

/* ---- context ---- */

msym_ctx *msym_new(void) { return mp_xcalloc(1, sizeof(msym_ctx)); }

static void module_free(sym_module *m) {
  sym_cache_free(&m->cache);
  sym_symtab_free(&m->symtab);
  sym_dwarf_free(&m->dwarf);
  if (m->alt_dw) /* after the DWARF that uses it */
    dwarf_end(m->alt_dw);
  sym_elf_close(&m->alt);
  if (m->unzstd)
    elf_end(m->unzstd);
  free(m->unzstd_image);
  sym_elf_close(&m->dbg);
  sym_elf_close(&m->bin);
  free(m);
}

void msym_free(msym_ctx *c) {
  if (!c)
    return;
  for (size_t i = 0; i < c->nmods; i++)
    module_free(c->mods[i]);
  for (size_t i = 0; i < c->ndirs; i++)
    free(c->dirs[i]);
  free(c->mods);
  free(c->dirs);
  free(c->scratch);
  free(c);
}

void msym_set_symtab_fallback(msym_ctx *c, int on) { c->symtab_fallback = on; }

void msym_set_raw_dwarf(msym_ctx *c, int on) { c->libdw_only = !on; }

int msym_add_debug_dir(msym_ctx *c, const char *dir, mp_err *err) {
  if (!dir || !*dir)
    return mp_fail(err, "empty debug directory name");
  c->dirs = mp_xrealloc(c->dirs, (c->ndirs + 1) * sizeof *c->dirs);
  c->dirs[c->ndirs++] = mp_xstrndup(dir, strlen(dir));
  return 0;
}

/* dwz: DWARF whose strings and DIEs are partly in a supplementary file
 * named by .gnu_debugaltlink (a path and a build id).  libdw finds it at
 * that path or by build id under /usr/lib/debug; the debug directories we
 * were given are tried by build id too.  Without it function names and
 * inline chains cannot be read, so that is an error. */
static int attach_alt(msym_ctx *c, sym_module *m, const char *path,
                      mp_err *err) {
  const char *name;
  const void *id;
  ssize_t len = dwelf_dwarf_gnu_debugaltlink(m->dwarf.dw, &name, &id);
  if (len <= 0 || dwarf_getalt(m->dwarf.dw) != NULL)
    return 0;
  if (len <= (ssize_t)sizeof m->pub.build_id &&
      sym_elf_find_by_build_id(id, (size_t)len, c->dirs, c->ndirs, &m->alt) == 0) {
    m->alt_dw = dwarf_begin_elf(m->alt.elf, DWARF_C_READ, NULL);
    if (m->alt_dw) {
      dwarf_setalt(m->dwarf.dw, m->alt_dw);
      return 0;
    }
    sym_elf_close(&m->alt);
  }
  char hex[SYM_HEX_ID];
  sym_hex_id(id, (size_t)len, hex);
  return mp_fail(err,
                  "%s: its DWARF was compressed with dwz and refers to the "
                  "supplementary file %s (build id %s), which was not found "
                  "there%s",
                  path, name, hex,
                  c->ndirs ? " nor by build id under the debug directories"
                           : " nor by build id under /usr/lib/debug");
}

/* Opens the DWARF of the module: its own, else a separate debug file.
 * DWARF that cannot be read (an unknown compression, a zstd section that
 * does not decompress, a missing dwz file) is an error rather than a
 * module whose every address silently fails. */
static int attach_debug_info(msym_ctx *c, sym_module *m, mp_err *err) {
  const sym_elf_file *src = NULL;
  if (sym_elf_has_section(m->bin.elf, ".debug_info")) {
    src = &m->bin;
  } else {
    char *const deflt[] = {(char *)DEFAULT_DEBUG_DIR};
    char *const *dirs = c->ndirs ? c->dirs : deflt;
    size_t ndirs = c->ndirs ? c->ndirs : 1;
    if (sym_elf_find_debug(&m->bin, m->pub.build_id, m->pub.build_id_len, dirs,
                           ndirs, &m->dbg) == 0 ||
        sym_debuginfod_find(m->pub.build_id, m->pub.build_id_len, &m->dbg) == 0)
      src = &m->dbg;
  }
  if (!src)
    return 0;
  if (sym_elf_check_compression(src->elf, src->path, err) != 0 ||
      sym_elf_unzstd(src->elf, src->path, &m->unzstd, &m->unzstd_image, err) < 0)
    return -1;
  m->dwarf.dw = dwarf_begin_elf(m->unzstd ? m->unzstd : src->elf, DWARF_C_READ, NULL);
  m->dwarf.libdw_only = c->libdw_only;
  m->pub.has_debug_info = m->dwarf.dw != NULL;
  return m->dwarf.dw ? attach_alt(c, m, src->path, err) : 0;
}

static void push_module(msym_ctx *c, sym_module *m) {
  if (c->nmods == c->capmods) {
    c->capmods = c->capmods ? 2 * c->capmods : 4;
    c->mods = mp_xrealloc(c->mods, c->capmods * sizeof *c->mods);
  }
  c->mods[c->nmods++] = m;
}

/* Adds the ELF file at path; with want_len > 0 only when its build id is
 * `want` (1 when it is not). */
static int add_module(msym_ctx *c, const char *path, const uint8_t *want,
                      size_t want_len, mp_err *err) {
  sym_module *m = mp_xcalloc(1, sizeof *m);
  m->dbg.fd = -1;
  m->alt.fd = -1;
  if (sym_elf_open(&m->bin, path, err) != 0) {
    free(m);
    return -1;
  }
  m->pub.path = m->bin.path;
  m->pub.build_id_len =
      sym_elf_build_id(m->bin.elf, m->pub.build_id, sizeof m->pub.build_id);
  if (want_len && (m->pub.build_id_len != want_len ||
                   memcmp(m->pub.build_id, want, want_len) != 0)) {
    module_free(m);
    return 1;
  }
  sym_elf_exec_segments(m->bin.elf, &m->pub);
  if (attach_debug_info(c, m, err) != 0) {
    module_free(m);
    return -1;
  }
  push_module(c, m);
  return 0;
}

void msym_add_placeholder(msym_ctx *c, const char *path, const uint8_t *id,
                          size_t len, uint64_t exec_vaddr, uint64_t exec_memsz) {
  sym_module *m = mp_xcalloc(1, sizeof *m);
  m->bin.fd = m->dbg.fd = m->alt.fd = -1;
  m->bin.path = mp_xstrndup(path, strlen(path));
  m->pub.path = m->bin.path;
  m->pub.build_id_len = len < sizeof m->pub.build_id ? len : sizeof m->pub.build_id;
  memcpy(m->pub.build_id, id, m->pub.build_id_len);
  m->pub.exec_vaddr = exec_vaddr;
  m->pub.exec_memsz = exec_memsz;
  m->pub.num_exec_segments = 1;
  m->placeholder = 1;
  push_module(c, m);
}

int msym_add_binary(msym_ctx *c, const char *path, mp_err *err) {
  return add_module(c, path, NULL, 0, err);
}

int msym_add_binary_with_id(msym_ctx *c, const char *path, const uint8_t *id,
                            size_t len, mp_err *err) {
  if (!len) return mp_fail(err, "%s: no build id to match", path);
  return add_module(c, path, id, len, err);
}

size_t msym_file_build_id(const char *path, uint8_t *out, size_t cap) {
  sym_elf_file f;
  mp_err ignored;
  if (sym_elf_open(&f, path, &ignored) != 0) return 0;
  size_t n = sym_elf_build_id(f.elf, out, cap);
  sym_elf_close(&f);
  return n;
}

size_t msym_num_modules(const msym_ctx *c) { return c->nmods; }

const msym_module *msym_module_at(const msym_ctx *c, size_t i) {
  return i < c->nmods ? &c->mods[i]->pub : NULL;
}

const msym_module *msym_find_build_id(const msym_ctx *c, const uint8_t *id,
                                      size_t len) {
  for (size_t i = 0; i < c->nmods; i++) {
    const msym_module *m = &c->mods[i]->pub;
    if (len && m->build_id_len == len && memcmp(m->build_id, id, len) == 0)
      return m;
  }
  return NULL;
}

const char *msym_module_debug_file(const msym_module *m) {
  const sym_module *sm = (const sym_module *)m;
  if (!m || !m->has_debug_info)
    return NULL;
  return sm->dbg.elf ? sm->dbg.path : sm->bin.path;
}

static sym_module *owned_module(const msym_ctx *c, const msym_module *m) {
  for (size_t i = 0; i < c->nmods; i++)
    if (&c->mods[i]->pub == m)
      return c->mods[i];
  return NULL;
}

size_t msym_module_missing_split(msym_ctx *c, const msym_module *m,
                                 const char **first) {
  sym_module *sm = owned_module(c, m);
  if (first)
    *first = NULL;
  if (!sm || !sm->dwarf.ready)
    return 0;
  if (first)
    *first = sm->dwarf.missing_split;
  return sm->dwarf.n_missing_split;
}

size_t msym_missing_split_message(msym_ctx *c, const msym_module *m,
                                  char *buf, size_t cap) {
  const char *first;
  size_t n = msym_module_missing_split(c, m, &first);
  if (!n)
    return 0;
  char dwp[PATH_MAX];
  int has_dwp = snprintf(dwp, sizeof dwp, "%s.dwp", m->path) < (int)sizeof dwp &&
                access(dwp, F_OK) == 0;
  snprintf(buf, cap,
           "%zu split DWARF file%s found neither where the binary records %s "
           "nor beside it (the first: %s)%s",
           n, n == 1 ? " was" : "s were", n == 1 ? "it" : "them", first,
           has_dwp ? "; the .dwp package beside the binary is not read "
                     "(elfutils before 0.190 cannot): keep the .dwo files"
                   : "");
  return n;
}

/* The symbol table's frame for vaddr, cached (the fallback). */
static const sym_cache_entry *symtab_entry(sym_module *sm, const msym_module *m,
                                           uint64_t vaddr) {
  msym_frame f;
  sym_symtab_frame(&sm->symtab, sm->bin.elf, m->path, vaddr, &f);
  return sym_cache_put(&sm->cache, vaddr, &f, 1);
}

int msym_symbolize(msym_ctx *c, const msym_module *m, uint64_t vaddr,
                   const msym_frame **frames, size_t *n, mp_err *err) {
  sym_module *sm = owned_module(c, m);
  if (!sm)
    return mp_fail(err, "msym_symbolize: module does not belong to this "
                         "symbolizer");
  const sym_cache_entry *s = sym_cache_get(&sm->cache, vaddr);
  int fallback = c->symtab_fallback || sm->placeholder;
  if (!s && fallback && !m->has_debug_info)
    s = symtab_entry(sm, m, vaddr);
  if (!s) {
    size_t k =
        sym_dwarf_frames(&sm->dwarf, vaddr, &c->scratch, &c->scratch_cap);
    /* Debug information for part of the module only (a program built
     * with -g for some of its sources): an address no unit covers is
     * named as in a module without any. */
    s = !k && fallback ? symtab_entry(sm, m, vaddr)
                       : sym_cache_put(&sm->cache, vaddr, c->scratch, k);
  }
  *frames = s->frames;
  *n = s->n;
  return 0;
}
