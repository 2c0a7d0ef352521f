/* raw_libs.c - the modules of a preloaded process, found from its profile.
 *
 * A raw profile's segment table (docs/raw-format.md, section 3) lists
 * every module the process had loaded by its GNU build id; the runtime's
 * note (section 7) adds the path each was loaded from.  For the modules no
 * --profiled-binary has, `report` tries, in order: the note's path; the
 * files named "*.so*" beside the given binaries, in $LD_LIBRARY_PATH and in
 * the directories the dynamic loader searches on Debian (LIB_DIRS).  A file
 * is taken only when its build id is the segment's
 * (msym_add_binary_with_id).  A module found nowhere (its file deleted or
 * rebuilt) becomes a placeholder whose frames are named module+0xADDR
 * (msym_add_placeholder), so that no frame is dropped and no contexts
 * merge for lack of one.
 *
 * Only for the profiles of programs libmemprof.so was preloaded into
 * (heaptrack's use), in every command: the report of an instrumented
 * program stays the report of the profile `merge` writes, with the frames
 * of the binaries given, as clang will see them (a raw input and its
 * merged indexed file give the same report), and `merge` and `show` of
 * instrumented profiles read only the binaries given, as llvm-profdata.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/io.h"
#include "include/internal/memprof_format.h"
#include "raw.h"

static const char *const LIB_DIRS[] = {
    "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
    "/usr/lib64", "/usr/local/lib", "/lib", "/usr/lib",
};

typedef struct want {
  mpf_raw_segment seg;
  char *path; /* its module's path from the note, or NULL */
} want;

typedef struct wanted {
  want *segs; /* build ids no module has yet */
  size_t n, cap;
} wanted;

static int is_wanted(const wanted *w, const uint8_t *id, size_t len) {
  for (size_t i = 0; i < w->n; i++)
    if (w->segs[i].seg.build_id_size == len &&
        !memcmp(w->segs[i].seg.build_id, id, len))
      return 1;
  return 0;
}

/* The offset of the first dump's note (docs/raw-format.md, section 7),
 * with *size its size; 0 when it has none or the dump does not fit the
 * file (reading it will say what is wrong). */
static uint64_t first_note(const mp_file *f, uint64_t *size) {
  uint64_t total = mp_rd64(f->data + 16), at = mp_rd64(f->data + 40);
  if (total > f->size || at > total || total - at < 8) return 0;
  uint64_t n = mp_rd64(f->data + at);
  at += 8;
  for (uint64_t i = 0; i < n; i++) {
    if (total - at < 16) return 0;
    uint64_t k = mp_rd64(f->data + at + 8);
    if (k > (total - at - 16) / 8) return 0;
    at += 16 + k * 8;
  }
  mpf_raw_note note;
  if (total - at < sizeof note) return 0;
  memcpy(&note, f->data + at, sizeof note);
  if (note.magic != MPF_RAW_NOTE_MAGIC || note.size < sizeof note ||
      note.size > total - at)
    return 0;
  *size = note.size;
  return at;
}

/* The note says no instrumented code ran: libmemprof.so was preloaded
 * into the program. */
static int uninstrumented(const mp_file *f, uint64_t note_at) {
  mpf_raw_note note;
  if (!note_at) return 0;
  memcpy(&note, f->data + note_at, sizeof note);
  return (note.flags & MPF_RAW_NOTE_UNINSTRUMENTED) != 0;
}

/* The module path the note gives segment i, allocated, or NULL. */
static char *note_path(const mp_file *f, uint64_t note_at, uint64_t size,
                       uint64_t i) {
  uint64_t at = note_at + sizeof(mpf_raw_note), end = note_at + size;
  if (end - at < 8 || i >= mp_rd64(f->data + at)) return NULL;
  at += 8;
  for (uint64_t k = 0;; k++) {
    if (end - at < 8) return NULL;
    uint64_t len = mp_rd64(f->data + at);
    if (len > end - at - 8 || len > PATH_MAX) return NULL;
    if (k == i)
      return len && !memchr(f->data + at + 8, 0, len)
                 ? mp_xstrndup((const char *)f->data + at + 8, len)
                 : NULL;
    at += 8 + ((len + 7) & ~(uint64_t)7);
    if (at > end) return NULL;
  }
}

/* The build ids of the first dump's segments (the dumps of a file list the
 * same modules) that no module of sym has, for a preloaded program's
 * profile, each with its module's path.  A file too short for what its
 * header says is left alone: reading it will say what is wrong.  Returns
 * whether f is a preloaded program's profile. */
static int collect(const mp_file *f, const msym_ctx *sym, wanted *w) {
  uint64_t note_at = 0, note_size = 0;
  if (!mp_is_raw(f->data, f->size) || f->size < sizeof(mpf_raw_header))
    return 0;
  note_at = first_note(f, &note_size);
  if (!uninstrumented(f, note_at)) return 0;
  uint64_t seg_off = mp_rd64(f->data + 24);
  if (seg_off > f->size - 8) return 1;
  uint64_t n = mp_rd64(f->data + seg_off);
  if (n > (f->size - seg_off - 8) / sizeof(mpf_raw_segment)) return 1;
  for (uint64_t i = 0; i < n; i++) {
    mpf_raw_segment s;
    memcpy(&s, f->data + seg_off + 8 + i * sizeof s, sizeof s);
    size_t len = (size_t)s.build_id_size;
    if (!len || len > MPF_BUILD_ID_MAX || msym_find_build_id(sym, s.build_id, len) ||
        is_wanted(w, s.build_id, len))
      continue;
    MP_VEC_RESERVE(w->segs, w->cap, w->n + 1);
    w->segs[w->n++] = (want){s, note_path(f, note_at, note_size, i)};
  }
  return 1;
}

/* Drops w's entry for the build id of the module just added. */
static void found(wanted *w, const msym_module *m) {
  for (size_t i = 0; i < w->n; i++)
    if (w->segs[i].seg.build_id_size == m->build_id_len &&
        !memcmp(w->segs[i].seg.build_id, m->build_id, m->build_id_len)) {
      free(w->segs[i].path);
      w->segs[i] = w->segs[--w->n];
      return;
    }
}

static int is_library_name(const struct dirent *e) {
  return strstr(e->d_name, ".so") != NULL;
}

static void try_file(msym_ctx *sym, const char *dir, struct dirent **e,
                     wanted *w) {
  char path[PATH_MAX];
  uint8_t id[MPF_BUILD_ID_MAX];
  mp_err err;
  if (w->n && snprintf(path, sizeof path, "%s/%s", dir, (*e)->d_name) < (int)sizeof path) {
    size_t len = msym_file_build_id(path, id, sizeof id);
    if (len && is_wanted(w, id, len) &&
        msym_add_binary_with_id(sym, path, id, len, &err) == 0)
      found(w, msym_module_at(sym, msym_num_modules(sym) - 1));
  }
  free(*e);
  *e = NULL;
}

/* Versioned names first, each in name order, so that of a library's
 * names (the development link libz.so, libz.so.1 and the file
 * libz.so.1.2.13) the one the loader opens by, libz.so.1, is the module's
 * name whatever the directory's order. */
static void search_dir(msym_ctx *sym, const char *dir, wanted *w) {
  struct dirent **names;
  int n = scandir(dir, &names, is_library_name, alphasort);
  if (n < 0) return;
  for (int pass = 0; pass < 2; pass++)
    for (int k = 0; k < n; k++)
      if (names[k] && (strstr(names[k]->d_name, ".so.") == NULL) == pass)
        try_file(sym, dir, &names[k], w);
  free(names);
}

static void search_path_list(msym_ctx *sym, const char *list, wanted *w) {
  char *copy = mp_xstrndup(list, strlen(list)), *save = NULL;
  for (char *dir = strtok_r(copy, ":", &save); dir && w->n;
       dir = strtok_r(NULL, ":", &save))
    search_dir(sym, dir, w);
  free(copy);
}

/* The paths the process loaded its modules from, where the files are
 * still the ones it ran. */
static void try_note_paths(msym_ctx *sym, wanted *w) {
  for (size_t i = 0; i < w->n;) {
    const want *x = &w->segs[i];
    mp_err err;
    if (x->path &&
        msym_add_binary_with_id(sym, x->path, x->seg.build_id,
                                (size_t)x->seg.build_id_size, &err) == 0)
      found(w, msym_module_at(sym, msym_num_modules(sym) - 1));
    else
      i++;
  }
}

/* A module with no file: its frames are named module+0xaddress. */
static void add_placeholder(msym_ctx *sym, want *x) {
  const mpf_raw_segment *s = &x->seg;
  char name[2 * MPF_BUILD_ID_MAX + 16];
  const char *path = x->path;
  if (!path) {
    int k = snprintf(name, sizeof name, "build-id:");
    for (uint64_t b = 0; b < s->build_id_size && b < MPF_BUILD_ID_MAX; b++)
      k += snprintf(name + k, sizeof name - (size_t)k, "%02x", s->build_id[b]);
    path = name;
  }
  msym_add_placeholder(sym, path, s->build_id, (size_t)s->build_id_size,
                       s->start - s->offset, s->end - s->start);
  free(x->path);
}

/* The vDSO (its note path "linux-vdso.so.1", no folder: the kernel maps
 * it, no file holds it): a placeholder at once, instead of reading the
 * build id of every library of the search folders to look for it. */
static void place_fileless(msym_ctx *sym, wanted *w) {
  for (size_t i = 0; i < w->n;) {
    if (w->segs[i].path && !strchr(w->segs[i].path, '/')) {
      add_placeholder(sym, &w->segs[i]);
      w->segs[i] = w->segs[--w->n];
    } else {
      i++;
    }
  }
}

/* What is left has no file. */
static void add_placeholders(msym_ctx *sym, wanted *w) {
  for (size_t i = 0; i < w->n; i++)
    add_placeholder(sym, &w->segs[i]);
  w->n = 0;
}

size_t mp_raw_find_libraries(msym_ctx *sym, const char *const *inputs,
                             size_t n_inputs) {
  wanted w = {0};
  size_t preloaded = 0;
  for (size_t i = 0; i < n_inputs; i++) {
    mp_file f;
    mp_err err;
    if (mp_file_open(&f, inputs[i], &err) != 0) continue;
    preloaded += collect(&f, sym, &w);
    mp_file_close(&f);
  }
  try_note_paths(sym, &w);
  place_fileless(sym, &w);
  size_t given = msym_num_modules(sym);
  for (size_t i = 0; i < given && w.n; i++) {
    char dir[PATH_MAX];
    const char *path = msym_module_at(sym, i)->path;
    const char *slash = strrchr(path, '/');
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1,
             slash ? path : ".");
    search_dir(sym, dir, &w);
  }
  const char *ld = getenv("LD_LIBRARY_PATH");
  if (ld && w.n) search_path_list(sym, ld, &w);
  for (size_t i = 0; i < sizeof LIB_DIRS / sizeof *LIB_DIRS && w.n; i++)
    search_dir(sym, LIB_DIRS[i], &w);
  add_placeholders(sym, &w);
  free(w.segs);
  return preloaded;
}
