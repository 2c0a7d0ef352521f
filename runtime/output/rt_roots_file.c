/* rt_roots_file.c - the `.roots` file beside the raw profile
 * (docs/roots-format.md): each census encoded when it is taken and kept
 * in memory, all of them written, after a header, to "<raw path>.roots"
 * by each dump that writes the raw profile to a file (a temporary name,
 * then renamed, as the timeline).
 *
 * A census's blocks are grouped by (label, context): one sort of a pair
 * per block, whose key is the group (the root's index, then "shared",
 * then "unreached") above the stack id, so each root's context list, the
 * shared list and the unreached list come out in order, by stack id.
 * The bands after the shared list come from rt_roots_bands.c. */
#include "rt_roots.h"
#include "rt_roots_priv.h"
#include "runtime/base/rt_clock.h"
#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_ialloc.h"
#include "runtime/base/rt_lock.h"
#include "runtime/base/rt_state.h"
#include "runtime/base/rt_sys.h"

#define UV_MAX 10
#define DIRECT (1ULL << 63)

static rt_mutex kept_mu = RT_MUTEX_INIT;
static rt_buf kept;
static uint64_t n_kept;

static void uv(rt_buf *b, uint64_t v) {
  uint8_t o[UV_MAX];
  size_t n = 0;
  while (v >= 0x80) {
    o[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  o[n++] = (uint8_t)v;
  rt_buf_append(b, o, n);
}

static void str(rt_buf *b, const char *s) {
  size_t n = 0;
  while (s[n])
    n++;
  uv(b, n);
  rt_buf_append(b, s, n);
}

typedef struct pair {
  uint64_t key; /* group << 32 | stack id */
  uint64_t val; /* size, DIRECT for a directly unreached block */
} pair;

/* The context list of group g starting at p[*i] (docs/roots-format.md,
 * section 6); `wide`: the unreached list's direct figures too. */
static void list(rt_buf *b, const pair *p, uint64_t n, uint64_t *i, uint64_t g, int wide) {
  uint64_t end = *i, count = 0;
  for (uint64_t k = *i; k < n && p[k].key >> 32 == g; k = end) {
    while (end < n && p[end].key == p[k].key)
      end++;
    count++;
  }
  uv(b, count);
  uint64_t prev = 0;
  while (*i < end) {
    uint64_t key = p[*i].key, bytes = 0, blocks = 0, dbytes = 0, dblocks = 0;
    for (; *i < end && p[*i].key == key; (*i)++) {
      uint64_t size = p[*i].val & ~DIRECT;
      bytes += size, blocks++;
      if (p[*i].val & DIRECT)
        dbytes += size, dblocks++;
    }
    uint64_t id = key & 0xFFFFFFFFu;
    uv(b, id - prev);
    prev = id;
    uv(b, bytes), uv(b, blocks);
    if (wide)
      uv(b, dbytes), uv(b, dblocks);
  }
}

static void sums(const pair *p, uint64_t n, uint64_t g, uint64_t out[4]) {
  for (uint64_t i = 0; i < n; i++)
    if (p[i].key >> 32 == g) {
      uint64_t size = p[i].val & ~DIRECT;
      out[0] += size, out[1]++;
      if (p[i].val & DIRECT)
        out[2] += size, out[3]++;
    }
}

/* The bands (docs/roots-format.md, section 4.1): the largest sets of
 * roots sharing blocks, then the other shared blocks' sums. */
static void bands(rt_buf *b, const rr_census *c, const uint64_t shared[2]) {
  rr_band top[RR_BANDS_MAX];
  uint32_t max = (uint32_t)rt_flags.roots_bands, n = 0;
  size_t cap = (c->roots.len ? c->roots.len : 1) * sizeof(uint32_t);
  uint32_t *set = rt_ialloc(cap);
  if (set) /* else none: all are "other sets" */
    n = rr_bands_top(c, top, max < RR_BANDS_MAX ? max : RR_BANDS_MAX);
  uv(b, n);
  uint64_t other[2] = {shared[0], shared[1]};
  for (uint32_t i = 0; i < n; i++) {
    uint32_t k = rr_band_roots(c, top[i].node, set), prev = 0;
    uv(b, k);
    for (uint32_t j = 0; j < k; j++) {
      uv(b, set[j] - prev);
      prev = set[j];
    }
    uv(b, top[i].bytes), uv(b, top[i].blocks);
    other[0] -= top[i].bytes, other[1] -= top[i].blocks;
  }
  uv(b, other[0]), uv(b, other[1]);
  if (set)
    rt_ifree(set, cap);
}

static void encode(rt_buf *b, const rr_census *c, int kind, pair *p) {
  uint64_t nroots = c->roots.len, shared = nroots, unreached = nroots + 1;
  for (uint64_t i = 0; i < c->n; i++) {
    const rr_blk *k = &c->blk[i];
    uint64_t g = k->label == RR_SHARED ? shared : k->label ? k->label - 1 : unreached;
    p[i].key = g << 32 | k->ctx;
    p[i].val = k->size | (!k->label && !(k->flags & RR_INDIRECT) ? DIRECT : 0);
  }
  rr_sort(p, c->n, sizeof(pair));
  const char *strs = c->strs.p;
  uv(b, (uint64_t)kind), uv(b, rt_now_ms()), uv(b, c->heap_bytes), uv(b, c->n),
      uv(b, c->scanned);
  uv(b, c->modules.len);
  for (size_t i = 0; i < c->modules.len; i++)
    str(b, strs + ((const uint64_t *)c->modules.p)[i]);
  uv(b, nroots);
  uint64_t at = 0;
  for (uint64_t r = 0; r < nroots; r++) {
    const rr_root *x = (const rr_root *)c->roots.p + r;
    uv(b, x->kind), uv(b, x->flags), uv(b, x->module), uv(b, x->offset), uv(b, x->size);
    str(b, strs + x->name);
    uv(b, x->reached_bytes), uv(b, x->reached_blocks);
    uv(b, x->retained_bytes), uv(b, x->retained_blocks);
    list(b, p, c->n, &at, r, 0);
  }
  uint64_t s[4] = {0}, u[4] = {0};
  sums(p, c->n, shared, s);
  sums(p, c->n, unreached, u);
  uv(b, s[0]), uv(b, s[1]);
  list(b, p, c->n, &at, shared, 0);
  bands(b, c, s);
  uv(b, u[0]), uv(b, u[1]), uv(b, u[2]), uv(b, u[3]);
  list(b, p, c->n, &at, unreached, 1);
}

int rt_roots_keep(const rr_census *c, int kind) {
  size_t cap = (c->n ? c->n : 1) * sizeof(pair);
  pair *p = rt_ialloc(cap);
  if (!p) {
    rt_report("ERROR: the roots census ran out of memory: it is left out");
    return -1;
  }
  rt_buf one = {0};
  encode(&one, c, kind, p);
  rt_ifree(p, cap);
  rt_mutex_lock(&kept_mu);
  if (!one.failed) {
    rt_buf_append(&kept, one.p, one.len);
    n_kept += !kept.failed;
  }
  rt_mutex_unlock(&kept_mu);
  int failed = one.failed || kept.failed;
  if (failed)
    rt_report("ERROR: the roots census ran out of memory: it is left out");
  rt_buf_free(&one);
  return failed ? -1 : 0;
}

void rt_roots_write(const char *raw_path, uint64_t raw_bytes) {
  static const char magic[8] = {'M', 'P', 'R', 'O', 'O', 'T', 'S', '\n'};
  char path[4200];
  size_t n = rt_format(path, sizeof path, "%s.roots", raw_path);
  if (n + 1 >= sizeof path)
    return;
  rt_buf head = {0};
  rt_mutex_lock(&kept_mu);
  rt_buf_append(&head, magic, sizeof magic);
  uv(&head, 3), uv(&head, 0), uv(&head, (uint64_t)rt_getpid()), uv(&head, raw_bytes);
  uv(&head, n_kept);
  int r = head.failed ? -12 /* ENOMEM */
                       : rt_replace_file(path, head.p, head.len, kept.p, kept.len);
  rt_mutex_unlock(&kept_mu);
  if (r < 0) {
    rt_report("ERROR: cannot write the roots file %s (errno %d)", path, -r);
    rt_output_note_failure();
  }
  rt_buf_free(&head);
}
