/* fuzz_roots.c - libFuzzer target for the roots file reader
 * (mp_roots_parse, docs/roots-format.md).
 *
 * An accepted file must hold what the format promises (restated below on
 * the parsed form, so a reader that lets a broken file through aborts); a
 * refused one must say why, naming the file and an offset inside it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profdata/roots/roots.h"

static void die(const char *what) {
  fprintf(stderr, "fuzz invariant broken: %s\n", what);
  abort();
}

/* Ids strictly increasing, every entry with a block; adds the sums. */
static void check_list(const mp_roots_ctx *v, size_t n, uint64_t s[4]) {
  for (size_t i = 0; i < n; i++) {
    if (i && v[i].stack_id <= v[i - 1].stack_id)
      die("context ids not increasing");
    if (!v[i].blocks || v[i].direct_bytes > v[i].bytes || v[i].direct_blocks > v[i].blocks)
      die("context with 0 blocks or more direct than all");
    s[0] += v[i].bytes, s[1] += v[i].blocks, s[2] += v[i].direct_bytes,
        s[3] += v[i].direct_blocks;
  }
}

/* Bands: two roots or more, increasing, computed, bytes not increasing;
 * with the other sets they sum to the shared blocks. */
static void check_bands(const mp_roots_census *c) {
  uint64_t s[2] = {c->other_bytes, c->other_blocks};
  for (size_t i = 0; i < c->n_bands; i++) {
    const mp_roots_band *b = &c->bands[i];
    if (b->n_roots < 2 || !b->blocks || (i && b->bytes > b[-1].bytes))
      die("a band of fewer than 2 roots, no blocks, or out of order");
    for (size_t j = 0; j < b->n_roots; j++)
      if (b->roots[j] >= c->n_roots || (j && b->roots[j] <= b->roots[j - 1]) ||
          c->roots[b->roots[j]].flags & MP_ROOT_REACHED_PARTIAL)
        die("a band's root indices out of range, not increasing, or not computed");
    for (size_t k = 0; k < i; k++)
      if (c->bands[k].n_roots == b->n_roots &&
          !memcmp(c->bands[k].roots, b->roots, b->n_roots * sizeof *b->roots))
        die("two bands of the same roots");
    s[0] += b->bytes, s[1] += b->blocks;
  }
  if (s[0] != c->shared_bytes || s[1] != c->shared_blocks)
    die("bands and other sets do not sum to the shared blocks");
}

static void check_census(const mp_roots_census *c) {
  uint64_t heap[4] = {0};
  char label[256];
  for (size_t k = 0; k < c->n_roots; k++) {
    const mp_roots_root *x = &c->roots[k];
    uint64_t s[4] = {0};
    check_list(x->ctx, x->n_ctx, s);
    if (s[0] != x->retained_bytes || s[1] != x->retained_blocks)
      die("a root's list does not sum to its retained figures");
    if (x->retained_bytes > x->reached_bytes || x->module > c->n_modules || !x->name)
      die("a root retains more than it reaches, or names no module");
    mp_roots_label(c, x, label, sizeof label);
    heap[0] += s[0], heap[1] += s[1];
  }
  uint64_t s[4] = {0}, u[4] = {0};
  check_list(c->shared, c->n_shared, s);
  check_list(c->unreached, c->n_unreached, u);
  if (s[0] != c->shared_bytes || s[1] != c->shared_blocks || u[0] != c->unreached_bytes ||
      u[1] != c->unreached_blocks || u[2] != c->direct_bytes || u[3] != c->direct_blocks)
    die("shared or unreached list does not sum to its totals");
  check_bands(c);
  if (heap[0] + s[0] + u[0] != c->heap_bytes || heap[1] + s[1] + u[1] != c->heap_blocks)
    die("the census does not sum to the heap");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mp_roots t;
  mp_err e = {{0}};
  if (mp_roots_parse("fuzz-input", data, size, &t, &e) == 0) {
    for (size_t i = 0; i < t.n_census; i++)
      check_census(&t.census[i]);
    mp_roots_free(&t);
    return 0;
  }
  static const char head[] = "fuzz-input: roots file at offset 0x";
  if (strncmp(e.msg, head, sizeof head - 1))
    die("refusal does not name the file and an offset");
  if (strtoull(e.msg + sizeof head - 1, NULL, 16) > size)
    die("refusal names an offset past the end");
  if (t.census || t.n_census)
    die("refusal left a partial file");
  return 0;
}
