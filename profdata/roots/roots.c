/* roots.c - the reader of `<raw profile>.roots` files
 * (docs/roots-format.md) into an mp_roots (roots.h).
 *
 * Every varint, count, string and sum is checked against the bytes really
 * there before anything is allocated for it, and a refusal names the file
 * and the offset of the first wrong byte.  A refused file leaves *out
 * empty.
 */
#define _GNU_SOURCE /* qsort_r */
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

/* Band i's roots (section 4.1): at least two, increasing, each in the
 * census's list with its reached figures computed. */
static int rf_band_roots(mp_varfile *r, const mp_roots_census *c, mp_roots_band *b,
                         const char *sec) {
  size_t at = r->at;
  uint64_t k;
  if (rf_count(r, sec, 1, &k))
    return -1;
  if (k < 2 || k > c->n_roots)
    return mp_varfile_fail(r, at, "%s: %" PRIu64 " roots (at least 2, the census lists %zu)",
                           sec, k, c->n_roots);
  b->roots = mp_xcalloc((size_t)k, sizeof *b->roots);
  uint64_t idx = 0;
  for (uint64_t j = 0; j < k; j++) {
    uint64_t d;
    at = r->at;
    if (mp_varfile_uv(r, sec, &d))
      return -1;
    b->n_roots = (size_t)j + 1;
    if ((j && !d) || d >= c->n_roots - (j ? idx : 0))
      return mp_varfile_fail(r, at, "%s: root index delta %" PRIu64
                             " (indices increase, below %zu)", sec, d, c->n_roots);
    b->roots[j] = (size_t)(idx += d);
    if (c->roots[idx].flags & MP_ROOT_REACHED_PARTIAL)
      return mp_varfile_fail(r, at, "%s: root %" PRIu64 " has no reached figures", sec, idx);
  }
  return 0;
}

/* The figures of band i: blocks, no more bytes than the band before, and
 * no root in more shared bytes and blocks than it reaches beyond what it
 * retains (`in[2k]`, `in[2k+1]`: root k's so far). */
static int rf_band_sums(mp_varfile *r, const mp_roots_census *c, mp_roots_band *b,
                        const char *sec, uint64_t *in) {
  size_t at = r->at;
  if (mp_varfile_uv(r, sec, &b->bytes) || mp_varfile_uv(r, sec, &b->blocks))
    return -1;
  if (!b->blocks || (b > c->bands && b->bytes > b[-1].bytes))
    return mp_varfile_fail(r, at, "%s: 0 blocks, or more bytes than the band before", sec);
  for (size_t j = 0; j < b->n_roots; j++) {
    const mp_roots_root *x = &c->roots[b->roots[j]];
    uint64_t *s = &in[2 * b->roots[j]];
    if (mp_varfile_add(r, at, "a root's shared sum", &s[0], b->bytes) ||
        mp_varfile_add(r, at, "a root's shared sum", &s[1], b->blocks))
      return -1;
    if (s[0] > x->reached_bytes - x->retained_bytes ||
        s[1] > x->reached_blocks - x->retained_blocks)
      return mp_varfile_fail(r, at, "%s: root %zu shares more than it reaches and does not "
                             "retain", sec, b->roots[j]);
  }
  return 0;
}

static int by_set(const void *pa, const void *pb, void *arg) {
  const mp_roots_band *v = arg, *a = &v[*(const size_t *)pa], *b = &v[*(const size_t *)pb];
  for (size_t j = 0; j < a->n_roots && j < b->n_roots; j++)
    if (a->roots[j] != b->roots[j])
      return a->roots[j] < b->roots[j] ? -1 : 1;
  if (a->n_roots != b->n_roots)
    return a->n_roots < b->n_roots ? -1 : 1;
  return *(const size_t *)pa < *(const size_t *)pb ? -1 : 1;
}

/* The first band (in file order) whose set an earlier band has, or n. */
static size_t rf_repeated_set(const mp_roots_band *v, size_t n) {
  size_t *ord = mp_xmalloc((n + 1) * sizeof *ord), first = n;
  for (size_t i = 0; i < n; i++)
    ord[i] = i;
  qsort_r(ord, n, sizeof *ord, by_set, (void *)v);
  for (size_t i = 1; i < n; i++) {
    const mp_roots_band *a = &v[ord[i - 1]], *b = &v[ord[i]];
    if (a->n_roots == b->n_roots && ord[i] < first &&
        !memcmp(a->roots, b->roots, a->n_roots * sizeof *a->roots))
      first = ord[i];
  }
  free(ord);
  return first;
}

/* The bands (section 4.1), then the other shared blocks: with them, the
 * bands sum to exactly the shared figures. */
static int rf_bands(mp_varfile *r, mp_roots_census *c) {
  uint64_t n;
  /* a band is at least 5 one-byte varints */
  if (rf_count(r, "band count", 5, &n))
    return -1;
  c->bands = n ? mp_xcalloc((size_t)n, sizeof *c->bands) : NULL;
  size_t *at = mp_xcalloc((size_t)n + 1, sizeof *at);
  uint64_t *in = mp_xcalloc(2 * c->n_roots + 1, sizeof *in);
  int rc = -1;
  for (uint64_t i = 0; i < n; i++) {
    char sec[64];
    snprintf(sec, sizeof sec, "band %" PRIu64, i);
    c->n_bands = (size_t)i + 1;
    at[i] = r->at;
    if (rf_band_roots(r, c, &c->bands[i], sec) || rf_band_sums(r, c, &c->bands[i], sec, in))
      goto out;
  }
  size_t rep = rf_repeated_set(c->bands, c->n_bands);
  if (rep < c->n_bands) {
    mp_varfile_fail(r, at[rep], "band %zu: the same roots as an earlier band", rep);
    goto out;
  }
  size_t at_other = r->at;
  if (mp_varfile_uv(r, "other sets", &c->other_bytes) ||
      mp_varfile_uv(r, "other sets", &c->other_blocks))
    goto out;
  uint64_t sum[2] = {c->other_bytes, c->other_blocks};
  for (size_t i = 0; i < c->n_bands; i++)
    if (mp_varfile_add(r, at_other, "a sum", &sum[0], c->bands[i].bytes) ||
        mp_varfile_add(r, at_other, "a sum", &sum[1], c->bands[i].blocks))
      goto out;
  if (sum[0] != c->shared_bytes || sum[1] != c->shared_blocks) {
    mp_varfile_fail(r, at_other, "the bands and other sets sum to %" PRIu64 " bytes in %" PRIu64
                    " blocks, the shared blocks are %" PRIu64 " in %" PRIu64, sum[0], sum[1],
                    c->shared_bytes, c->shared_blocks);
    goto out;
  }
  rc = 0;
out:
  free(at);
  free(in);
  return rc;
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
  if (version >= 3 && rf_bands(r, c))
    return -1;
  if (version < 3) /* no bands: every shared block is of other sets */
    c->other_bytes = c->shared_bytes, c->other_blocks = c->shared_blocks;
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
    for (size_t k = 0; k < c->n_bands; k++)
      free(c->bands[k].roots);
    free(c->bands);
    free(c->unreached);
  }
  free(t->census);
  memset(t, 0, sizeof *t);
}
