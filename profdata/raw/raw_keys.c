/* raw_keys.c - the part of reading a raw profile that needs nothing but the
 * file and the profiled binaries: matching each dump's segments to modules
 * by build id, and normalizing every call stack of the file to its key, the
 * (module, link-time address) of each PC that falls in a known module.
 *
 * PCs differ between runs only by their segment's load address, so the key
 * of a stack is the same in every run; raw_build.c looks keys up in the
 * reader's cache.  Nothing here touches the reader's mutable state or the
 * profile, so one file can be keyed (mp_raw_prepare) on another thread
 * while the previous one is added.
 *
 * Key layout, in u32 elements: per PC, with several modules, the module
 * index; then the PC's offset from where the module's first executable
 * PT_LOAD was loaded (pc - base - 1, seg_base), or, should that span
 * 4 GiB, KEY_ESCAPE and the offset's two halves.  The link-time address
 * is offset + exec_vaddr + 1 (raw_key_vaddr).
 */
#include <stdlib.h>
#include <string.h>

#include "common/io.h"
#include "include/internal/memprof_format.h"
#include "raw_internal.h"

/* ---- segments and modules ----------------------------------------------- */

static void hex_build_id(mp_buf *b, const uint8_t *id, size_t n) {
  for (size_t i = 0; i < n; i++) mp_buf_printf(b, "%02x", id[i]);
  if (!n) mp_buf_printf(b, "(none)");
}

static size_t module_index(const raw_file *f, const msym_module *m) {
  for (size_t i = 0; i < f->n_mods; i++)
    if (f->mods[i] == m) return i;
  return SIZE_MAX;
}

/* Lists what the profile holds and what was given, for the no-match error. */
static int no_binary_error(const raw_file *f, mp_err *err) {
  mp_buf m = {0};
  mp_buf_printf(&m, "no profiled binary matches the profile;");
  size_t shown = 0;
  for (size_t d = 0; d < f->n_dumps && shown < 16; d++) {
    const raw_dump *rd = &f->dumps[d];
    for (uint64_t i = 0; i < rd->n_segs && shown < 16; i++) {
      mpf_raw_segment s;
      memcpy(&s, rd->segs + i * sizeof s, sizeof s);
      if (d > 0 && i < f->dumps[0].n_segs &&
          memcmp(rd->segs + i * sizeof s, f->dumps[0].segs + i * sizeof s,
                 sizeof s) == 0)
        continue;
      mp_buf_printf(&m, shown++ ? ", " : " its segments have build ids ");
      hex_build_id(&m, s.build_id, (size_t)s.build_id_size);
    }
  }
  if (!shown) mp_buf_printf(&m, " it lists no segments with a build id");
  if (!f->n_mods) {
    mp_buf_printf(&m, "; no --profiled-binary was given");
  } else {
    mp_buf_printf(&m, "; binaries given:");
    for (size_t i = 0; i < f->n_mods; i++) {
      mp_buf_printf(&m, "%s %s (build id ", i ? "," : "", f->mods[i]->path);
      hex_build_id(&m, f->mods[i]->build_id, f->mods[i]->build_id_len);
      mp_buf_printf(&m, ")");
    }
  }
  mp_buf_u8(&m, 0);
  mp_fail(err, "%s", (char *)m.data);
  mp_buf_free(&m);
  return -1;
}

/* Where module m's first executable PT_LOAD (exec_vaddr) was loaded in
 * the run of segment s: its load bias (Offset) plus exec_vaddr.  A module
 * with several executable PT_LOADs (a large program linked with its text
 * split, node's) has one segment for each, and a PC of any of them is at
 * link-time address pc - bias.  A segment whose Offset does not fit
 * (Start - Offset below exec_vaddr) is taken as the first one. */
static uint64_t seg_base(const mpf_raw_segment *s, const msym_module *m) {
  if (s->start >= s->offset && s->start - s->offset >= m->exec_vaddr)
    return s->offset + m->exec_vaddr;
  return s->start;
}

static int resolve_segments(raw_file *f, mp_err *err) {
  size_t nd = f->n_dumps, matched = 0;
  f->segs = mp_xcalloc(nd + 1, sizeof *f->segs);
  f->n_segs = mp_xcalloc(nd + 1, sizeof *f->n_segs);
  f->last_seg = mp_xcalloc(nd + 1, sizeof *f->last_seg);
  for (size_t d = 0; d < nd; d++) {
    const raw_dump *rd = &f->dumps[d];
    size_t cap = 0; /* grown as segments match: the table may be huge */
    for (uint64_t i = 0; i < rd->n_segs; i++) {
      mpf_raw_segment s;
      memcpy(&s, rd->segs + i * sizeof s, sizeof s);
      if (!s.build_id_size) continue;
      const msym_module *m =
          f->sym ? msym_find_build_id(f->sym, s.build_id,
                                      (size_t)s.build_id_size)
                 : NULL;
      size_t mi = m ? module_index(f, m) : SIZE_MAX;
      if (mi == SIZE_MAX) continue;
      MP_VEC_RESERVE(f->segs[d], cap, f->n_segs[d] + 1);
      f->segs[d][f->n_segs[d]++] = (seg_ref){s.start, s.end, seg_base(&s, m), mi};
      matched++;
    }
  }
  return matched ? 0 : no_binary_error(f, err);
}

/* The segment of `dump` holding `pc`, trying the last one used first. */
static const seg_ref *find_segment(raw_file *f, uint32_t dump, uint64_t pc) {
  const seg_ref *s = f->segs[dump];
  size_t n = f->n_segs[dump], last = f->last_seg[dump];
  if (last < n && s[last].start < pc && pc <= s[last].end) return &s[last];
  for (size_t i = 0; i < n; i++)
    if (s[i].start < pc && pc <= s[i].end) {
      f->last_seg[dump] = i;
      return &s[i];
    }
  return NULL;
}

/* ---- keys ---------------------------------------------------------------- */

/* The second hash of a key: another seed, and each element xored in after
 * a rotation and multiplied (not added in, as in the first), so that the
 * two do not collide together. */
#define HASH2_SEED 0x243f6a8885a308d3ULL
#define HASH2_MUL 0x9fb21c651e98df25ULL
static inline uint64_t hash2_step(uint64_t h, uint64_t x) {
  return ((h << 27 | h >> 37) ^ x) * HASH2_MUL;
}

/* The key of `s` into `key` (room for KEY_MAX_PER_PC per PC); returns its
 * length and its two hashes.  Hot: runs for every PC of every stack of
 * every file, so the segment of the previous PC is tried first with one
 * compare. */
static inline __attribute__((always_inline)) size_t
stack_key_as(raw_file *f, raw_stack *s, uint32_t *key, const int pairs) {
  uint64_t h = 0x9e3779b97f4a7c15ULL, h2 = HASH2_SEED;
  /* pc is in the segment when start < pc <= end, i.e. when
   * pc - (start + 1) < end - start; its key is pc - (base + 1) */
  uint64_t lo = 1, span = 0, shift = 0; /* shift: start - base */
  uint32_t mod = 0;
  size_t n = 0;
  for (uint64_t i = 0; i < s->n_pcs; i++) {
    uint64_t pc = raw_u64(s->pcs + i * 8);
    uint64_t off = pc - lo;
    if (off >= span) {
      const seg_ref *sg = find_segment(f, s->dump, pc);
      if (!sg) {
        s->in_library |= i == 0;
        continue;
      }
      lo = sg->start + 1;
      span = sg->end - sg->start;
      shift = sg->start - sg->base;
      mod = (uint32_t)sg->module;
      s->in_library |= i == 0 && sg->module >= f->n_given;
      off = pc - lo;
    }
    off += shift;
    if (pairs) {
      key[n++] = mod;
      h = h * 0xff51afd7ed558ccdULL + mod;
      h2 = hash2_step(h2, mod);
    }
    if (__builtin_expect(off >= KEY_ESCAPE, 0)) {
      key[n++] = KEY_ESCAPE;
      key[n++] = (uint32_t)off;
      key[n++] = (uint32_t)(off >> 32);
      h = h * 0xff51afd7ed558ccdULL + KEY_ESCAPE;
      h = h * 0xff51afd7ed558ccdULL + off;
      h2 = hash2_step(hash2_step(h2, KEY_ESCAPE), off);
    } else {
      key[n++] = (uint32_t)off;
      h = h * 0xff51afd7ed558ccdULL + off;
      h2 = hash2_step(h2, off);
    }
  }
  h ^= n;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 29;
  s->hash = h;
  s->hash2 = mp_mix64(h2 ^ n);
  return n;
}

/* Room for the key of `s`, from a counting pass. */
static size_t key_room_of(raw_file *f, const raw_stack *s) {
  size_t n = 0;
  for (uint64_t i = 0; i < s->n_pcs; i++)
    n += find_segment(f, s->dump, raw_u64(s->pcs + i * 8)) ? 1 : 0;
  return n * KEY_MAX_PER_PC;
}

/* Room is reserved per stack: from its PC count when that is small, from
 * a counting pass otherwise, so that a huge stack of dropped PCs costs no
 * memory. */
static inline __attribute__((always_inline)) void
key_all_as(raw_file *f, const int pairs) {
  /* Sized once for the common case (every PC one element, two with
   * several modules) plus a little, so that only escapes and long stacks
   * make it grow.  (Room for a 64k-PC stack's worst case would be 768 KiB
   * per file in flight, and the heap's pages are what a merge pays most
   * for.) */
  size_t at = 0, cap = 0, total = 0;
  for (size_t i = 0; i < f->n_stacks; i++)
    if (f->stacks[i].n_pcs <= 65536) total += (size_t)f->stacks[i].n_pcs;
  cap = total * (pairs ? 2 : 1) + KEY_MAX_PER_PC * 256 + 1;
  f->keys = mp_xmalloc(cap * sizeof *f->keys);
  for (size_t i = 0; i < f->n_stacks; i++) {
    raw_stack *s = &f->stacks[i];
    size_t room = s->n_pcs <= 65536 ? KEY_MAX_PER_PC * (size_t)s->n_pcs
                                    : key_room_of(f, s);
    MP_VEC_RESERVE(f->keys, cap, at + room + 1);
    s->key_off = at;
    size_t n = stack_key_as(f, s, f->keys + at, pairs);
    s->key_len = (uint32_t)n;
    at += n;
  }
}

int raw_prepare_keys(raw_file *f, mp_err *err) {
  size_t total = 0;
  for (size_t d = 0; d < f->n_dumps; d++) total += f->dumps[d].n_mibs;
  if (!total) return 0; /* nothing allocated: no binary needed */
  if (resolve_segments(f, err) != 0) return -1;
  for (size_t i = 0; i < f->n_stacks; i++)
    if (f->stacks[i].n_pcs > UINT32_MAX / KEY_MAX_PER_PC)
      return mp_fail(err, "stack 0x%016llx has too many PCs",
                     (unsigned long long)f->stacks[i].id);
  /* two copies of the loop, each with `pairs` a constant */
  if (f->n_mods > 1)
    key_all_as(f, 1);
  else
    key_all_as(f, 0);
  return 0;
}

void raw_keys_free(raw_file *f) {
  for (size_t d = 0; f->segs && d < f->n_dumps; d++) free(f->segs[d]);
  free(f->segs);
  free(f->n_segs);
  free(f->last_seg);
  free(f->keys);
  f->segs = NULL;
  f->n_segs = f->last_seg = NULL;
  f->keys = NULL;
}
