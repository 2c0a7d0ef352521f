/* roots.c - the reader of `<raw profile>.roots` files
 * (docs/roots-format.md) into an mp_roots (roots.h).
 *
 * Every varint, count, string and sum is checked against the bytes really
 * there before anything is allocated for it, and a refusal names the file
 * and the offset of the first wrong byte.  A refused file leaves *out
 * empty.
 */
#include "roots.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/io.h"
#include "common/varfile.h"

static const uint8_t rf_magic[8] = {'M', 'P', 'R', 'O', 'O', 'T', 'S', '\n'};

/* A count of things of at least `per` bytes each. */
static int rf_count(mp_varfile *r, const char *what, uint64_t per, uint64_t *n) {
  size_t at = r->at;
  if (mp_varfile_uv(r, what, n))
    return -1;
  if (*n > (r->len - r->at) / per)
    return mp_varfile_fail(r, at, "%s: %" PRIu64 " cannot fit in the %zu bytes left", what, *n,
                   r->len - r->at);
  return 0;
}

static int rf_str(mp_varfile *r, const char *what, char **out) {
  uint64_t n;
  if (rf_count(r, what, 1, &n))
    return -1;
  if (memchr(r->p + r->at, 0, (size_t)n))
    return mp_varfile_fail(r, r->at, "%s: a NUL byte in the string", what);
  *out = mp_xmalloc((size_t)n + 1);
  memcpy(*out, r->p + r->at, (size_t)n);
  (*out)[n] = 0;
  r->at += (size_t)n;
  return 0;
}

/* A context list (section 6) that must sum to bytes and blocks (and, when
 * `wide`, hold direct figures summing to dbytes and dblocks). */
static int rf_list(mp_varfile *r, const char *sec, int wide, const uint64_t want[4],
                   mp_roots_ctx **out, size_t *n_out) {
  size_t at0 = r->at;
  uint64_t n;
  if (rf_count(r, sec, wide ? 5 : 3, &n))
    return -1;
  mp_roots_ctx *v = n ? mp_xcalloc((size_t)n, sizeof *v) : NULL;
  *out = v;
  *n_out = (size_t)n;
  uint64_t id = 0, sum[4] = {0};
  for (uint64_t i = 0; i < n; i++) {
    size_t at = r->at;
    uint64_t d;
    if (mp_varfile_uv(r, sec, &d))
      return -1;
    if (i && !d)
      return mp_varfile_fail(r, at, "%s: id delta 0 (ids must increase)", sec);
    if (id + d < id)
      return mp_varfile_fail(r, at, "%s: stack id overflows 64 bits", sec);
    v[i].stack_id = id += d;
    if (mp_varfile_uv(r, sec, &v[i].bytes) || mp_varfile_uv(r, sec, &v[i].blocks) ||
        (wide && (mp_varfile_uv(r, sec, &v[i].direct_bytes) || mp_varfile_uv(r, sec, &v[i].direct_blocks))))
      return -1;
    if (!v[i].blocks || v[i].direct_bytes > v[i].bytes || v[i].direct_blocks > v[i].blocks)
      return mp_varfile_fail(r, at, "%s: stack id %" PRIu64 ": 0 blocks, or more direct than all",
                     sec, id);
    if (mp_varfile_add(r, at, "a sum", &sum[0], v[i].bytes) || mp_varfile_add(r, at, "a sum", &sum[1], v[i].blocks) ||
        mp_varfile_add(r, at, "a sum", &sum[2], v[i].direct_bytes) || mp_varfile_add(r, at, "a sum", &sum[3], v[i].direct_blocks))
      return -1;
  }
  if (sum[0] != want[0] || sum[1] != want[1] || (wide && (sum[2] != want[2] || sum[3] != want[3])))
    return mp_varfile_fail(r, at0, "%s: the contexts sum to %" PRIu64 " bytes in %" PRIu64
                   " blocks, the totals say %" PRIu64 " in %" PRIu64, sec, sum[0], sum[1],
                   want[0], want[1]);
  return 0;
}

static int rf_root(mp_varfile *r, const mp_roots_census *c, mp_roots_root *x, size_t i) {
  char sec[64];
  snprintf(sec, sizeof sec, "root %zu", i);
  size_t at = r->at;
  if (mp_varfile_uv(r, sec, &x->kind) || mp_varfile_uv(r, sec, &x->flags))
    return -1;
  if (x->kind < MP_ROOT_GLOBAL || x->kind > MP_ROOT_NAMED || x->flags & ~MP_ROOT_REACHED_PARTIAL)
    return mp_varfile_fail(r, at, "%s: kind %" PRIu64 " or flags 0x%" PRIx64 " unknown", sec, x->kind,
                   x->flags);
  at = r->at;
  if (mp_varfile_uv(r, sec, &x->module))
    return -1;
  int wants_module = x->kind == MP_ROOT_GLOBAL || x->kind == MP_ROOT_DATA;
  if (x->module > c->n_modules || (wants_module != (x->module != 0)))
    return mp_varfile_fail(r, at, "%s: module %" PRIu64 " (the census lists %zu)", sec, x->module,
                   c->n_modules);
  if (mp_varfile_uv(r, sec, &x->offset) || mp_varfile_uv(r, sec, &x->size) || rf_str(r, sec, &x->name) ||
      mp_varfile_uv(r, sec, &x->reached_bytes) || mp_varfile_uv(r, sec, &x->reached_blocks))
    return -1;
  at = r->at;
  if (mp_varfile_uv(r, sec, &x->retained_bytes) || mp_varfile_uv(r, sec, &x->retained_blocks))
    return -1;
  if (x->retained_bytes > x->reached_bytes || x->retained_blocks > x->reached_blocks)
    return mp_varfile_fail(r, at, "%s: retains more than it reaches", sec);
  uint64_t want[4] = {x->retained_bytes, x->retained_blocks, 0, 0};
  return rf_list(r, sec, 0, want, &x->ctx, &x->n_ctx);
}

static int rf_census(mp_varfile *r, mp_roots_census *c, size_t i, uint64_t version) {
  char sec[64];
  snprintf(sec, sizeof sec, "census %zu", i);
  size_t at = r->at;
  if (mp_varfile_uv(r, sec, &c->kind))
    return -1;
  uint64_t last = version >= 2 ? MP_ROOTS_AT_HIGH : MP_ROOTS_AT_EXIT;
  if (c->kind < MP_ROOTS_ON_DEMAND || c->kind > last)
    return mp_varfile_fail(r, at, "%s: kind %" PRIu64 " unknown in version %" PRIu64, sec,
                           c->kind, version);
  uint64_t n;
  if (mp_varfile_uv(r, sec, &c->t_ms) || mp_varfile_uv(r, sec, &c->heap_bytes) ||
      mp_varfile_uv(r, sec, &c->heap_blocks) || mp_varfile_uv(r, sec, &c->scanned_bytes) ||
      rf_count(r, "module count", 1, &n))
    return -1;
  c->modules = n ? mp_xcalloc((size_t)n, sizeof *c->modules) : NULL;
  for (uint64_t k = 0; k < n; k++) {
    c->n_modules = (size_t)k + 1;
    if (rf_str(r, "module name", &c->modules[k]))
      return -1;
  }
  /* a root is at least 12 one-byte varints */
  if (rf_count(r, "root count", 12, &n))
    return -1;
  c->roots = n ? mp_xcalloc((size_t)n, sizeof *c->roots) : NULL;
  uint64_t sum[2] = {0};
  for (uint64_t k = 0; k < n; k++) {
    c->n_roots = (size_t)k + 1;
    at = r->at;
    if (rf_root(r, c, &c->roots[k], (size_t)k) ||
        mp_varfile_add(r, at, "a sum", &sum[0], c->roots[k].retained_bytes) ||
        mp_varfile_add(r, at, "a sum", &sum[1], c->roots[k].retained_blocks))
      return -1;
  }
  if (mp_varfile_uv(r, sec, &c->shared_bytes) || mp_varfile_uv(r, sec, &c->shared_blocks))
    return -1;
  uint64_t want[4] = {c->shared_bytes, c->shared_blocks, 0, 0};
  if (rf_list(r, "shared", 0, want, &c->shared, &c->n_shared))
    return -1;
  if (mp_varfile_uv(r, sec, &c->unreached_bytes) || mp_varfile_uv(r, sec, &c->unreached_blocks) ||
      mp_varfile_uv(r, sec, &c->direct_bytes) || mp_varfile_uv(r, sec, &c->direct_blocks))
    return -1;
  uint64_t want_u[4] = {c->unreached_bytes, c->unreached_blocks, c->direct_bytes,
                        c->direct_blocks};
  at = r->at;
  if (rf_list(r, "unreached", 1, want_u, &c->unreached, &c->n_unreached))
    return -1;
  if (mp_varfile_add(r, at, "a sum", &sum[0], c->shared_bytes) || mp_varfile_add(r, at, "a sum", &sum[0], c->unreached_bytes) ||
      mp_varfile_add(r, at, "a sum", &sum[1], c->shared_blocks) || mp_varfile_add(r, at, "a sum", &sum[1], c->unreached_blocks))
    return -1;
  if (sum[0] != c->heap_bytes || sum[1] != c->heap_blocks)
    return mp_varfile_fail(r, r->at, "%s: retained, shared and unreached sum to %" PRIu64
                   " bytes in %" PRIu64 " blocks, the heap held %" PRIu64 " in %" PRIu64,
                   sec, sum[0], sum[1], c->heap_bytes, c->heap_blocks);
  return 0;
}

static int rf_header(mp_varfile *r, mp_roots *t, uint64_t *n) {
  if (r->len < sizeof rf_magic)
    return mp_varfile_fail(r, 0, "file of %zu bytes is shorter than the 8-byte magic", r->len);
  if (memcmp(r->p, rf_magic, sizeof rf_magic))
    return mp_varfile_fail(r, 0, "not a memprof roots file (bad magic)");
  r->at = sizeof rf_magic;
  uint64_t flags;
  size_t at = r->at;
  if (mp_varfile_uv(r, "Version", &t->version))
    return -1;
  if (t->version < MP_ROOTS_VERSION_MIN || t->version > MP_ROOTS_VERSION_MAX)
    return mp_varfile_fail(r, at, "version %" PRIu64 " (supported: %d to %d)", t->version,
                           MP_ROOTS_VERSION_MIN, MP_ROOTS_VERSION_MAX);
  at = r->at;
  if (mp_varfile_uv(r, "Flags", &flags))
    return -1;
  if (flags)
    return mp_varfile_fail(r, at, "unknown flags 0x%" PRIx64, flags);
  if (mp_varfile_uv(r, "Pid", &t->pid))
    return -1;
  t->raw_bytes_at = r->at;
  /* a census is at least 12 one-byte varints */
  return mp_varfile_uv(r, "RawBytes", &t->raw_bytes) || rf_count(r, "CensusCount", 12, n) ? -1 : 0;
}

int mp_roots_parse(const char *name, const uint8_t *data, size_t len, mp_roots *out,
                   mp_err *err) {
  memset(out, 0, sizeof *out);
  mp_varfile r = {name, "roots file", data, len, 0, err};
  uint64_t n;
  if (rf_header(&r, out, &n))
    goto fail;
  out->census = n ? mp_xcalloc((size_t)n, sizeof *out->census) : NULL;
  for (uint64_t i = 0; i < n; i++) {
    out->n_census = (size_t)i + 1;
    if (rf_census(&r, &out->census[i], (size_t)i, out->version))
      goto fail;
  }
  if (r.at != len) {
    mp_varfile_fail(&r, r.at, "%zu bytes after the last census", len - r.at);
    goto fail;
  }
  return 0;
fail:
  mp_roots_free(out);
  return -1;
}

int mp_roots_read(const char *path, mp_roots *out, mp_err *err) {
  mp_file f;
  memset(out, 0, sizeof *out);
  if (mp_file_open(&f, path, err)) {
    mp_err_prefix(err, path);
    return -1;
  }
  int rc = mp_roots_parse(path, f.data, f.size, out, err);
  mp_file_close(&f);
  return rc;
}

int mp_is_roots(const void *data, size_t len) {
  return len >= sizeof rf_magic && memcmp(data, rf_magic, sizeof rf_magic) == 0;
}

char *mp_roots_path_for(const char *raw_path) { return mp_path_beside(raw_path, ".roots"); }

int mp_roots_match(const mp_roots *t, const char *name, uint64_t raw_size, mp_err *err) {
  if (!t->raw_bytes || t->raw_bytes == raw_size)
    return 0;
  return mp_fail(err,
                 "%s: roots file at offset 0x%zx: written for a raw profile of %" PRIu64
                 " bytes, the raw profile beside it has %" PRIu64,
                 name, t->raw_bytes_at, t->raw_bytes, raw_size);
}

void mp_roots_label(const mp_roots_census *c, const mp_roots_root *x, char *buf, size_t cap) {
  const char *mod = x->module ? c->modules[x->module - 1] : "";
  const char *base = strrchr(mod, '/');
  base = base ? base + 1 : mod;
  switch (x->kind) {
  case MP_ROOT_GLOBAL:
    snprintf(buf, cap, "%s (%s)", x->name, base);
    break;
  case MP_ROOT_DATA:
    snprintf(buf, cap, "%s+0x%" PRIx64, base, x->offset);
    break;
  case MP_ROOT_THREAD:
    snprintf(buf, cap, "thread %" PRIu64 " (stack, registers, TLS)", x->offset);
    break;
  default:
    snprintf(buf, cap, "%s (named)", x->name);
  }
}

void mp_roots_free(mp_roots *t) {
  if (!t)
    return;
  for (size_t i = 0; i < t->n_census; i++) {
    mp_roots_census *c = &t->census[i];
    for (size_t k = 0; k < c->n_modules; k++)
      free(c->modules[k]);
    free(c->modules);
    for (size_t k = 0; k < c->n_roots; k++) {
      free(c->roots[k].name);
      free(c->roots[k].ctx);
    }
    free(c->roots);
    free(c->shared);
    free(c->unreached);
  }
  free(t->census);
  memset(t, 0, sizeof *t);
}
