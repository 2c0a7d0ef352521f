/* report_names.c - how a report names frames: the linkage name demangled
 * by the C++ ABI's __cxa_demangle (libstdc++, loaded on first use), the name as it is when it
 * does not demangle (C functions), or the function GUID when the profile
 * has no names (llvm-profdata's indexed files and YAML); and the source
 * location the symbolizer found ("?" for a frame named from a symbol
 * table, which has none).  And a stack as the text formats print
 * it, a frame a line.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* libstdc++'s demangler (cxxabi.h's __cxa_demangle), loaded the first time
 * a name needs it: linking libstdc++ would load it, libm and libgcc_s at
 * every start of the tool, which merges, the commands that must be quick,
 * never use.  NULL (names stay mangled) if libstdc++ cannot be loaded. */
typedef char *(*demangle_fn)(const char *mangled, char *buf, size_t *len,
                             int *status);

static demangle_fn cxa_demangle(void) {
  static int tried;
  static demangle_fn fn;
  if (!tried) {
    tried = 1;
    void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
    if (h) *(void **)&fn = dlsym(h, "__cxa_demangle");
  }
  return fn;
}

char *rpt_demangle(const char *name) {
  int status = 0;
  demangle_fn fn = name[0] == '_' && name[1] == 'Z' ? cxa_demangle() : NULL;
  char *d = fn ? fn(name, NULL, NULL, &status) : NULL;
  if (d && status == 0) return d;
  free(d);
  return mp_xstrndup(name, strlen(name));
}

const char *rpt_frame_name(rpt *r, uint32_t frame) {
  uint32_t id = r->p->syms[frame].name;
  const char *name = mp_string(r->p, id);
  if (name) {
    if (!r->names[id]) r->names[id] = rpt_demangle(name);
    return r->names[id];
  }
  if (!r->guid_names[frame]) {
    char buf[24];
    snprintf(buf, sizeof buf, "0x%016" PRIx64, r->p->frames[frame].guid);
    r->guid_names[frame] = mp_xstrndup(buf, strlen(buf));
  }
  return r->guid_names[frame];
}

/* `path` with its "." components and each "dir/.." pair removed, as
 * people write it (DWARF keeps "/usr/lib/gcc/x86_64-linux-gnu/12/../../../../
 * include/c++/12/..."); NULL when it has none. */
static char *lexical_path(const char *path) {
  if (!strstr(path, "/./") && !strstr(path, "/../") && strncmp(path, "./", 2) &&
      strncmp(path, "../", 3))
    return NULL;
  size_t n = strlen(path);
  char *out = mp_xmalloc(n + 1);
  size_t len = 0, keep = path[0] == '/'; /* an absolute path keeps its '/' */
  if (keep) out[len++] = '/';
  for (const char *p = path; *p;) {
    while (*p == '/') p++;
    const char *end = strchr(p, '/');
    size_t k = end ? (size_t)(end - p) : strlen(p);
    if (k == 1 && p[0] == '.') {
      /* "." names the folder it is in */
    } else if (k == 2 && p[0] == '.' && p[1] == '.' && len > keep &&
               !(len - keep >= 2 && out[len - 1] == '.' && out[len - 2] == '.' &&
                 (len - keep == 2 || out[len - 3] == '/'))) {
      while (len > keep && out[len - 1] != '/') len--; /* drop the last component */
      if (len > keep) len--;                          /* and its '/' */
    } else if (k) {
      if (len > keep) out[len++] = '/';
      memcpy(out + len, p, k);
      len += k;
    }
    p += k;
  }
  out[len] = 0;
  return out;
}

const char *rpt_frame_file(const rpt *r, uint32_t frame) {
  uint32_t id = r->p->syms[frame].file;
  const char *file = mp_string(r->p, id);
  if (!file) return NULL;
  if (!r->files[id]) {
    char *lexical = lexical_path(file);
    r->files[id] = lexical ? lexical : mp_xstrndup(file, strlen(file));
  }
  return r->files[id];
}

/* The symbolized line; without symbols, LLVM's offset from the function's
 * first line is all there is. */
uint32_t rpt_frame_line(const rpt *r, uint32_t frame) {
  const mp_frame_sym *s = &r->p->syms[frame];
  return s->file != MP_NO_STRING || s->name != MP_NO_STRING
             ? s->line
             : r->p->frames[frame].line_offset;
}

uint32_t rpt_frame_column(const rpt *r, uint32_t frame) {
  const mp_frame_sym *s = &r->p->syms[frame];
  return s->file != MP_NO_STRING || s->name != MP_NO_STRING
             ? s->column
             : r->p->frames[frame].column;
}

int rpt_frame_from_symtab(const rpt *r, uint32_t frame) {
  const mp_frame_sym *s = &r->p->syms[frame];
  return s->name != MP_NO_STRING && s->file == MP_NO_STRING && s->line == 0 &&
         s->column == 0;
}

const char *rpt_frame_loc(const rpt *r, uint32_t frame, char *buf, size_t n) {
  const char *file = rpt_frame_file(r, frame);
  if (rpt_frame_from_symtab(r, frame))
    snprintf(buf, n, "?");
  else if (file)
    snprintf(buf, n, "%s:%" PRIu32 ":%" PRIu32, file, rpt_frame_line(r, frame),
             rpt_frame_column(r, frame));
  else
    snprintf(buf, n, "+%" PRIu32 ":%" PRIu32, rpt_frame_line(r, frame),
             rpt_frame_column(r, frame));
  return buf;
}

#define MAX_FRAMES_SHOWN 24
#define NAME_COLUMN 60

/* Leaf first; locations in a column after names of up to NAME_COLUMN. */
void rpt_print_stack(rpt *r, mp_buf *o, uint32_t stack, const char *prefix) {
  const uint32_t *f = mp_stack_frames(r->p, stack);
  uint32_t n = r->p->stacks[stack].len;
  char loc[512], name[1024];
  int width = 0;
  for (uint32_t k = 0; k < n && k < MAX_FRAMES_SHOWN; k++) {
    int w = snprintf(name, sizeof name, "%s%s", r->p->frames[f[k]].is_inline ? "(inlined) " : "",
                     rpt_frame_name(r, f[k]));
    if (w > width && w <= NAME_COLUMN) width = w;
  }
  for (uint32_t k = 0; k < n && k < MAX_FRAMES_SHOWN; k++) {
    snprintf(name, sizeof name, "%s%s", r->p->frames[f[k]].is_inline ? "(inlined) " : "",
             rpt_frame_name(r, f[k]));
    mp_buf_printf(o, "%s      %-*s  %s\n", prefix, width, name,
                  rpt_frame_loc(r, f[k], loc, sizeof loc));
  }
  if (n > MAX_FRAMES_SHOWN)
    mp_buf_printf(o, "%s      ... %u more frames\n", prefix,
                  n - MAX_FRAMES_SHOWN);
}
