/* report_pool.c - libstdc++'s emergency exception pool: the block
 * libstdc++'s static initializer allocates before main (the pool
 * __cxa_allocate_exception falls back on when malloc fails), held by a
 * library global for the whole run.  Every C++ program has it live at exit,
 * and it is no leak of the program's: the reports name it and say so.
 *
 * A context is the pool when its allocation frame is the pool's
 * constructor, `(anonymous namespace)::pool::pool` (libstdc++'s eh_alloc.cc,
 * named so with libstdc++'s debug information), or, without it, when every
 * frame is code of libstdc++ that no symbol covers ("libstdc++.so.6+0x...":
 * the constructor is a local function, absent from the stripped library's
 * symbols) or of the dynamic loader's initializers, and every block has
 * the pool's size (72704 bytes on 64-bit libstdc++ 6 up to GCC 12) or was
 * allocated before the runtime's clock started (AllocTimestamp 0: during
 * the libraries' initialization).
 *
 * In the profile of a program linked with the runtime, frames in libstdc++
 * are not symbolized (docs/memprof-profdata.md, "report"), so the pool has
 * no context; its timeline still names its stack id, the process's first
 * (the runtime numbers stacks in the order it first sees them, and the
 * pool is allocated first), holding one block of the pool's size.
 */
#include <math.h>
#include <string.h>

#include "report.h"

#define POOL_BYTES 72704

static int starts_with(const char *s, const char *prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int is_constructor(rpt *r, uint32_t frame) {
  const char *file = rpt_frame_file(r, frame);
  return starts_with(rpt_frame_name(r, frame), "(anonymous namespace)::pool::pool") ||
         (file && ends_with(file, "libsupc++/eh_alloc.cc"));
}

/* Code of libstdc++ without a symbol, or the loader's initializers. */
static int in_startup(rpt *r, uint32_t frame) {
  const char *name = rpt_frame_name(r, frame);
  return (starts_with(name, "libstdc++.so") && strstr(name, "+0x")) ||
         starts_with(name, "ld-linux") || !strcmp(name, "_dl_init") ||
         !strcmp(name, "call_init") || !strcmp(name, "_dl_start_user");
}

static int is_pool(rpt *r, const rpt_ctx *c) {
  const mp_stack *s = &r->p->stacks[c->stack];
  const uint32_t *f = mp_stack_frames(r->p, c->stack);
  if (is_constructor(r, f[0])) return 1;
  for (uint32_t k = 0; k < s->len; k++)
    if (!in_startup(r, f[k])) return 0;
  const mpf_mib *m = c->mib;
  return m->AllocCount && m->MinSize == m->MaxSize &&
         (m->MinSize == POOL_BYTES || m->AllocTimestamp == 0);
}

/* The pool's blocks in context c.  A sampled profile holds estimates: each
 * recorded block of s bytes counts 1/p, p = 1 - exp(-s/R), so one pool of
 * 72704 bytes recorded at R = 512 KiB reads as 7.7 blocks.  The pool's
 * blocks all have one size, so the recorded ones are the estimate times
 * p, rounded: the pool a process has, not an estimate of it. */
static void pool_blocks(const rpt *r, const mpf_mib *m, uint64_t *blocks, uint64_t *bytes) {
  uint64_t R = mp_max_interval(r->p);
  *blocks = m->AllocCount;
  *bytes = m->TotalSize;
  if (!R || !m->AllocCount || m->MinSize != m->MaxSize || !m->MaxSize) return;
  double p = -expm1(-(double)m->MaxSize / (double)R);
  uint64_t n = (uint64_t)llround((double)m->AllocCount * p);
  *blocks = n ? n : 1;
  *bytes = *blocks * m->MaxSize;
}

void rpt_find_eh_pool(rpt *r) {
  for (size_t i = 0; i < r->n_ctx; i++) {
    rpt_ctx *c = &r->ctx[i];
    if (!r->has_names || !is_pool(r, c)) continue;
    c->eh_pool = 1;
    uint64_t blocks, bytes;
    pool_blocks(r, c->mib, &blocks, &bytes);
    r->sum.pool_allocs += blocks;
    r->sum.pool_bytes += bytes;
  }
}

int rpt_eh_pool_unnamed(uint64_t id, uint64_t first_id, uint64_t bytes,
                        uint64_t blocks) {
  return id == first_id && blocks == 1 && bytes == POOL_BYTES;
}
