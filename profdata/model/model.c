/* model.c - interning and merging for the in-memory profile (model.h).
 *
 * Every index is the tool's hash map (hashmap.h): records by GUID and sites
 * by record and stack are keyed maps; frames, stacks and strings are found
 * by their contents' hash and compared through a callback.
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "include/internal/mib_merge.h"

static uint64_t hash_bytes(const void *data, size_t n) {
  const unsigned char *b = data;
  uint64_t h = 0xcbf29ce484222325ULL ^ n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, b + i, 8);
    h = mp_mix64(h ^ w);
  }
  uint64_t w = 0;
  memcpy(&w, b + i, n - i);
  return mp_mix64(h ^ w ^ 0x9e3779b97f4a7c15ULL);
}

mp_profile *mp_profile_new(void) {
  mp_profile *p = mp_xcalloc(1, sizeof *p);
  mp_map_init(&p->frame_index, 0);
  mp_map_init(&p->stack_index, 0);
  mp_map_init(&p->record_index, 1);
  mp_map_init(&p->site_index, 1);
  mp_map_init(&p->string_index, 0);
  return p;
}

void mp_profile_free(mp_profile *p) {
  if (!p) return;
  for (size_t i = 0; i < p->n_records; i++) {
    mp_record *r = &p->records[i];
    for (size_t j = 0; j < r->n_allocs; j++) free(mp_alloc_of(r, j)->hist);
    for (size_t j = 0; j < r->n_calls; j++) free(r->calls[j].callees);
    for (size_t k = 0; k < r->n_alloc_seg; k++) free(r->alloc_seg[k]);
    free(r->alloc_seg);
    free(r->calls);
  }
  free(p->records);
  free(p->frames);
  free(p->syms);
  free(p->stacks);
  free(p->stack_frames);
  free(p->temporaries);
  free(p->strings);
  free(p->string_off);
  mp_map_free(&p->frame_index);
  mp_map_free(&p->stack_index);
  mp_map_free(&p->record_index);
  mp_map_free(&p->site_index);
  mp_map_free(&p->string_index);
  if (p->instr) p->instr_free(p->instr);
  if (p->dap) p->dap_free(p->dap);
  free(p->intervals.v);
  for (size_t i = 0; i < p->n_programs; i++) free(p->programs[i].path);
  free(p->programs);
  free(p);
}

void mp_intervals_add(mp_intervals *s, uint64_t r) {
  uint32_t i = 0;
  while (i < s->n && s->v[i] < r) i++;
  if (i < s->n && s->v[i] == r) return;
  s->v = mp_xrealloc(s->v, ((size_t)s->n + 1) * sizeof *s->v);
  memmove(s->v + i + 1, s->v + i, (s->n - i) * sizeof *s->v);
  s->v[i] = r;
  s->n++;
}

void mp_profile_reserve_stacks(mp_profile *p, size_t indexed, size_t stacks,
                               size_t frames) {
  mp_map_reserve(&p->stack_index, p->n_stacks + indexed);
  MP_VEC_RESERVE(p->stacks, p->cap_stacks, p->n_stacks + stacks);
  MP_VEC_RESERVE(p->stack_frames, p->cap_stack_frames,
                 p->n_stack_frames + frames);
}

void mp_profile_reserve_sites(mp_profile *p, size_t sites) {
  mp_map_reserve(&p->site_index, p->site_index.used + sites);
}

/* ---- frames -------------------------------------------------------------- */

static uint64_t frame_hash(const mp_frame *f) {
  return mp_mix64(f->guid ^ mp_mix64(((uint64_t)f->line_offset << 32 | f->column) +
                               f->is_inline));
}

static int frame_eq(const void *ctx, uint32_t id, const void *key) {
  const mp_profile *p = ctx;
  const mp_frame *a = &p->frames[id], *b = key;
  return a->guid == b->guid && a->line_offset == b->line_offset &&
         a->column == b->column && a->is_inline == b->is_inline;
}

uint32_t mp_find_frame(const mp_profile *p, const mp_frame *f) {
  mp_map_slot *s =
      mp_map_probe(&p->frame_index, frame_hash(f), 0, frame_eq, p, f);
  return s->val;
}

uint32_t mp_intern_frame(mp_profile *p, const mp_frame *f) {
  uint64_t h = frame_hash(f);
  mp_map_slot *s = mp_map_probe(&p->frame_index, h, 0, frame_eq, p, f);
  if (s->val != MP_MAP_EMPTY) return s->val;
  MP_VEC_RESERVE(p->frames, p->cap_frames, p->n_frames + 1);
  p->syms = mp_xrealloc(p->syms, p->cap_frames * sizeof *p->syms);
  uint32_t id = (uint32_t)p->n_frames++;
  p->frames[id] = *f;
  p->frames[id].is_inline = f->is_inline ? 1 : 0;
  p->syms[id] = (mp_frame_sym){MP_NO_STRING, MP_NO_STRING, 0, 0, 0};
  mp_map_insert(&p->frame_index, s, h, 0, id);
  return id;
}

static int str_cmp(const mp_profile *p, uint32_t a, uint32_t b) {
  const char *x = mp_string(p, a), *y = mp_string(p, b);
  return !x || !y ? (x != NULL) - (y != NULL) : strcmp(x, y);
}

static int sym_before(const mp_profile *p, const mp_frame_sym *a,
                      const mp_frame_sym *b) {
  int c = str_cmp(p, a->name, b->name);
  if (!c) c = str_cmp(p, a->file, b->file);
  if (c) return c < 0;
  if (a->line != b->line) return a->line < b->line;
  if (a->column != b->column) return a->column < b->column;
  return a->discriminator < b->discriminator;
}

void mp_set_frame_sym(mp_profile *p, uint32_t frame, const mp_frame_sym *s) {
  mp_frame_sym *d = &p->syms[frame];
  if ((d->name == MP_NO_STRING && d->file == MP_NO_STRING) || sym_before(p, s, d))
    *d = *s;
}

/* ---- stacks -------------------------------------------------------------- */

typedef struct stack_key {
  const uint32_t *frames;
  uint32_t n;
} stack_key;

static int stack_eq(const void *ctx, uint32_t id, const void *key) {
  const mp_profile *p = ctx;
  const stack_key *k = key;
  const mp_stack *s = &p->stacks[id];
  return s->len == k->n &&
         (k->n == 0 ||
          memcmp(p->stack_frames + s->off, k->frames, k->n * 4) == 0);
}

uint64_t mp_stack_hash(const uint32_t *frames, uint32_t n) {
  return hash_bytes(frames, (size_t)n * 4);
}

void mp_prefetch_stack(const mp_profile *p, uint64_t hash) {
  mp_map_prefetch(&p->stack_index, hash);
}

uint32_t mp_intern_stack(mp_profile *p, const uint32_t *frames, uint32_t n) {
  return mp_intern_stack_hashed(p, frames, n, mp_stack_hash(frames, n));
}

uint32_t mp_intern_stack_hashed(mp_profile *p, const uint32_t *frames,
                                uint32_t n, uint64_t h) {
  stack_key k = {frames, n};
  mp_map_slot *s = mp_map_probe(&p->stack_index, h, 0, stack_eq, p, &k);
  if (s->val != MP_MAP_EMPTY) return s->val;
  MP_VEC_RESERVE(p->stack_frames, p->cap_stack_frames, p->n_stack_frames + n);
  if (n) memcpy(p->stack_frames + p->n_stack_frames, frames, (size_t)n * 4);
  MP_VEC_RESERVE(p->stacks, p->cap_stacks, p->n_stacks + 1);
  uint32_t id = (uint32_t)p->n_stacks++;
  p->stacks[id] = (mp_stack){(uint32_t)p->n_stack_frames, n};
  p->n_stack_frames += n;
  mp_map_insert(&p->stack_index, s, h, 0, id);
  return id;
}

/* ---- strings ------------------------------------------------------------- */

typedef struct string_key {
  const char *s;
  size_t len;
} string_key;

static int string_eq(const void *ctx, uint32_t id, const void *key) {
  const mp_profile *p = ctx;
  const string_key *k = key;
  const char *s = p->strings + p->string_off[id];
  return strncmp(s, k->s, k->len) == 0 && s[k->len] == 0;
}

uint32_t mp_intern_string(mp_profile *p, const char *str, size_t len) {
  string_key k = {str, len};
  uint64_t h = hash_bytes(str, len);
  mp_map_slot *s = mp_map_probe(&p->string_index, h, 0, string_eq, p, &k);
  if (s->val != MP_MAP_EMPTY) return s->val;
  MP_VEC_RESERVE(p->strings, p->cap_strings_bytes,
                 p->n_strings_bytes + len + 1);
  memcpy(p->strings + p->n_strings_bytes, str, len);
  p->strings[p->n_strings_bytes + len] = 0;
  MP_VEC_RESERVE(p->string_off, p->cap_strings, p->n_strings + 1);
  uint32_t id = (uint32_t)p->n_strings++;
  p->string_off[id] = (uint32_t)p->n_strings_bytes;
  p->n_strings_bytes += len + 1;
  mp_map_insert(&p->string_index, s, h, 0, id);
  return id;
}

const char *mp_string(const mp_profile *p, uint32_t id) {
  return id == MP_NO_STRING || id >= p->n_strings
             ? NULL
             : p->strings + p->string_off[id];
}

/* ---- records and sites --------------------------------------------------- */

mp_record *mp_record_find(const mp_profile *p, uint64_t guid) {
  mp_map_slot *s = mp_map_probe(&p->record_index, mp_mix64(guid), guid, NULL, p, NULL);
  return s->val == UINT32_MAX ? NULL : &p->records[s->val];
}

mp_record *mp_record_get(mp_profile *p, uint64_t guid) {
  uint64_t h = mp_mix64(guid);
  mp_map_slot *s = mp_map_probe(&p->record_index, h, guid, NULL, p, NULL);
  if (s->val != UINT32_MAX) return &p->records[s->val];
  MP_VEC_RESERVE(p->records, p->cap_records, p->n_records + 1);
  uint32_t id = (uint32_t)p->n_records++;
  memset(&p->records[id], 0, sizeof p->records[id]);
  p->records[id].guid = guid;
  mp_map_insert(&p->record_index, s, h, guid, id);
  return &p->records[id];
}

/* Site keys: record index (31 bits), kind (1 bit), stack id (32 bits). */
static mp_map_slot *site_slot(mp_profile *p, const mp_record *r, int is_call,
                          uint32_t stack, uint64_t *key, uint64_t *hash) {
  uint64_t rec = (uint64_t)(r - p->records);
  *key = rec << 33 | (uint64_t)is_call << 32 | stack;
  *hash = mp_mix64(*key);
  return mp_map_probe(&p->site_index, *hash, *key, NULL, p, NULL);
}

/* Histogram contents may be absent (indexed files keep only the size), so
 * a site's `hist` is NULL or holds exactly AccessHistogramSize entries. */
static void hist_resize(mp_alloc_site *a, uint32_t old, uint32_t n) {
  a->hist = mp_xrealloc(a->hist, (size_t)n * 8);
  memset(a->hist + old, 0, (size_t)(n - old) * 8);
}

static void note_input(mp_profile *p) {
  if (p->last_input_with_sites != p->input) {
    p->last_input_with_sites = p->input;
    p->inputs_with_sites++;
  }
}

void mp_profile_begin_input(mp_profile *p) { p->input++; }

/* The site's representative fields so far: the earlier inputs' or the
 * last input's, whichever come after in tag order. */
static inline void settle_rep(mp_alloc_site *a) {
  if (!a->has_rep || mpf_mib_after_rep(&a->mib, &a->rep)) mpf_mib_rep_get(&a->rep, &a->mib);
  a->has_rep = 1;
}

void mp_site_settle_rep(mp_alloc_site *a) { settle_rep(a); }

/* The histogram side of merge_alloc, for a MIB that has one: kept out of
 * line, most profiles have none and the merge is their hot path. */
static __attribute__((noinline)) void merge_hist(mp_alloc_site *a, uint32_t nh,
                                                 const uint64_t *hist) {
  uint32_t old = a->mib.AccessHistogramSize;
  uint32_t size = nh > old ? nh : old;
  if (hist) {
    if (!a->hist) {
      a->hist = mp_xcalloc(size, 8);
    } else if (size > old) {
      hist_resize(a, old, size);
    }
    mpf_hist_add(a->hist, size, hist, nh);
  } else if (a->hist && size > old) {
    hist_resize(a, old, size);
  }
  a->mib.AccessHistogramSize = size;
}

/* Merge one more MIB (and its histogram) into an existing site: by
 * LLVM's rules within an input, by mpf_mib_merge_across from another.
 * The merges leave the histogram fields alone: a MIB without a histogram
 * changes neither (mib.AccessHistogram stays 0). */
static void merge_alloc(mp_profile *p, mp_alloc_site *a, const mpf_mib *mib,
                        const uint64_t *hist) {
  note_input(p);
  if (a->input == p->input) {
    mpf_mib_merge(&a->mib, mib);
  } else {
    settle_rep(a);
    mpf_mib_merge_across(&a->mib, mib);
    a->input = p->input;
  }
  if (__builtin_expect(mib->AccessHistogramSize != 0, 0))
    merge_hist(a, mib->AccessHistogramSize, hist);
}

void mp_add_alloc_site(mp_profile *p, uint64_t guid, uint32_t stack,
                       const mpf_mib *mib, const uint64_t *hist) {
  uint32_t rec, idx;
  mp_add_alloc_site_at(p, guid, stack, mib, hist, &rec, &idx);
}

/* Room for the record's next site: a new segment, twice the last and
 * starting on a cache line (mp_alloc_site), when the last is full. */
static mp_alloc_site *next_alloc(mp_record *r) {
  size_t j = r->n_allocs;
  if (j == ((size_t)1 << (r->n_alloc_seg + MP_ALLOC_SEG0_BITS)) -
               ((size_t)1 << MP_ALLOC_SEG0_BITS)) {
    MP_VEC_RESERVE(r->alloc_seg, r->cap_alloc_seg, r->n_alloc_seg + 1);
    r->alloc_seg[r->n_alloc_seg] = mp_xaligned_alloc(
        MP_ALLOC_SITE_ALIGN,
        sizeof(mp_alloc_site) << (r->n_alloc_seg + MP_ALLOC_SEG0_BITS));
    r->n_alloc_seg++;
  }
  return mp_alloc_of(r, j);
}

void mp_add_alloc_site_at(mp_profile *p, uint64_t guid, uint32_t stack,
                          const mpf_mib *mib, const uint64_t *hist,
                          uint32_t *rec, uint32_t *idx) {
  mp_record *r = mp_record_get(p, guid);
  uint64_t key, hash;
  mp_map_slot *s = site_slot(p, r, 0, stack, &key, &hash);
  uint32_t nh = mib->AccessHistogramSize;
  *rec = (uint32_t)(r - p->records);
  if (s->val == UINT32_MAX) {
    *idx = (uint32_t)r->n_allocs;
    mp_alloc_site *a = next_alloc(r);
    note_input(p);
    a->stack = stack;
    a->input = p->input;
    a->has_rep = 0;
    a->in_library = 0;
    a->mib = *mib;
    a->mib.AccessHistogram = 0;
    a->hist = NULL;
    if (nh && hist) {
      a->hist = mp_xmalloc((size_t)nh * 8);
      memcpy(a->hist, hist, (size_t)nh * 8);
    }
    mp_map_insert(&p->site_index, s, hash, key, (uint32_t)r->n_allocs++);
    return;
  }
  *idx = s->val;
  merge_alloc(p, mp_alloc_of(r, s->val), mib, hist);
}

void mp_merge_alloc_at(mp_profile *p, uint32_t rec, uint32_t idx,
                       const mpf_mib *mib, const uint64_t *hist) {
  merge_alloc(p, mp_alloc_of(&p->records[rec], idx), mib, hist);
}

void mp_add_call_site(mp_profile *p, uint64_t guid, uint32_t stack,
                      const uint64_t *callees, uint32_t n_callees) {
  mp_record *r = mp_record_get(p, guid);
  uint64_t key, hash;
  mp_map_slot *s = site_slot(p, r, 1, stack, &key, &hash);
  mp_call_site *c;
  note_input(p);
  if (s->val == UINT32_MAX) {
    MP_VEC_RESERVE(r->calls, r->cap_calls, r->n_calls + 1);
    c = &r->calls[r->n_calls];
    *c = (mp_call_site){stack, 0, NULL};
    mp_map_insert(&p->site_index, s, hash, key, (uint32_t)r->n_calls++);
  } else {
    c = &r->calls[s->val];
  }
  for (uint32_t i = 0; i < n_callees; i++) {
    uint32_t j = 0;
    while (j < c->n_callees && c->callees[j] != callees[i]) j++;
    if (j < c->n_callees) continue;
    c->callees = mp_xrealloc(c->callees, (c->n_callees + 1) * 8);
    c->callees[c->n_callees++] = callees[i];
  }
}

void mp_add_program(mp_profile *p, const char *path, size_t len, uint32_t inputs) {
  for (size_t i = 0; i < p->n_programs; i++)
    if (strlen(p->programs[i].path) == len && !memcmp(p->programs[i].path, path, len)) {
      p->programs[i].inputs += inputs;
      return;
    }
  p->programs = mp_xrealloc(p->programs, (p->n_programs + 1) * sizeof *p->programs);
  char *s = mp_xmalloc(len + 1);
  memcpy(s, path, len);
  s[len] = 0;
  p->programs[p->n_programs++] = (mp_program){s, inputs};
}

/* Grows by the stack id alone: the raw reader adds temporaries on its MIB
 * thread while the stacks thread interns new stacks (raw_mibs.c). */
void mp_add_temporaries(mp_profile *p, uint32_t stack, uint64_t n) {
  if (stack >= p->cap_temporaries) {
    size_t cap = p->cap_temporaries ? p->cap_temporaries : 64;
    while (cap <= stack) cap *= 2;
    p->temporaries = mp_xrealloc(p->temporaries, cap * sizeof *p->temporaries);
    memset(p->temporaries + p->cap_temporaries, 0,
           (cap - p->cap_temporaries) * sizeof *p->temporaries);
    p->cap_temporaries = cap;
  }
  p->temporaries[stack] += n;
}

/* ---- whole-profile operations ------------------------------------------- */

void mp_profile_reindex(mp_profile *p) {
  mp_map_free(&p->record_index);
  mp_map_free(&p->site_index);
  mp_map_init(&p->record_index, 1);
  mp_map_init(&p->site_index, 1);
  size_t sites = 0;
  for (size_t i = 0; i < p->n_records; i++)
    sites += p->records[i].n_allocs + p->records[i].n_calls;
  mp_map_reserve(&p->record_index, p->n_records);
  mp_map_reserve(&p->site_index, sites);
  for (size_t i = 0; i < p->n_records; i++) {
    mp_record *r = &p->records[i];
    uint64_t h = mp_mix64(r->guid), key;
    mp_map_insert(&p->record_index,
                 mp_map_probe(&p->record_index, h, r->guid, NULL, p, NULL), h,
                 r->guid, (uint32_t)i);
    for (size_t j = 0; j < r->n_allocs; j++) {
      mp_map_slot *s = site_slot(p, r, 0, mp_alloc_of(r, j)->stack, &key, &h);
      mp_map_insert(&p->site_index, s, h, key, (uint32_t)j);
    }
    for (size_t j = 0; j < r->n_calls; j++) {
      mp_map_slot *s = site_slot(p, r, 1, r->calls[j].stack, &key, &h);
      mp_map_insert(&p->site_index, s, h, key, (uint32_t)j);
    }
  }
}

/* An inlined allocation is listed in several records; count it once. */
size_t mp_profile_num_contexts(const mp_profile *p) {
  unsigned char *seen = mp_xcalloc(p->n_stacks + 1, 1);
  size_t n = 0;
  for (size_t i = 0; i < p->n_records; i++)
    for (size_t j = 0; j < p->records[i].n_allocs; j++) {
      uint32_t s = mp_alloc_of(&p->records[i], j)->stack;
      n += !seen[s];
      seen[s] = 1;
    }
  free(seen);
  return n;
}
