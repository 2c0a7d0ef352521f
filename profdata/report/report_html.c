/* report_html.c - the HTML report: one self-contained page (no network, no
 * external script) made of report_page.html, whose script and style are
 * compiled in (report_page.h, generated at build time), and the report's
 * data as JSON in a <script type="application/json"> block.
 *
 * The data, column-wise to keep the page small:
 *   frames   name / file (string indices), line, col, inline flag
 *   tree     the call tree, root first, in pre-order, one node per
 *            function on a path: parent, frame (of the first context), and
 *            bytes, allocations, total lifetime, accesses, cold and hot
 *            bytes of the contexts below each node; nodes too small to be
 *            drawn under every value (under 1/MIN_SHARE of its total) are
 *            left out, so the tree stays small for any number of contexts
 *   ctx      per context: its deepest node in that tree, its allocation
 *            frame, bytes, allocations, total lifetime, lifetime access
 *            density x 100, accesses, verdict, temporary allocations
 *            (when the profile counts them: "tmp", and "tmpOrder" the
 *            contexts that have some, most first); full stacks for the
 *            contexts on top of some ranking
 *   base     with --base: each context's old bytes (-1: new) and the
 *            contexts that are gone
 *   tl       with timelines: the series of the "memory over time" graph
 *            and the contexts live at each peak and at exit
 *            (report_timeline_out.c)
 *   roots    with roots files: per process its last census (retained by
 *            root, leaked, still reachable) and retained bytes by root
 *            over time (report_roots_json.c); its contexts get full stacks
 *   recorded how the profile was recorded (report_facts.c): the sampled
 *            and the not-instrumented sentences, "" when they do not
 *            apply; the page shows them as banners above the summary
 * The tree is built from the contexts sorted root first: a node's
 * contexts are then consecutive, so it is finished, and dropped if small,
 * when the walk leaves it.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/hashmap.h"
#include "report.h"
#include "report_page.h"

#define MIN_SHARE 4000    /* a node is kept from 1/4000 of a total */
#define STACKS_TOP 1000   /* full stacks: the top contexts by bytes... */
#define STACKS_OTHER 250  /* ...and by each other key */

enum { V_BYTES, V_ALLOCS, V_LIFE, V_ACC, V_COLD, V_HOT, NV };

typedef struct page {
  rpt *r;
  mp_buf *out;
  mp_map strings;       /* char* -> string index (keyed) */
  const char **str;
  size_t n_str, cap_str;
  uint32_t *frame_ix;   /* model frame -> page frame, UINT32_MAX unused */
  uint32_t n_frames;
  /* tree, pre-order */
  uint32_t *parent, *frame;
  uint64_t (*val)[NV];
  size_t n_nodes, cap_nodes;
  uint32_t *ctx_node;
  uint8_t *has_stack;
  mp_buf roots; /* the "roots" member, written with the stacks picked */
} page;

static uint32_t str_ix(page *g, const char *s) {
  uint32_t id = mp_map_get_or_put(&g->strings, (uint64_t)(uintptr_t)s,
                                  (uint32_t)g->n_str);
  if (id != MP_MAP_EMPTY) return id;
  MP_VEC_RESERVE(g->str, g->cap_str, g->n_str + 1);
  g->str[g->n_str] = s;
  return (uint32_t)g->n_str++;
}

static void use_frame(page *g, uint32_t f) {
  if (g->frame_ix[f] == UINT32_MAX) g->frame_ix[f] = g->n_frames++;
}

static void values_of(const rpt_ctx *c, uint64_t v[NV]) {
  v[V_BYTES] = c->mib->TotalSize;
  v[V_ALLOCS] = c->mib->AllocCount;
  v[V_LIFE] = c->mib->TotalLifetime;
  v[V_ACC] = c->mib->TotalAccessCount;
  v[V_COLD] = c->verdict == RPT_COLD ? c->mib->TotalSize : 0;
  v[V_HOT] = c->verdict == RPT_HOT ? c->mib->TotalSize : 0;
}

/* ---- the tree ------------------------------------------------------------ */

/* Frames of one function are one node of the tree: sibling boxes of the
 * same function (called from several lines of the caller) would only
 * split it. */
static int same_function(const mp_profile *p, uint32_t a, uint32_t b) {
  return p->frames[a].guid == p->frames[b].guid;
}

static int cmp_root_first(const void *a, const void *b, void *arg) {
  const mp_profile *p = arg;
  const mp_stack *x = &p->stacks[*(const uint32_t *)a];
  const mp_stack *y = &p->stacks[*(const uint32_t *)b];
  const uint32_t *fx = p->stack_frames + x->off, *fy = p->stack_frames + y->off;
  uint32_t i = x->len, j = y->len;
  while (i && j) {
    uint64_t u = p->frames[fx[--i]].guid, w = p->frames[fy[--j]].guid;
    if (u != w) return u < w ? -1 : 1;
  }
  return i ? 1 : j ? -1 : 0;
}

typedef struct open_node {
  uint32_t node;     /* index in the page's tree */
  uint32_t first;    /* first sorted context under it */
  uint64_t v[NV];
} open_node;

static uint32_t push_node(page *g, uint32_t parent, uint32_t frame) {
  MP_VEC_RESERVE(g->parent, g->cap_nodes, g->n_nodes + 1);
  g->frame = mp_xrealloc(g->frame, g->cap_nodes * sizeof *g->frame);
  g->val = mp_xrealloc(g->val, g->cap_nodes * sizeof *g->val);
  g->parent[g->n_nodes] = parent;
  g->frame[g->n_nodes] = frame;
  return (uint32_t)g->n_nodes++;
}

/* Finish the innermost open node: keep it when it is wide enough under
 * some value, else drop it (and its subtree, all after it) and hand its
 * contexts to its parent. */
static void close_node(page *g, open_node *path, size_t depth,
                       const uint32_t *sorted, size_t end, const uint64_t *tot) {
  open_node *o = &path[depth];
  int keep = depth == 0;
  for (int k = 0; k < V_COLD && !keep; k++)
    keep = o->v[k] * MIN_SHARE >= tot[k] && o->v[k];
  if (keep) {
    memcpy(g->val[o->node], o->v, sizeof o->v);
    return;
  }
  g->n_nodes = o->node;
  for (size_t k = o->first; k < end; k++)
    g->ctx_node[sorted[k]] = path[depth - 1].node;
}

static void build_tree(page *g) {
  rpt *r = g->r;
  const mp_profile *p = r->p;
  uint32_t *sorted = mp_xmalloc((r->n_ctx + 1) * sizeof *sorted);
  uint32_t *stack_of = mp_xmalloc((p->n_stacks + 1) * sizeof *stack_of);
  for (size_t i = 0; i < r->n_ctx; i++) {
    sorted[i] = r->ctx[i].stack;
    stack_of[r->ctx[i].stack] = (uint32_t)i;
  }
  qsort_r(sorted, r->n_ctx, sizeof *sorted, cmp_root_first, (void *)p);
  for (size_t i = 0; i < r->n_ctx; i++) sorted[i] = stack_of[sorted[i]];
  free(stack_of);
  uint64_t tot[NV] = {0};
  for (size_t i = 0; i < r->n_ctx; i++) {
    uint64_t v[NV];
    values_of(&r->ctx[i], v);
    for (int k = 0; k < NV; k++) tot[k] += v[k];
  }
  size_t cap_path = 16, depth = 0;
  open_node *path = mp_xcalloc(cap_path, sizeof *path);
  path[0].node = push_node(g, UINT32_MAX, UINT32_MAX);
  const uint32_t *prev = NULL;
  uint32_t prev_len = 0;
  for (size_t k = 0; k < r->n_ctx; k++) {
    const rpt_ctx *c = &r->ctx[sorted[k]];
    const uint32_t *f = mp_stack_frames(p, c->stack);
    uint32_t len = p->stacks[c->stack].len, common = 0;
    while (common < len && common < prev_len &&
           same_function(p, f[len - 1 - common], prev[prev_len - 1 - common]))
      common++;
    while (depth > common) close_node(g, path, depth--, sorted, k, tot);
    for (uint32_t d = common; d < len; d++) {
      MP_VEC_RESERVE(path, cap_path, depth + 2);
      open_node *o = &path[++depth];
      memset(o, 0, sizeof *o);
      o->node = push_node(g, path[depth - 1].node, f[len - 1 - d]);
      o->first = (uint32_t)k;
    }
    uint64_t v[NV];
    values_of(c, v);
    for (size_t d = 0; d <= depth; d++)
      for (int j = 0; j < NV; j++) path[d].v[j] += v[j];
    g->ctx_node[sorted[k]] = path[depth].node;
    prev = f;
    prev_len = len;
  }
  while (depth > 0) close_node(g, path, depth--, sorted, r->n_ctx, tot);
  close_node(g, path, 0, sorted, r->n_ctx, tot);
  for (size_t n = 1; n < g->n_nodes; n++) use_frame(g, g->frame[n]);
  free(path);
  free(sorted);
}

/* ---- JSON ---------------------------------------------------------------- */

static void num_array(mp_buf *o, const char *key, const uint64_t *v,
                      size_t stride, size_t n, int first) {
  mp_buf_printf(o, "%s\"%s\":[", first ? "" : ",", key);
  for (size_t i = 0; i < n; i++) {
    if (i) mp_buf_u8(o, ',');
    rpt_put_u64(o, v[i * stride]);
  }
  mp_buf_u8(o, ']');
}

static void u32_array(mp_buf *o, const char *key, const uint32_t *v, size_t n,
                      const uint32_t *map) {
  mp_buf_printf(o, ",\"%s\":[", key);
  for (size_t i = 0; i < n; i++) {
    if (i) mp_buf_u8(o, ',');
    uint32_t x = map && v[i] != UINT32_MAX ? map[v[i]] : v[i];
    if (x == UINT32_MAX)
      mp_buf_printf(o, "-1");
    else
      rpt_put_u64(o, x);
  }
  mp_buf_u8(o, ']');
}

static void tree_json(page *g) {
  mp_buf *o = g->out;
  mp_buf_printf(o, "\"tree\":{");
  num_array(o, "bytes", &g->val[0][V_BYTES], NV, g->n_nodes, 1);
  num_array(o, "allocs", &g->val[0][V_ALLOCS], NV, g->n_nodes, 0);
  num_array(o, "life", &g->val[0][V_LIFE], NV, g->n_nodes, 0);
  num_array(o, "acc", &g->val[0][V_ACC], NV, g->n_nodes, 0);
  num_array(o, "cold", &g->val[0][V_COLD], NV, g->n_nodes, 0);
  num_array(o, "hot", &g->val[0][V_HOT], NV, g->n_nodes, 0);
  u32_array(o, "parent", g->parent, g->n_nodes, NULL);
  u32_array(o, "frame", g->frame, g->n_nodes, g->frame_ix);
  mp_buf_printf(o, "}");
}

/* Full stacks for the contexts ranked near the top by some key. */
static void pick_stacks(page *g) {
  static const rpt_key keys[] = {RPT_BYTES, RPT_ALLOCS, RPT_LIFETIME,
                                 RPT_DENSITY, RPT_ACCESSES};
  rpt *r = g->r;
  for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
    uint32_t *ord = rpt_order(r, keys[k]);
    size_t n = k == 0 ? STACKS_TOP : STACKS_OTHER;
    for (size_t i = 0; i < n && i < r->n_ctx; i++) g->has_stack[ord[i]] = 1;
    free(ord);
  }
  if (r->p->temporaries) { /* the page's temporary-allocations table */
    size_t n;
    uint32_t *ord = rpt_temporaries_order(r, &n);
    for (size_t i = 0; i < n && i < STACKS_OTHER; i++) g->has_stack[ord[i]] = 1;
    free(ord);
  }
  rpt_write_roots_json(r, &g->roots, g->has_stack); /* its contexts */
  for (size_t i = 0; i < r->n_ctx; i++) {
    const uint32_t *f = mp_stack_frames(r->p, r->ctx[i].stack);
    use_frame(g, f[0]);
    if (g->has_stack[i])
      for (uint32_t j = 0; j < r->p->stacks[r->ctx[i].stack].len; j++)
        use_frame(g, f[j]);
  }
}

static void ctx_json(page *g) {
  rpt *r = g->r;
  mp_buf *o = g->out;
  size_t n = r->n_ctx;
  uint64_t *v = mp_xmalloc((n + 1) * 8);
  mp_buf_printf(o, ",\"ctx\":{");
  static const rpt_key keys[] = {RPT_BYTES, RPT_ALLOCS, RPT_LIFETIME,
                                 RPT_DENSITY, RPT_ACCESSES};
  static const char *const names[] = {"bytes", "allocs", "life", "dens", "acc"};
  for (size_t k = 0; k < 5; k++) {
    for (size_t i = 0; i < n; i++) v[i] = rpt_value(&r->ctx[i], keys[k]);
    num_array(o, names[k], v, 1, n, k == 0);
  }
  if (mp_max_interval(r->p)) { /* sampled: each context's 95% range, in % */
    for (size_t i = 0; i < n; i++) {
      double e = rpt_sampling_error(r, &r->ctx[i]);
      v[i] = e < 0 ? 0 : e >= 9.995 ? 1000 : (uint64_t)(e * 100 + 0.5);
    }
    num_array(o, "err", v, 1, n, 0);
  }
  if (r->p->temporaries) { /* the runtime's temporary allocations */
    for (size_t i = 0; i < n; i++) v[i] = mp_temporaries(r->p, r->ctx[i].stack);
    num_array(o, "tmp", v, 1, n, 0);
    size_t nt;
    uint32_t *ord = rpt_temporaries_order(r, &nt);
    u32_array(o, "tmpOrder", ord, nt, NULL);
    free(ord);
  }
  for (size_t i = 0; i < n; i++)
    v[i] = r->ctx[i].verdict |
           (r->sites[r->ctx[i].site].attr & (RPT_AMBIGUOUS | RPT_UNMATCHED));
  num_array(o, "v", v, 1, n, 0);
  mp_buf_printf(o, ",\"pool\":[");
  for (size_t i = 0, k = 0; i < n; i++)
    if (r->ctx[i].eh_pool) {
      mp_buf_printf(o, "%s", k++ ? "," : "");
      rpt_put_u64(o, i);
    }
  mp_buf_u8(o, ']');
  u32_array(o, "node", g->ctx_node, n, NULL);
  mp_buf_printf(o, ",\"leaf\":[");
  for (size_t i = 0; i < n; i++) {
    if (i) mp_buf_u8(o, ',');
    rpt_put_u64(o, g->frame_ix[mp_stack_frames(r->p, r->ctx[i].stack)[0]]);
  }
  mp_buf_printf(o, "],\"stacks\":{");
  int first = 1;
  for (size_t i = 0; i < n; i++) {
    if (!g->has_stack[i]) continue;
    mp_buf_printf(o, "%s\"%zu\":[", first ? "" : ",", i);
    first = 0;
    const uint32_t *f = mp_stack_frames(r->p, r->ctx[i].stack);
    for (uint32_t j = 0; j < r->p->stacks[r->ctx[i].stack].len; j++) {
      if (j) mp_buf_u8(o, ',');
      rpt_put_u64(o, g->frame_ix[f[j]]);
    }
    mp_buf_u8(o, ']');
  }
  mp_buf_printf(o, "}}");
  free(v);
}

static void frames_json(page *g) {
  rpt *r = g->r;
  mp_buf *o = g->out;
  uint32_t *model = mp_xmalloc((g->n_frames + 1) * sizeof *model);
  for (size_t f = 0; f < r->p->n_frames; f++)
    if (g->frame_ix[f] != UINT32_MAX) model[g->frame_ix[f]] = (uint32_t)f;
  uint64_t *v = mp_xmalloc((g->n_frames + 1) * 8);
  mp_buf_printf(o, ",\"frames\":{");
  for (uint32_t i = 0; i < g->n_frames; i++)
    v[i] = str_ix(g, rpt_frame_name(r, model[i]));
  num_array(o, "name", v, 1, g->n_frames, 1);
  mp_buf_printf(o, ",\"file\":[");
  for (uint32_t i = 0; i < g->n_frames; i++) {
    const char *file = rpt_frame_file(r, model[i]);
    if (i) mp_buf_u8(o, ',');
    if (file)
      rpt_put_u64(o, str_ix(g, file));
    else
      mp_buf_printf(o, "-1");
  }
  mp_buf_u8(o, ']');
  for (uint32_t i = 0; i < g->n_frames; i++) v[i] = rpt_frame_line(r, model[i]);
  num_array(o, "line", v, 1, g->n_frames, 0);
  for (uint32_t i = 0; i < g->n_frames; i++) v[i] = rpt_frame_column(r, model[i]);
  num_array(o, "col", v, 1, g->n_frames, 0);
  for (uint32_t i = 0; i < g->n_frames; i++) v[i] = r->p->frames[model[i]].is_inline;
  num_array(o, "inl", v, 1, g->n_frames, 0);
  mp_buf_printf(o, "},\"strings\":[");
  for (size_t i = 0; i < g->n_str; i++) {
    mp_buf_printf(o, "%s\"", i ? "," : "");
    rpt_json_str(o, g->str[i]);
    mp_buf_u8(o, '"');
  }
  mp_buf_u8(o, ']');
  free(v);
  free(model);
}

/* The page's table column for each --sort key. */
static const char *const table_sort[] = {"bytes", "allocs", "avglife", "density",
                                         "acc"};

static void summary_json(page *g) {
  rpt *r = g->r;
  const rpt_summary *s = &r->sum;
  const rpt_clang_opts *c = &r->opts.clang;
  mp_buf_printf(g->out,
                ",\"flags\":{\"names\":%d,\"accesses\":%d,\"lifetime\":%d,"
                "\"verdicts\":%d,\"noAccess\":%d,\"uninstrumented\":%d},"
                "\"summary\":{\"contexts\":%" PRIu64 ",\"sites\":%" PRIu64
                ",\"allocs\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"lifetime\":%" PRIu64
                ",\"accesses\":%" PRIu64 ",\"bytesCold\":%" PRIu64
                ",\"bytesNotcold\":%" PRIu64 ",\"bytesHot\":%" PRIu64
                ",\"bytesAmbiguous\":%" PRIu64 ",\"neverAccessedAllocs\":%" PRIu64
                ",\"neverAccessedBytes\":%" PRIu64 ",\"shortLivedAllocs\":%" PRIu64
                ",\"shortLivedBytes\":%" PRIu64 ",\"siteCold\":%" PRIu64
                ",\"siteNotcold\":%" PRIu64 ",\"siteHot\":%" PRIu64
                ",\"siteAmbiguous\":%" PRIu64 ",\"siteUnmatched\":%" PRIu64
                ",\"bytesUnmatched\":%" PRIu64 ",\"mibCold\":%" PRIu64
                ",\"mibNotcold\":%" PRIu64 "},"
                "\"clang\":{\"coldDensity\":%g,\"coldLifetime\":%u,"
                "\"hotDensity\":%u,\"hotHints\":%d},\"sort\":\"%s\"",
                r->has_names, r->has_accesses && rpt_accesses_meaningful(r),
                r->has_lifetime, rpt_verdicts_known(r) && rpt_accesses_meaningful(r),
                r->no_access_seen, !rpt_accesses_meaningful(r),
                s->contexts, s->sites, s->allocs, s->bytes, s->lifetime,
                s->accesses, s->bytes_cold, s->bytes_notcold, s->bytes_hot,
                s->bytes_ambiguous, s->never_accessed_allocs,
                s->never_accessed_bytes, s->short_lived_allocs,
                s->short_lived_bytes, s->site_cold, s->site_notcold,
                s->site_hot, s->site_ambiguous, s->site_unmatched,
                s->bytes_unmatched, s->mib_cold, s->mib_notcold,
                (double)c->lifetime_access_density_cold, c->ave_lifetime_cold,
                c->min_ave_lifetime_density_hot, c->use_hot_hints,
                table_sort[r->opts.sort]);
  /* libstdc++'s exception pool: its contexts' allocations and bytes, and
   * what a timeline found of it outside the contexts (report_pool.c) */
  const rpt_timeline *tl = r->tl;
  mp_buf_printf(g->out, ",\"pool\":{\"allocs\":%" PRIu64 ",\"bytes\":%" PRIu64
                        ",\"unnamedAllocs\":%" PRIu64 ",\"unnamedBytes\":%" PRIu64
                        ",\"what\":\"" RPT_EH_POOL_NAME "\",\"why\":\"" RPT_EH_POOL_WHY "\"}",
                s->pool_allocs, s->pool_bytes, tl ? tl->pool_unnamed_blocks : 0,
                tl ? tl->pool_unnamed_bytes : 0);
  /* how the profile was recorded: the page's banners */
  char note[RPT_NOTE_SIZE];
  const char *sampled = rpt_sampled_note(r->p, note, sizeof note);
  const char *uninstr = rpt_uninstrumented_note(r->p);
  mp_buf_printf(g->out, ",\"recorded\":{\"sampled\":\"");
  rpt_json_str(g->out, sampled ? sampled : "");
  mp_buf_printf(g->out, "\",\"uninstrumented\":\"");
  rpt_json_str(g->out, uninstr ? uninstr : "");
  mp_buf_printf(g->out, "\"}");
  /* the programs the inputs profiled: a row of the summary */
  mp_buf_printf(g->out, ",\"programs\":{\"n\":%zu,\"names\":\"", r->p->n_programs);
  rpt_programs(r->p, g->out, 1);
  mp_buf_printf(g->out, "\"}");
}

/* Old bytes of each context (-1: new) and the largest gone contexts. */
static void base_json(page *g) {
  rpt *r = g->r, *b = r->base;
  mp_buf *o = g->out;
  mp_buf_printf(o, ",\"base\":{\"name\":\"");
  rpt_json_str(o, r->opts.base);
  mp_buf_printf(o, "\",\"bytes\":%" PRIu64 ",\"allocs\":%" PRIu64
                   ",\"contexts\":%" PRIu64 ",\"old\":[",
                b->sum.bytes, b->sum.allocs, b->sum.contexts);
  for (size_t i = 0; i < r->n_ctx; i++) {
    if (i) mp_buf_u8(o, ',');
    if (r->ctx[i].base_match)
      rpt_put_u64(o, b->ctx[r->ctx[i].base_match - 1].mib->TotalSize);
    else
      mp_buf_printf(o, "-1");
  }
  uint64_t gone = 0, gone_bytes = 0;
  for (size_t j = 0; j < b->n_ctx; j++)
    if (!b->ctx[j].base_match) gone++, gone_bytes += b->ctx[j].mib->TotalSize;
  mp_buf_printf(o, "],\"gone\":%" PRIu64 ",\"goneBytes\":%" PRIu64 ",\"goneTop\":[",
                gone, gone_bytes);
  uint32_t *ord = rpt_order(b, RPT_BYTES);
  size_t shown = 0;
  char loc[600];
  for (size_t i = 0; i < b->n_ctx && shown < 50; i++) {
    const rpt_ctx *c = &b->ctx[ord[i]];
    if (c->base_match) continue;
    uint32_t f0 = mp_stack_frames(b->p, c->stack)[0];
    mp_buf_printf(o, "%s{\"bytes\":%" PRIu64 ",\"name\":\"", shown++ ? "," : "",
                  c->mib->TotalSize);
    rpt_json_str(o, rpt_frame_name(b, f0));
    mp_buf_printf(o, "\",\"loc\":\"");
    rpt_json_str(o, rpt_frame_loc(b, f0, loc, sizeof loc));
    mp_buf_printf(o, "\"}");
  }
  mp_buf_printf(o, "]}");
  free(ord);
}

void rpt_write_html(rpt *r, mp_buf *out) {
  page g;
  memset(&g, 0, sizeof g);
  g.r = r;
  g.out = out;
  mp_map_init(&g.strings, 1);
  g.frame_ix = mp_xmalloc((r->p->n_frames + 1) * sizeof *g.frame_ix);
  memset(g.frame_ix, 0xff, (r->p->n_frames + 1) * sizeof *g.frame_ix);
  g.ctx_node = mp_xmalloc((r->n_ctx + 1) * sizeof *g.ctx_node);
  g.has_stack = mp_xcalloc(r->n_ctx + 1, 1);
  build_tree(&g);
  pick_stacks(&g);
  mp_buf_put(out, report_page_head, report_page_head_len);
  mp_buf_printf(out, "{");
  rpt_write_timeline_json(r, out); /* "tl":{...}, when there are timelines */
  tree_json(&g);
  ctx_json(&g);
  summary_json(&g);
  if (g.roots.len) mp_buf_put(out, g.roots.data, g.roots.len);
  if (r->base) base_json(&g);
  frames_json(&g); /* last: the others named the strings it lists */
  mp_buf_printf(out, "}");
  mp_buf_put(out, report_page_tail, report_page_tail_len);
  mp_map_free(&g.strings);
  free(g.str);
  free(g.frame_ix);
  free(g.parent);
  free(g.frame);
  free(g.val);
  free(g.ctx_node);
  free(g.has_stack);
  mp_buf_free(&g.roots);
}
