/* rt_roots_bands.c - the roots census's bands (docs/roots-format.md,
 * section 4.1): the set of roots that reach each shared block, the blocks
 * grouped by set, the roots_bands largest sets kept.
 *
 * The sets are built by the reached passes (rt_roots_mark.c), which run
 * one root at a time in the order of the census's roots: each shared block
 * a pass reaches gains that root.  A set is a node of a trie whose edges
 * are roots in increasing order (node 0: the empty set), so a block holds
 * only its node's number.  Every child of a node that pass r adds is the
 * same node (parent, r), made by the first block of that parent the pass
 * meets and remembered in the parent, so no lookup table is needed.
 *
 * Roots whose reached pass did not run (the reach budget, RR_REACHED_PARTIAL)
 * are in no set.  When the trie would outgrow RR_BAND_NODES_MAX(shared
 * blocks) nodes, or memory runs out, the sets are given up and every
 * shared block counts as "other sets". */
#include "rt_roots_priv.h"
#include "runtime/base/rt_ialloc.h"
#include "runtime/base/rt_libc.h"

/* Nodes allowed for n shared blocks: sets of a few roots, each set's
 * prefixes, and some slack. */
#define RR_BAND_NODES_MAX(n) (4 * (n) + 4096)

typedef struct rr_band_node {
  uint32_t parent, root; /* the set: the parent's and root */
  uint32_t last_pass;    /* the pass (root + 1) that made `child` */
  uint32_t child;        /* the node (this, last_pass - 1) */
} rr_band_node;

static uint32_t new_node(rr_census *c, uint32_t parent, uint32_t root) {
  rr_band_node *n = c->band_nodes.len < c->band_nodes_max
                        ? rr_push(&c->band_nodes, sizeof(rr_band_node))
                        : NULL;
  if (!n)
    return 0;
  *n = (rr_band_node){parent, root, 0, 0};
  return (uint32_t)(c->band_nodes.len - 1);
}

static void give_up(rr_census *c) {
  if (c->band_of)
    rt_ifree(c->band_of, c->n * sizeof(uint32_t));
  c->band_of = NULL;
  rr_vec_free(&c->band_nodes, sizeof(rr_band_node));
}

void rr_bands_begin(rr_census *c) {
  uint64_t shared = 0;
  for (uint64_t i = 0; i < c->n; i++)
    shared += c->blk[i].label == RR_SHARED;
  if (!shared)
    return;
  c->band_nodes_max = RR_BAND_NODES_MAX(shared);
  c->band_of = rt_ialloc(c->n * sizeof(uint32_t));
  if (!c->band_of || new_node(c, 0, 0) != 0 || c->band_nodes.failed) {
    give_up(c);
    return;
  }
  rt_memset(c->band_of, 0, c->n * sizeof(uint32_t));
}

void rr_bands_add(rr_census *c, uint64_t blk, uint32_t root) {
  if (!c->band_of)
    return;
  uint32_t from = c->band_of[blk];
  rr_band_node *n = (rr_band_node *)c->band_nodes.p + from;
  if (n->last_pass != root + 1) {
    uint32_t to = new_node(c, from, root);
    if (!to) {
      give_up(c);
      return;
    }
    n = (rr_band_node *)c->band_nodes.p + from; /* the vector may have moved */
    n->last_pass = root + 1;
    n->child = to;
  }
  c->band_of[blk] = n->child;
}

void rr_bands_free(rr_census *c) { give_up(c); }

/* ---- the largest sets ------------------------------------------------------ */

/* Larger bytes first, then more blocks, then the older node. */
static int before(const rr_band *a, const rr_band *b) {
  if (a->bytes != b->bytes)
    return a->bytes > b->bytes;
  if (a->blocks != b->blocks)
    return a->blocks > b->blocks;
  return a->node < b->node;
}

uint32_t rr_bands_top(const rr_census *c, rr_band *top, uint32_t max) {
  uint64_t n_nodes = c->band_nodes.len;
  if (!c->band_of || !max || n_nodes < 2)
    return 0;
  size_t cap = n_nodes * 2 * sizeof(uint64_t);
  uint64_t *sum = rt_ialloc(cap); /* bytes, blocks per node */
  if (!sum)
    return 0;
  rt_memset(sum, 0, cap);
  for (uint64_t i = 0; i < c->n; i++)
    if (c->blk[i].label == RR_SHARED) {
      uint32_t s = c->band_of[i];
      sum[2 * s] += c->blk[i].size;
      sum[2 * s + 1]++;
    }
  const rr_band_node *nodes = c->band_nodes.p;
  uint32_t k = 0;
  for (uint64_t s = 1; s < n_nodes; s++) {
    if (!sum[2 * s + 1] || !nodes[s].parent) /* no block, or one root */
      continue;
    rr_band b = {(uint32_t)s, sum[2 * s], sum[2 * s + 1]};
    if (k == max && !before(&b, &top[k - 1]))
      continue;
    uint32_t at = k < max ? k++ : k - 1; /* insertion: k is small */
    while (at && before(&b, &top[at - 1])) {
      top[at] = top[at - 1];
      at--;
    }
    top[at] = b;
  }
  rt_ifree(sum, cap);
  return k;
}

uint32_t rr_band_roots(const rr_census *c, uint32_t node, uint32_t *out) {
  const rr_band_node *nodes = c->band_nodes.p;
  uint32_t depth = 0;
  for (uint32_t s = node; s; s = nodes[s].parent)
    depth++;
  uint32_t at = depth;
  for (uint32_t s = node; s; s = nodes[s].parent)
    out[--at] = nodes[s].root;
  return depth;
}
