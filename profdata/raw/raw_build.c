/* raw_build.c - the first half of adding a validated, keyed raw profile
 * (raw.c, raw_keys.c) to the profile: its call stacks.  PCs are
 * symbolized once each, filtered, and turned into model stacks and queued
 * call sites exactly as LLVM's RawMemProfReader does
 * (docs/memprof-profdata.md, "Raw profiles"); raw_mibs.c then adds the MIBs and the call sites.
 *
 * A reader (mp_raw_reader) lives for a whole merge.  Every call stack comes
 * normalized (raw_keys.c: module and link-time address of each PC), and a
 * cache keyed by that (stack_cache.c) remembers its model stack and the
 * functions its alloc sites belong to, so a context already seen costs one
 * lookup here.  Each (module, address) is symbolized once per reader.  The
 * call sites a PC contributes depend only on the PC (its frame list) and
 * on whether it is the allocation frame, so they are queued once per PC
 * and role for the whole merge; queueing them again would only add sites
 * that already exist.  Stacks go in batches whose memory accesses (cache
 * entries, and for new stacks their slots in the profile's stack table)
 * are started before the stacks are resolved in order.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/guid.h"
#include "common/io.h"
#include "include/internal/memprof_format.h"
#include "raw_internal.h"
#include "stack_cache.h"

#define PC_DROPPED (UINT32_MAX - 1) /* MP_MAP_EMPTY means "absent" */

typedef struct pc_info {
  uint32_t first, n; /* frame ids in r->frame_ids */
  uint32_t stack;    /* this PC's frame list as a model stack */
  uint8_t head_done; /* call site of frame 0 queued (PC not the leaf) */
  uint8_t tail_done; /* call sites of frames 1..n-1 queued */
  uint8_t leaf_call; /* LEAF_*: what the probe said of it as a leaf */
} pc_info;

enum { LEAF_UNKNOWN, LEAF_ALLOC, LEAF_OTHER };

/* A direct-mapped memo in front of the per-module PC maps: new stacks look
 * up a few hundred thousand PCs per file, but only hundreds or thousands
 * are distinct, and a hit here costs one load and no call.  Most PCs end
 * up "settled": one frame, whose call sites are queued in both roles.
 * Such a PC's stack contribution is that frame alone, so the memo keeps it
 * and a hit needs neither the PC's info nor its frame list (two more
 * dependent loads per PC of every new stack).  Settling only ever happens
 * once per PC, so the memo can never hold a stale frame.
 *
 * The key is (module << 48 | address); a PC whose address or module does
 * not fit is not memoized. */
#define PC_MEMO_BITS 12
#define MEMO_ADDR_BITS 48
#define MEMO_NO_FRAME UINT32_MAX /* not settled (yet) */
typedef struct pc_memo {
  uint64_t key; /* UINT64_MAX: empty */
  uint32_t idx;
  uint32_t frame; /* the one frame of a settled PC, or MEMO_NO_FRAME */
} pc_memo;

struct mp_raw_reader {
  mp_profile *p;
  msym_ctx *sym;
  const msym_module **mods;
  size_t n_mods;
  size_t n_given; /* mp_raw_reader_given */
  mp_raw_leaf_probe probe; /* mp_raw_reader_probe */
  void *probe_ctx;
  mp_map *pc_maps; /* per module: vaddr -> index into pcs */
  pc_memo *memo;
  pc_info *pcs;
  size_t n_pcs, cap_pcs;
  uint32_t *frame_ids;
  size_t n_frame_ids, cap_frame_ids;
  stack_cache cache; /* normalized stack key -> model stack, alloc sites */
  /* scratch for the stack being built */
  uint32_t *pcl; /* its surviving PCs, as indexes into pcs */
  size_t cap_pcl;
  uint32_t *cs; /* its call stack, as frame ids */
  size_t cap_cs;
  uint32_t *pre; /* frames of the new stacks of a batch */
  size_t n_pre, cap_pre;
  uint64_t *guids; /* the alloc-site GUIDs of the stack being added */
  size_t cap_guids;
  size_t expect; /* raw files to come (a hint; 0: unknown) */
  raw_file *cur;  /* the file whose stacks are being added */
  raw_mib_ctx mibs; /* raw_mibs.c's */
};

typedef struct builder {
  raw_file *f;
  mp_raw_reader *r;
} builder;

mp_raw_reader *mp_raw_reader_new(mp_profile *p, msym_ctx *sym) {
  mp_raw_reader *r = mp_xcalloc(1, sizeof *r);
  r->p = p;
  r->sym = sym;
  r->n_mods = sym ? msym_num_modules(sym) : 0;
  r->n_given = r->n_mods;
  r->mods = mp_xcalloc(r->n_mods + 1, sizeof *r->mods);
  r->pc_maps = mp_xcalloc(r->n_mods + 1, sizeof *r->pc_maps);
  for (size_t i = 0; i < r->n_mods; i++) {
    r->mods[i] = msym_module_at(sym, i);
    mp_map_init(&r->pc_maps[i], 1);
  }
  r->memo = mp_xmalloc(sizeof *r->memo << PC_MEMO_BITS);
  memset(r->memo, 0xff, sizeof *r->memo << PC_MEMO_BITS);
  sc_init(&r->cache);
  r->mibs = (raw_mib_ctx){p, &r->cache, NULL, 0};
  return r;
}

raw_mib_ctx *raw_reader_mib_ctx(mp_raw_reader *r) { return &r->mibs; }

void raw_reader_modules(const mp_raw_reader *r, msym_ctx **sym,
                        const msym_module *const **mods, size_t *n_mods,
                        size_t *n_given) {
  *sym = r->sym;
  *mods = r->mods;
  *n_mods = r->n_mods;
  *n_given = r->n_given;
}

void mp_raw_reader_given(mp_raw_reader *r, size_t n) {
  if (n < r->n_mods) r->n_given = n;
}

void mp_raw_reader_probe(mp_raw_reader *r, mp_raw_leaf_probe probe,
                         void *ctx) {
  r->probe = probe;
  r->probe_ctx = ctx;
}

void mp_raw_reader_free(mp_raw_reader *r) {
  if (!r) return;
  for (size_t i = 0; i < r->n_mods; i++) mp_map_free(&r->pc_maps[i]);
  free(r->pc_maps);
  free(r->memo);
  free(r->mods);
  free(r->pcs);
  free(r->frame_ids);
  sc_free(&r->cache);
  free(r->pcl);
  free(r->cs);
  free(r->pre);
  free(r->guids);
  free(r->mibs.hist);
  free(r);
}

/* ---- one PC -------------------------------------------------------------- */

/* LLVM's runtime files, and ours (runtime/<layer>/rt_*.c), never belong in a
 * profile: they are the allocator, not the program. */
static int is_runtime_file(const char *path) {
  if (!path) return 0;
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  if (!strcmp(base, "memprof_malloc_linux.cpp") ||
      !strcmp(base, "memprof_interceptors.cpp") ||
      !strcmp(base, "memprof_new_delete.cpp"))
    return 1;
  if (strncmp(base, "rt_", 3) != 0) return 0;
  /* our runtime's files: runtime/rt_*.c, or runtime/<layer>/rt_*.c */
  const char *end = base - 1; /* the '/' before the file's name */
  for (int up = 0; up < 2 && end > path; up++) {
    const char *dir = end;
    while (dir > path && dir[-1] != '/') dir--;
    if (end - dir == 7 && !strncmp(dir, "runtime", 7)) return 1;
    end = dir - 1;
  }
  return 0;
}

static uint32_t intern_sym_frame(mp_raw_reader *b, const msym_frame *fr,
                                 int is_inline) {
  mp_frame f = {
      .guid = mp_guid_of_name(fr->name, strlen(fr->name)),
      .line_offset = fr->line - fr->decl_line, /* u32 wrap, as LLVM */
      .column = fr->column,
      .is_inline = (uint8_t)is_inline,
  };
  uint32_t id = mp_intern_frame(b->p, &f);
  mp_frame_sym s = {
      .name = mp_intern_string(b->p, fr->name, strlen(fr->name)),
      .file = fr->file ? mp_intern_string(b->p, fr->file, strlen(fr->file))
                       : MP_NO_STRING,
      .line = fr->line,
      .column = fr->column,
      .discriminator = fr->discriminator,
  };
  mp_set_frame_sym(b->p, id, &s);
  return id;
}

static int symbolize_pc(mp_raw_reader *r, size_t mi, uint64_t vaddr,
                        uint32_t *out, mp_err *err) {
  const msym_frame *fr;
  size_t n;
  mp_err se;
  if (msym_symbolize(r->sym, r->mods[mi], vaddr, &fr, &n, &se) != 0)
    return mp_fail(err, "symbolizing address 0x%" PRIx64 " of %s: %s", vaddr,
                   r->mods[mi]->path, se.msg);
  if (n == 0 || is_runtime_file(fr[0].file) || n > UINT32_MAX / 2) {
    *out = PC_DROPPED;
    return 0;
  }
  MP_VEC_RESERVE(r->frame_ids, r->cap_frame_ids, r->n_frame_ids + n);
  pc_info info = {(uint32_t)r->n_frame_ids, (uint32_t)n, 0, 0, 0, LEAF_UNKNOWN};
  for (size_t i = 0; i < n; i++)
    r->frame_ids[r->n_frame_ids++] = intern_sym_frame(r, &fr[i], i + 1 != n);
  info.stack = mp_intern_stack(r->p, r->frame_ids + info.first, info.n);
  MP_VEC_RESERVE(r->pcs, r->cap_pcs, r->n_pcs + 1);
  r->pcs[r->n_pcs] = info;
  *out = (uint32_t)r->n_pcs++;
  return 0;
}

/* The frame a settled PC contributes, else MEMO_NO_FRAME. */
static uint32_t settled_frame(const mp_raw_reader *r, uint32_t idx) {
  if (idx == PC_DROPPED) return MEMO_NO_FRAME;
  const pc_info *pi = &r->pcs[idx];
  return pi->n == 1 && pi->head_done && pi->tail_done
             ? r->frame_ids[pi->first]
             : MEMO_NO_FRAME;
}

/* A memo miss: the module's map, or the symbolizer (each (module,
 * address) is symbolized once per reader), or with `pure` 1 instead of
 * symbolizing.  Kept out of line so that the hit path stays small. */
static __attribute__((noinline)) int
resolve_pc_slow(mp_raw_reader *r, size_t mi, uint64_t vaddr, pc_memo *m,
                uint64_t key, uint32_t *out, mp_err *err, int pure) {
  uint32_t hit = mp_map_get(&r->pc_maps[mi], vaddr);
  if (hit != UINT32_MAX) {
    *out = hit;
  } else {
    if (pure) return 1;
    if (symbolize_pc(r, mi, vaddr, out, err) != 0) return -1;
    mp_map_put(&r->pc_maps[mi], vaddr, *out);
  }
  if (m) *m = (pc_memo){key, *out, settled_frame(r, *out)};
  return 0;
}

/* (module, address) -> index into r->pcs, or PC_DROPPED; *frame: the
 * memo's frame for it (MEMO_NO_FRAME: look at its info), *slot: its memo
 * slot (NULL: not memoized). */
static inline __attribute__((always_inline)) int
resolve_pc(mp_raw_reader *r, size_t mi, uint64_t vaddr, uint32_t *out,
           uint32_t *frame, pc_memo **slot, mp_err *err, int pure) {
  *frame = MEMO_NO_FRAME;
  *slot = NULL;
  if (__builtin_expect((vaddr >> MEMO_ADDR_BITS) != 0 ||
                           mi >= (1u << (64 - MEMO_ADDR_BITS)) - 1,
                       0))
    return resolve_pc_slow(r, mi, vaddr, NULL, 0, out, err, pure);
  uint64_t key = vaddr | (uint64_t)mi << MEMO_ADDR_BITS;
  pc_memo *m = &r->memo[(key * 0x9e3779b97f4a7c15ULL) >> (64 - PC_MEMO_BITS)];
  *slot = m;
  if (__builtin_expect(m->key == key, 1)) {
    *out = m->idx;
    *frame = m->frame;
    return 0;
  }
  return resolve_pc_slow(r, mi, vaddr, m, key, out, err, pure);
}

/* ---- one stack ----------------------------------------------------------- */

static void queue_call(mp_raw_reader *r, uint32_t frame, uint32_t stack) {
  raw_file *f = r->cur;
  MP_VEC_RESERVE(f->calls, f->cap_calls, f->n_calls + 1);
  f->calls[f->n_calls++] = (pending_call){r->p->frames[frame].guid, stack};
}

/* Each surviving PC's frame list is a call site of every function in it,
 * except the allocation frame itself. */
static void queue_calls(mp_raw_reader *r, const uint32_t *pcl, size_t n) {
  for (size_t k = 0; k < n; k++) {
    pc_info *pi = &r->pcs[pcl[k]];
    const uint32_t *fr = r->frame_ids + pi->first;
    if (k > 0 && !pi->head_done) {
      queue_call(r, fr[0], pi->stack);
      pi->head_done = 1;
    }
    if (!pi->tail_done) {
      for (uint32_t j = 1; j < pi->n; j++) queue_call(r, fr[j], pi->stack);
      pi->tail_done = 1;
    }
  }
}

/* The frames of a key (its surviving PCs' frames, leaf first) into r->cs,
 * those PCs into r->pcl; *queue: some PC still has call sites to queue.
 * Returns -1 on error, 1 (only when `pure`) if a PC would need symbolizing
 * first, else 0.  A pure call changes nothing but the PC memo. */
static inline __attribute__((always_inline)) int
key_frames_as(mp_raw_reader *r, const uint32_t *key, size_t len,
              size_t *n_cs_out, size_t *n_pcl, int *queue_out, mp_err *err,
              const int pairs, const int pure) {
  MP_VEC_RESERVE(r->pcl, r->cap_pcl, len + 1);
  MP_VEC_RESERVE(r->cs, r->cap_cs, len + 1); /* mostly one frame per PC */
  uint32_t *pcl = r->pcl, *cs = r->cs;
  size_t n = 0, n_cs = 0;
  int queue = 0;
  for (size_t i = 0; i < len;) {
    uint32_t idx = PC_DROPPED;
    size_t mi = pairs ? key[i++] : 0;
    uint64_t off = key[i++];
    if (__builtin_expect(off == KEY_ESCAPE, 0)) {
      off = key[i] | (uint64_t)key[i + 1] << 32;
      i += 2;
    }
    uint64_t vaddr = off + r->mods[mi]->exec_vaddr + 1;
    uint32_t frame;
    pc_memo *slot;
    int rc = resolve_pc(r, mi, vaddr, &idx, &frame, &slot, err, pure);
    if (rc != 0) return rc;
    if (idx == PC_DROPPED) continue;
    if (__builtin_expect(frame != MEMO_NO_FRAME, 1)) {
      /* settled: nothing to queue, one frame (n_cs is at most
       * UINT32_MAX + 1, and cs has room for one frame per PC) */
      pcl[n++] = idx;
      if (n_cs + 1 > UINT32_MAX) {
        n_cs = (size_t)UINT32_MAX + 1;
        continue;
      }
      if (n_cs + 1 > r->cap_cs) {
        MP_VEC_RESERVE(r->cs, r->cap_cs, n_cs + 1);
        cs = r->cs;
      }
      cs[n_cs++] = frame;
      continue;
    }
    if (slot) /* settled since it was memoized? */
      slot->frame = settled_frame(r, idx);
    const pc_info *pi = &r->pcs[idx]; /* after resolve_pc: it may grow
                                         pcs and frame_ids */
    queue |= !pi->tail_done || (n > 0 && !pi->head_done);
    pcl[n++] = idx;
    if (n_cs + pi->n > UINT32_MAX) { /* not a stack: still resolve the
                                        rest, for the same errors */
      n_cs = (size_t)UINT32_MAX + 1;
      continue;
    }
    if (n_cs + pi->n > r->cap_cs) {
      MP_VEC_RESERVE(r->cs, r->cap_cs, n_cs + pi->n);
      cs = r->cs;
    }
    const uint32_t *fr = r->frame_ids + pi->first;
    if (pi->n == 1)
      cs[n_cs] = fr[0];
    else
      memcpy(cs + n_cs, fr, (size_t)pi->n * 4);
    n_cs += pi->n;
  }
  *n_cs_out = n_cs;
  *n_pcl = n;
  *queue_out = queue;
  return 0;
}

/* Four copies of the loop above, each with `pairs` and `pure` constants. */
static int key_frames(mp_raw_reader *r, const uint32_t *key, size_t len,
                      size_t *n_cs, size_t *n_pcl, int *queue, mp_err *err,
                      int pure) {
  if (pure)
    return r->n_mods > 1
               ? key_frames_as(r, key, len, n_cs, n_pcl, queue, err, 1, 1)
               : key_frames_as(r, key, len, n_cs, n_pcl, queue, err, 0, 1);
  return r->n_mods > 1
             ? key_frames_as(r, key, len, n_cs, n_pcl, queue, err, 1, 0)
             : key_frames_as(r, key, len, n_cs, n_pcl, queue, err, 0, 0);
}

/* The model stack of a key seen for the first time (SC_DROPPED if no PC
 * survives), its call sites queued. */
static int model_stack(mp_raw_reader *r, const uint32_t *key, size_t len,
                       uint32_t *out, mp_err *err) {
  size_t n_cs, n_pcl;
  int queue;
  *out = SC_DROPPED;
  if (key_frames(r, key, len, &n_cs, &n_pcl, &queue, err, 0) != 0) return -1;
  if (n_cs == 0 || n_cs > UINT32_MAX) return 0;
  if (queue) queue_calls(r, r->pcl, n_pcl);
  *out = mp_intern_stack(r->p, r->cs, (uint32_t)n_cs);
  return 0;
}

/* The functions a MIB of `stack` makes alloc sites in, into r->guids: the
 * leaf's and every inline parent's up to and including the first physical
 * frame, each once (inlined recursion must not merge a MIB with itself).
 * Returns how many. */
static uint32_t alloc_guids(mp_raw_reader *r, uint32_t stack) {
  if (stack == SC_DROPPED) return 0;
  const mp_profile *p = r->p;
  const uint32_t *fr = mp_stack_frames(p, stack);
  uint32_t n = p->stacks[stack].len, k = 0;
  MP_VEC_RESERVE(r->guids, r->cap_guids, n + 1);
  for (uint32_t i = 0; i < n; i++) {
    const mp_frame *f = &p->frames[fr[i]];
    int seen = 0;
    for (uint32_t j = 0; j < k && !seen; j++) seen = r->guids[j] == f->guid;
    if (!seen) r->guids[k++] = f->guid;
    if (!f->is_inline) break;
  }
  return k;
}

/* The stacks of a dump's MIBs are resolved in batches: first every lookup
 * of the batch is started with prefetches (the cache is far bigger than
 * the CPU caches and each file hits it in random order), then the stacks
 * are resolved in file order. */
#define MIB_BATCH 32

typedef struct mib_job {
  raw_stack *s;
  uint32_t guess;         /* likely cache entry, for prefetching */
  uint32_t pre_off, pre_n; /* frames of a new stack in r->pre (n 0: none) */
  uint64_t pre_hash;      /* their hash in the profile's stack table */
  uint32_t pre_stack;     /* those frames interned, or SC_NONE */
} mib_job;

static void found_stack(mp_raw_reader *r, raw_stack *s, uint32_t ent) {
  s->ent = ent;
  s->state = sc_ent(&r->cache, ent)->model_stack == SC_DROPPED
                 ? RAW_STACK_DROPPED
                 : RAW_STACK_LIVE;
}

/* Whether the leaf PC of a key (its first element) returns from a call of
 * a function that is not an allocation function (mp_raw_leaf_probe), asked
 * once per PC.  Only a leaf in a given binary is asked: one elsewhere is
 * in a library already. */
static int leaf_calls_other(mp_raw_reader *r, const uint32_t *key,
                            uint32_t len) {
  if (!r->probe || !len) return 0;
  size_t mi = r->n_mods > 1 ? key[0] : 0, i = r->n_mods > 1;
  if (i >= len || mi >= r->n_given) return 0;
  uint64_t off = key[i];
  if (off == KEY_ESCAPE) off = key[i + 1] | (uint64_t)key[i + 2] << 32;
  uint64_t vaddr = off + r->mods[mi]->exec_vaddr + 1;
  uint32_t idx = mp_map_get(&r->pc_maps[mi], vaddr);
  if (idx == MP_MAP_EMPTY || idx == PC_DROPPED) return 0;
  pc_info *pi = &r->pcs[idx];
  if (pi->leaf_call == LEAF_UNKNOWN)
    pi->leaf_call = r->probe(r->probe_ctx, r->mods[mi], vaddr) == 1
                        ? LEAF_OTHER
                        : LEAF_ALLOC;
  return pi->leaf_call == LEAF_OTHER;
}

/* Find (or make) the cache entry of job j's stack, from the frames the
 * batch computed for it if it did.  A new entry's stack whose leaf calls
 * another function is marked as allocated in a library: its first MIB
 * marks the alloc sites, which stay so, so a later file that finds the
 * entry need not mark its stack again. */
static int resolve_stack(builder *b, const mib_job *j, mp_err *err) {
  mp_raw_reader *r = b->r;
  raw_stack *s = j->s;
  const uint32_t *key = b->f->keys + s->key_off;
  uint32_t n = s->key_len;
  uint32_t ent = sc_find(&r->cache, n, s->hash, s->hash2);
  if (ent == SC_NONE) {
    uint32_t stack = j->pre_stack; /* SC_NONE unless the batch interned it */
    if (stack == SC_NONE) {
      if (j->pre_n)
        stack = mp_intern_stack_hashed(r->p, r->pre + j->pre_off, j->pre_n,
                                       j->pre_hash);
      else if (model_stack(r, key, n, &stack, err) != 0)
        return -1;
    }
    uint32_t n_sites = alloc_guids(r, stack);
    if (stack != SC_DROPPED && !s->in_library && leaf_calls_other(r, key, n))
      s->in_library = 1;
    ent = sc_insert(&r->cache, n, s->hash, s->hash2, stack, r->guids,
                    n_sites);
    if (ent == SC_NONE) return mp_fail(err, "too many stacks");
    b->f->n_new++;
  }
  found_stack(r, s, ent);
  return 0;
}

/* Two rounds, each over the whole batch: the home slots of the stacks
 * still to be found, then the entry each probe is likely to meet (header
 * and a site's refs and GUID), or, where none is, the file's key, which a
 * stack met for the first time is resolved from. */
#define ONE_SITE_BYTES 16 /* two u32 refs and a u64 GUID */
static void batch_prefetch(builder *b, mib_job *job, size_t m) {
  const stack_cache *c = &b->r->cache;
  for (size_t j = 0; j < m; j++)
    if (job[j].s->state == RAW_STACK_NEW)
      __builtin_prefetch(sc_home(c, job[j].s->hash));
  for (size_t j = 0; j < m; j++) {
    const raw_stack *s = job[j].s;
    job[j].guess = s->state == RAW_STACK_NEW ? sc_guess(c, s->hash) : SC_NONE;
    if (job[j].guess != SC_NONE)
      raw_prefetch_span(sc_ent(c, job[j].guess),
                        sizeof(stack_ent) + ONE_SITE_BYTES);
    else if (s->state == RAW_STACK_NEW)
      raw_prefetch_span(b->f->keys + s->key_off, 4 * (size_t)s->key_len);
  }
}

/* Interning the computed stacks now, in job order, gives them the ids
 * they would get one by one, as long as no new stack before them needs
 * its PCs symbolized (that interns the PCs' frame lists first): stop at
 * the first such.  (A stack the batch meets twice is interned twice, the
 * second time as the first one's id, as one by one.) */
static void intern_new_stacks(mp_raw_reader *r, mib_job *job, size_t m) {
  mp_profile *p = r->p;
  for (size_t j = 0; j < m; j++) {
    if (job[j].s->state != RAW_STACK_NEW) continue;
    if (!job[j].pre_n) return;
    uint32_t st = mp_intern_stack_hashed(p, r->pre + job[j].pre_off,
                                         job[j].pre_n, job[j].pre_hash);
    job[j].pre_stack = st;
  }
}

/* The batch's stacks met for the first time: found in the cache now (the
 * entries were fetched above) or, when all their PCs are known and their
 * call sites queued, their frames computed and their slot in the
 * profile's stack table fetched, so that interning them in order does
 * not wait for memory.  Nothing else changes here, so the result is that
 * of adding the MIBs one by one. */
static void batch_new_stacks(builder *b, mib_job *job, size_t m) {
  mp_raw_reader *r = b->r;
  r->n_pre = 0;
  for (size_t j = 0; j < m; j++) {
    raw_stack *s = job[j].s;
    job[j].pre_n = 0;
    job[j].pre_stack = SC_NONE;
    if (s->state != RAW_STACK_NEW) continue;
    const uint32_t *key = b->f->keys + s->key_off;
    uint32_t ent = sc_find(&r->cache, s->key_len, s->hash, s->hash2);
    if (ent != SC_NONE) {
      found_stack(r, s, ent);
      continue;
    }
    size_t n_cs, n_pcl;
    int queue;
    mp_err err;
    if (key_frames(r, key, s->key_len, &n_cs, &n_pcl, &queue, &err, 1) != 0 ||
        queue || n_cs == 0 || n_cs > UINT32_MAX)
      continue;
    MP_VEC_RESERVE(r->pre, r->cap_pre, r->n_pre + n_cs);
    memcpy(r->pre + r->n_pre, r->cs, n_cs * 4);
    job[j].pre_off = (uint32_t)r->n_pre;
    job[j].pre_n = (uint32_t)n_cs;
    job[j].pre_hash = mp_stack_hash(r->pre + r->n_pre, (uint32_t)n_cs);
    mp_prefetch_stack(r->p, job[j].pre_hash);
    r->n_pre += n_cs;
  }
  intern_new_stacks(r, job, m);
}

static int resolve_dump(builder *b, const raw_dump *d, size_t *live,
                        mp_err *err) {
  mib_job job[MIB_BATCH];
  for (uint64_t i = 0; i < d->n_mibs;) {
    size_t m = 0;
    for (; m < MIB_BATCH && i < d->n_mibs; m++, i++)
      job[m].s = &b->f->stacks[d->mib_stack[i]];
    batch_prefetch(b, job, m);
    batch_new_stacks(b, job, m);
    for (size_t j = 0; j < m; j++) {
      if (job[j].s->state == RAW_STACK_NEW &&
          resolve_stack(b, &job[j], err) != 0)
        return -1;
      *live += job[j].s->state == RAW_STACK_LIVE;
    }
  }
  return 0;
}

/* Room for the stacks of more files than the first, as a multiple of the
 * first file's: growing by doubling copies the arrays and faults in fresh
 * pages for every size, while room reserved and never used costs address
 * space only (merged runs of one program share most of their contexts).
 * Past RESERVE_EXTRA_MAX bytes of such room only the first file's own is
 * reserved, as address space may be limited (RLIMIT_DATA). */
#define RESERVE_FILES_MAX 4
#define RESERVE_EXTRA_MAX ((size_t)64 << 20)

void mp_raw_reader_expect(mp_raw_reader *r, size_t files) {
  r->expect = files;
}

/* The first file of a merge brings most of its contexts: size the cache,
 * the profile's stacks and its stack index (for the first file: sizing it
 * touches it) once rather than doubling them as it is read.  The cache is
 * sized for later files' stacks too: its slots are 8 bytes, and growing
 * it reads every entry's hash, scattered over its chunks.  A stack has about one frame per key
 * element (a PC outside every module has none). */
static void reserve_first(mp_raw_reader *r, const raw_file *f) {
  if (r->cache.n) return;
  size_t frames = 0;
  for (size_t i = 0; i < f->n_stacks; i++) frames += f->stacks[i].key_len;
  size_t k = r->expect < 1 ? 1
             : r->expect > RESERVE_FILES_MAX ? RESERVE_FILES_MAX
                                             : r->expect;
  size_t bytes = frames * 4 + f->n_stacks * sizeof(mp_stack);
  if (bytes > RESERVE_EXTRA_MAX / k) k = 1;
  sc_reserve(&r->cache, k * f->n_stacks);
  mp_profile_reserve_stacks(r->p, f->n_stacks, k * f->n_stacks, k * frames);
}

/* Nothing symbolized: say why if we know (a missing .dwo), else what to
 * check. */
static int no_frames(const raw_file *f, size_t total, mp_err *err) {
  char why[400];
  for (size_t i = 0; i < f->n_mods; i++)
    if (msym_missing_split_message(f->sym, f->mods[i], why, sizeof why))
      return mp_fail(err,
                     "none of the %zu allocation contexts has a symbolizable "
                     "frame: %s: %s",
                     total, f->mods[i]->path, why);
  return mp_fail(err,
                 "none of the %zu allocation contexts has a symbolizable "
                 "frame (do the profiled binaries have debug info?)",
                 total);
}

static int build(builder *b, mp_err *err) {
  size_t total = 0, live = 0;
  for (size_t d = 0; d < b->f->n_dumps; d++) total += b->f->dumps[d].n_mibs;
  if (!total) return 0; /* nothing allocated: no binary needed */
  reserve_first(b->r, b->f);
  for (size_t d = 0; d < b->f->n_dumps; d++)
    if (resolve_dump(b, &b->f->dumps[d], &live, err) != 0) return -1;
  if (!live) return no_frames(b->f, total, err);
  return 0;
}

int raw_build_stacks(raw_file *f, mp_raw_reader *r, mp_err *err) {
  builder b = {f, r};
  r->cur = f;
  f->n_calls = 0;
  f->n_new = 0;
  int rc = build(&b, err);
  r->cur = NULL;
  /* The MIB half needs only the cache entries: the keys' room goes to the
   * next file prepared instead of a third array held meanwhile. */
  free(f->keys);
  f->keys = NULL;
  return rc;
}

void mp_raw_stack_ids(const mp_raw_reader *r, const mp_raw_file *f,
                      uint64_t **ids, uint32_t **stacks, size_t *n) {
  *ids = mp_xmalloc((f->n_stacks + 1) * sizeof **ids);
  *stacks = mp_xmalloc((f->n_stacks + 1) * sizeof **stacks);
  size_t k = 0;
  for (size_t i = 0; i < f->n_stacks; i++) {
    const raw_stack *s = &f->stacks[i];
    if (s->state == RAW_STACK_NEW) continue; /* no MIB uses it */
    (*ids)[k] = s->id;
    (*stacks)[k++] = s->state == RAW_STACK_LIVE
                         ? sc_ent(&r->cache, s->ent)->model_stack
                         : MP_RAW_NO_FRAMES;
  }
  *n = k;
}
