/* raw_build.c - turning a validated raw profile (raw.c) into records:
 * PCs are translated through their dump's segments into the module with the
 * same build id, symbolized once each, filtered, and turned into alloc sites
 * and call sites exactly as LLVM's RawMemProfReader does
 * (llvm-indexed.md 1.2-1.5).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "io.h"
#include "memprof_format.h"
#include "raw_internal.h"

#define PC_DROPPED (UINT32_MAX - 1) /* UINT32_MAX means "absent" in raw_map */

typedef struct pc_info {
  uint32_t first, n; /* frame ids in b->frame_ids */
  uint32_t stack;    /* this PC's frame list as a model stack */
} pc_info;

typedef struct pending_call {
  uint64_t guid;
  uint32_t stack;
  uint32_t rank; /* first-seen order of guid, as LLVM's MapVector */
  size_t seq;
} pending_call;

typedef struct seg_ref {
  uint64_t start, end;
  size_t module; /* index into b->mods */
} seg_ref;

typedef struct builder {
  raw_file *f;
  mp_profile *p;
  msym_ctx *sym;
  const msym_module **mods;
  size_t n_mods;
  raw_map *pc_maps; /* per module: vaddr -> index into pcs */
  pc_info *pcs;
  size_t n_pcs, cap_pcs;
  uint32_t *frame_ids;
  size_t n_frame_ids, cap_frame_ids;
  seg_ref **segs; /* per dump: the segments whose build id has a module */
  size_t *n_segs;
  uint32_t *cs; /* scratch call stack */
  size_t cap_cs;
  pending_call *calls;
  size_t n_calls, cap_calls;
  raw_map guid_rank;
  uint32_t n_ranks;
  uint64_t *hist;
  size_t cap_hist;
} builder;

/* ---- segments and modules ----------------------------------------------- */

static void hex_build_id(mp_buf *b, const uint8_t *id, size_t n) {
  for (size_t i = 0; i < n; i++) mp_buf_printf(b, "%02x", id[i]);
  if (!n) mp_buf_printf(b, "(none)");
}

static size_t module_index(const builder *b, const msym_module *m) {
  for (size_t i = 0; i < b->n_mods; i++)
    if (b->mods[i] == m) return i;
  return SIZE_MAX;
}

/* Lists what the profile holds and what was given, for the no-match error. */
static int no_binary_error(const builder *b, mp_err *err) {
  mp_buf m = {0};
  mp_buf_printf(&m, "no profiled binary matches the profile;");
  size_t shown = 0;
  for (size_t d = 0; d < b->f->n_dumps && shown < 16; d++) {
    const raw_dump *rd = &b->f->dumps[d];
    for (uint64_t i = 0; i < rd->n_segs && shown < 16; i++) {
      mp_raw_segment s;
      memcpy(&s, rd->segs + i * sizeof s, sizeof s);
      if (d > 0 && i < b->f->dumps[0].n_segs &&
          memcmp(rd->segs + i * sizeof s, b->f->dumps[0].segs + i * sizeof s,
                 sizeof s) == 0)
        continue;
      mp_buf_printf(&m, shown++ ? ", " : " its segments have build ids ");
      hex_build_id(&m, s.build_id, (size_t)s.build_id_size);
    }
  }
  if (!shown) mp_buf_printf(&m, " it lists no segments with a build id");
  if (!b->n_mods) {
    mp_buf_printf(&m, "; no --profiled-binary was given");
  } else {
    mp_buf_printf(&m, "; binaries given:");
    for (size_t i = 0; i < b->n_mods; i++) {
      mp_buf_printf(&m, "%s %s (build id ", i ? "," : "", b->mods[i]->path);
      hex_build_id(&m, b->mods[i]->build_id, b->mods[i]->build_id_len);
      mp_buf_printf(&m, ")");
    }
  }
  mp_buf_u8(&m, 0);
  mp_fail(err, "%s", (char *)m.data);
  mp_buf_free(&m);
  return -1;
}

static int resolve_segments(builder *b, mp_err *err) {
  size_t nd = b->f->n_dumps, matched = 0;
  b->segs = mp_xcalloc(nd, sizeof *b->segs);
  b->n_segs = mp_xcalloc(nd, sizeof *b->n_segs);
  for (size_t d = 0; d < nd; d++) {
    const raw_dump *rd = &b->f->dumps[d];
    b->segs[d] = mp_xcalloc((size_t)rd->n_segs + 1, sizeof(seg_ref));
    for (uint64_t i = 0; i < rd->n_segs; i++) {
      mp_raw_segment s;
      memcpy(&s, rd->segs + i * sizeof s, sizeof s);
      if (!s.build_id_size) continue;
      const msym_module *m =
          b->sym ? msym_find_build_id(b->sym, s.build_id,
                                      (size_t)s.build_id_size)
                 : NULL;
      size_t mi = m ? module_index(b, m) : SIZE_MAX;
      if (mi == SIZE_MAX) continue;
      b->segs[d][b->n_segs[d]++] = (seg_ref){s.start, s.end, mi};
      matched++;
    }
  }
  return matched ? 0 : no_binary_error(b, err);
}

/* ---- one PC -------------------------------------------------------------- */

/* LLVM's runtime files, and ours (runtime/rt_*.c), never belong in a
 * profile: they are the allocator, not the program. */
static int is_runtime_file(const char *path) {
  if (!path) return 0;
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  if (!strcmp(base, "memprof_malloc_linux.cpp") ||
      !strcmp(base, "memprof_interceptors.cpp") ||
      !strcmp(base, "memprof_new_delete.cpp"))
    return 1;
  if (strncmp(base, "rt_", 3) != 0 || base - path < 8) return 0;
  return !strncmp(base - 8, "runtime/", 8) &&
         (base - path == 8 || base[-9] == '/');
}

static uint32_t intern_sym_frame(builder *b, const msym_frame *fr,
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

static int symbolize_pc(builder *b, size_t mi, uint64_t vaddr, uint64_t pc,
                        uint32_t *out, mp_err *err) {
  const msym_frame *fr;
  size_t n;
  msym_err se;
  if (msym_symbolize(b->sym, b->mods[mi], vaddr, &fr, &n, &se) != 0)
    return mp_fail(err, "symbolizing PC 0x%" PRIx64 " (0x%" PRIx64 " in %s): %s",
                   pc, vaddr, b->mods[mi]->path, se.msg);
  if (n == 0 || is_runtime_file(fr[0].file) || n > UINT32_MAX / 2) {
    *out = PC_DROPPED;
    return 0;
  }
  MP_VEC_RESERVE(b->frame_ids, b->cap_frame_ids, b->n_frame_ids + n);
  pc_info info = {(uint32_t)b->n_frame_ids, (uint32_t)n, 0};
  for (size_t i = 0; i < n; i++)
    b->frame_ids[b->n_frame_ids++] = intern_sym_frame(b, &fr[i], i + 1 != n);
  info.stack = mp_intern_stack(b->p, b->frame_ids + info.first, info.n);
  MP_VEC_RESERVE(b->pcs, b->cap_pcs, b->n_pcs + 1);
  b->pcs[b->n_pcs] = info;
  *out = (uint32_t)b->n_pcs++;
  return 0;
}

/* PC -> index into b->pcs, or PC_DROPPED.  Each (module, address) is
 * symbolized once. */
static int resolve_pc(builder *b, uint32_t dump, uint64_t pc, uint32_t *out,
                      mp_err *err) {
  const seg_ref *s = b->segs[dump];
  size_t i = 0;
  while (i < b->n_segs[dump] && !(s[i].start < pc && pc <= s[i].end)) i++;
  if (i == b->n_segs[dump]) {
    *out = PC_DROPPED;
    return 0;
  }
  size_t mi = s[i].module;
  uint64_t vaddr = pc - s[i].start + b->mods[mi]->exec_vaddr;
  uint32_t hit = raw_map_get(&b->pc_maps[mi], vaddr);
  if (hit != UINT32_MAX) {
    *out = hit;
    return 0;
  }
  if (symbolize_pc(b, mi, vaddr, pc, out, err) != 0) return -1;
  raw_map_put(&b->pc_maps[mi], vaddr, *out);
  return 0;
}

/* ---- one stack ----------------------------------------------------------- */

static void add_pending_call(builder *b, uint64_t guid, uint32_t stack) {
  uint32_t rank = raw_map_get(&b->guid_rank, guid);
  if (rank == UINT32_MAX) {
    rank = b->n_ranks++;
    raw_map_put(&b->guid_rank, guid, rank);
  }
  MP_VEC_RESERVE(b->calls, b->cap_calls, b->n_calls + 1);
  b->calls[b->n_calls] = (pending_call){guid, stack, rank, b->n_calls};
  b->n_calls++;
}

/* Symbolize every PC of `s`; the surviving PCs' frames, leaf first, form
 * the call stack.  Each surviving PC's frame list is a call site of every
 * function in it, except the allocation frame itself. */
static int build_stack(builder *b, raw_stack *s, mp_err *err) {
  size_t n_cs = 0;
  int first = 1;
  for (uint64_t i = 0; i < s->n_pcs; i++) {
    uint32_t idx = PC_DROPPED;
    if (resolve_pc(b, s->dump, raw_u64(s->pcs + i * 8), &idx, err) != 0)
      return -1;
    if (idx == PC_DROPPED) continue;
    const pc_info *pi = &b->pcs[idx];
    for (uint32_t j = first ? 1 : 0; j < pi->n; j++)
      add_pending_call(b, b->p->frames[b->frame_ids[pi->first + j]].guid,
                       pi->stack);
    first = 0;
    MP_VEC_RESERVE(b->cs, b->cap_cs, n_cs + pi->n);
    memcpy(b->cs + n_cs, b->frame_ids + pi->first, pi->n * 4);
    n_cs += pi->n;
  }
  if (n_cs == 0 || n_cs > UINT32_MAX) {
    s->state = RAW_STACK_DROPPED;
    return 0;
  }
  s->model_stack = mp_intern_stack(b->p, b->cs, (uint32_t)n_cs);
  s->state = RAW_STACK_LIVE;
  return 0;
}

/* ---- MIBs ---------------------------------------------------------------- */

static const uint64_t *read_hist(builder *b, uint32_t version,
                                 const unsigned char *h, uint32_t n) {
  if (!n) return NULL;
  MP_VEC_RESERVE(b->hist, b->cap_hist, n);
  for (uint32_t i = 0; i < n; i++) {
    if (version == 5) {
      uint16_t e;
      memcpy(&e, h + 2 * (size_t)i, 2);
      b->hist[i] = mp_hist_decode_v5(e);
    } else {
      b->hist[i] = raw_u64(h + 8 * (size_t)i);
    }
  }
  return b->hist;
}

/* The alloc site goes to the leaf function and to every inline parent up to
 * and including the first physical frame. */
static void add_alloc(builder *b, const raw_stack *s, const mp_mib *mib,
                      const uint64_t *hist) {
  const uint32_t *fr = mp_stack_frames(b->p, s->model_stack);
  uint32_t n = b->p->stacks[s->model_stack].len;
  for (uint32_t i = 0; i < n; i++) {
    const mp_frame *f = &b->p->frames[fr[i]];
    int seen = 0; /* inlined recursion must not merge the MIB with itself */
    for (uint32_t k = 0; k < i && !seen; k++)
      seen = b->p->frames[fr[k]].guid == f->guid;
    if (!seen) mp_add_alloc_site(b->p, f->guid, s->model_stack, mib, hist);
    if (!f->is_inline) break;
  }
}

static int add_dump_mibs(builder *b, const raw_dump *d, size_t *live,
                         mp_err *err) {
  const unsigned char *e = d->mibs;
  for (uint64_t i = 0; i < d->n_mibs; i++) {
    raw_stack *s =
        &b->f->stacks[raw_map_get(&b->f->stack_index, raw_u64(e))];
    if (s->state == RAW_STACK_NEW && build_stack(b, s, err) != 0) return -1;
    if (s->state == RAW_STACK_LIVE) {
      mp_mib mib;
      memset(&mib, 0, sizeof mib);
      memcpy(&mib, e + 8, d->version == 3 ? MP_MIB_SIZE_V3 : MP_MIB_SIZE_V4);
      mib.AccessHistogram = 0;
      const uint64_t *hist = read_hist(b, d->version, e + 8 + MP_MIB_SIZE_V4,
                                       mib.AccessHistogramSize);
      add_alloc(b, s, &mib, hist);
      (*live)++;
    }
    e += raw_mib_entry_size(d->version, e);
  }
  return 0;
}

static int cmp_pending(const void *x, const void *y) {
  const pending_call *a = x, *c = y;
  if (a->rank != c->rank) return a->rank < c->rank ? -1 : 1;
  return a->seq < c->seq ? -1 : a->seq > c->seq;
}

/* Call-site-only records come after all alloc records, grouped by function
 * in first-seen order, like LLVM's. */
static void add_calls(builder *b) {
  qsort(b->calls, b->n_calls, sizeof *b->calls, cmp_pending);
  for (size_t i = 0; i < b->n_calls; i++)
    mp_add_call_site(b->p, b->calls[i].guid, b->calls[i].stack, NULL, 0);
}

static void builder_free(builder *b) {
  for (size_t i = 0; i < b->n_mods; i++) raw_map_free(&b->pc_maps[i]);
  for (size_t d = 0; b->segs && d < b->f->n_dumps; d++) free(b->segs[d]);
  free(b->segs);
  free(b->n_segs);
  free(b->pc_maps);
  free(b->mods);
  free(b->pcs);
  free(b->frame_ids);
  free(b->cs);
  free(b->calls);
  free(b->hist);
  raw_map_free(&b->guid_rank);
}

static int build(builder *b, mp_err *err) {
  size_t total = 0, live = 0;
  for (size_t d = 0; d < b->f->n_dumps; d++) total += b->f->dumps[d].n_mibs;
  if (!total) return 0; /* nothing allocated: no binary needed */
  if (resolve_segments(b, err) != 0) return -1;
  for (size_t d = 0; d < b->f->n_dumps; d++)
    if (add_dump_mibs(b, &b->f->dumps[d], &live, err) != 0) return -1;
  if (total && !live)
    return mp_fail(err,
                   "none of the %zu allocation contexts has a symbolizable "
                   "frame (do the profiled binaries have debug info?)",
                   total);
  add_calls(b);
  return 0;
}

int raw_build(raw_file *f, mp_profile *p, msym_ctx *sym, mp_err *err) {
  builder b;
  memset(&b, 0, sizeof b);
  b.f = f;
  b.p = p;
  b.sym = sym;
  b.n_mods = sym ? msym_num_modules(sym) : 0;
  b.mods = mp_xcalloc(b.n_mods + 1, sizeof *b.mods);
  b.pc_maps = mp_xcalloc(b.n_mods + 1, sizeof *b.pc_maps);
  for (size_t i = 0; i < b.n_mods; i++) {
    b.mods[i] = msym_module_at(sym, i);
    raw_map_init(&b.pc_maps[i]);
  }
  raw_map_init(&b.guid_rank);
  int rc = build(&b, err);
  builder_free(&b);
  return rc;
}
