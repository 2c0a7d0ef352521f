/* instrprof_model.c - the instrumentation profile (instrprof.h): functions
 * found by name, their records by hash, LLVM's counter merge
 * (InstrProfRecord::merge and ::scale).  Value sites merge in
 * instrprof_values.c; the warnings llvm-profdata prints for records that
 * disagree are instrprof_warn.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "common/guid.h"
#include "instrprof.h"
#include "profdata/model/model.h"
#include "instrprof_priv.h"

#define NONE UINT32_MAX

mp_instr *mp_instr_new(void) {
  mp_instr *ip = mp_xcalloc(1, sizeof *ip);
  mp_map_init(&ip->func_index, 0);
  return ip;
}

void mp_irecord_clear(mp_irecord *r) {
  free(r->counts);
  free(r->bitmap);
  for (int k = 0; k < MP_IPVK_NUM; k++) {
    for (uint32_t s = 0; s < r->n_sites[k]; s++) free(r->sites[k][s].v);
    free(r->sites[k]);
  }
  uint64_t hash = r->hash;
  memset(r, 0, sizeof *r);
  r->hash = hash;
}

void mp_instr_free(mp_instr *ip) {
  if (!ip) return;
  for (size_t i = 0; i < ip->n_recs; i++) mp_irecord_clear(&ip->recs[i]);
  for (size_t i = 0; i < ip->n_ids; i++) free(ip->ids[i]);
  free(ip->ids);
  free(ip->id_len);
  free(ip->recs);
  free(ip->funcs);
  free(ip->names);
  mp_map_free(&ip->func_index);
  free(ip);
}

mp_instr *mp_profile_instr(mp_profile *p) {
  if (!p->instr) {
    p->instr = mp_instr_new();
    p->instr_free = mp_instr_free;
  }
  return p->instr;
}

int mp_instr_add_kind(mp_instr *ip, uint64_t variant, mp_err *err) {
  uint64_t mine = ip->variant, bb = MP_IVAR_ENTRY_FIRST | MP_IVAR_LOOP_ENTRIES;
  if (ip->has_kind && (((mine & MP_IVAR_FUNC_ENTRY_ONLY) && (variant & bb)) ||
                       ((mine & bb) && (variant & MP_IVAR_FUNC_ENTRY_ONLY))))
    return mp_fail(err, "cannot merge FunctionEntryOnly profiles and BB "
                        "profiles together");
  ip->variant |= variant;
  ip->has_kind = 1;
  return 0;
}

/* ---- functions and records ---------------------------------------------- */

typedef struct name_key {
  const char *s;
  size_t len;
} name_key;

static int name_eq(const void *ctx, uint32_t val, const void *ekey) {
  const mp_instr *ip = ctx;
  const name_key *k = ekey;
  const mp_ifunc *f = &ip->funcs[val];
  return f->name_len == k->len &&
         memcmp(ip->names + f->name_off, k->s, k->len) == 0;
}

static uint32_t get_func(mp_instr *ip, const char *name, size_t len,
                         uint64_t md5) {
  name_key k = {name, len};
  mp_map_slot *s = mp_map_probe(&ip->func_index, md5, 0, name_eq, ip, &k);
  if (s->val != MP_MAP_EMPTY) return s->val;
  MP_VEC_RESERVE(ip->funcs, ip->cap_funcs, ip->n_funcs + 1);
  MP_VEC_RESERVE(ip->names, ip->names_cap, ip->names_len + len + 1);
  uint32_t id = (uint32_t)ip->n_funcs++;
  mp_ifunc *f = &ip->funcs[id];
  f->name_off = ip->names_len;
  f->name_len = (uint32_t)len;
  f->first = f->last = NONE;
  f->md5 = md5;
  memcpy(ip->names + ip->names_len, name, len);
  ip->names[ip->names_len + len] = 0;
  ip->names_len += len + 1;
  mp_map_insert(&ip->func_index, s, md5, 0, id);
  return id;
}

static mp_irecord *find_record(mp_instr *ip, const mp_ifunc *f,
                               uint64_t hash) {
  for (uint32_t i = f->first; i != NONE; i = ip->recs[i].next)
    if (ip->recs[i].hash == hash) return &ip->recs[i];
  return NULL;
}

static mp_irecord *append_record(mp_instr *ip, uint32_t fid, mp_irecord *r) {
  MP_VEC_RESERVE(ip->recs, ip->cap_recs, ip->n_recs + 1);
  uint32_t id = (uint32_t)ip->n_recs++;
  mp_irecord *d = &ip->recs[id];
  *d = *r;
  d->next = NONE;
  mp_ifunc *f = &ip->funcs[fid];
  if (f->last == NONE)
    f->first = id;
  else
    ip->recs[f->last].next = id;
  f->last = id;
  memset(r, 0, sizeof *r);
  return d;
}

static int pseudo_kind(const mp_irecord *r) {
  if (!r->n_counts) return 0;
  if (r->counts[0] == UINT64_MAX) return 1;     /* hot */
  if (r->counts[0] == UINT64_MAX - 1) return 2; /* warm */
  return 0;
}

static void scale(mp_irecord *r, uint64_t n, mp_iwarn_ctx *w) {
  for (uint32_t i = 0; i < r->n_counts; i++) {
    int o = 0;
    uint64_t v = mp_sat_mul(r->counts[i], n, &o);
    if (v > MP_ICOUNT_MAX) {
      v = MP_ICOUNT_MAX;
      o = 1;
    }
    r->counts[i] = v;
    if (o) mp_iwarn(w, MP_IERR_OVERFLOW);
  }
  mp_isites_scale(r, n, w);
}

static void set_pseudo(mp_irecord *r, int kind) {
  free(r->counts);
  r->counts = mp_xmalloc(8);
  r->counts[0] = kind == 1 ? UINT64_MAX : UINT64_MAX - 1;
  r->n_counts = 1;
}

static void merge(mp_irecord *d, mp_irecord *o, uint64_t weight,
                  mp_iwarn_ctx *w) {
  if (d->n_counts != o->n_counts) {
    mp_iwarn(w, MP_IERR_COUNT_MISMATCH);
    return;
  }
  int ok = pseudo_kind(o), dk = pseudo_kind(d);
  if (ok || dk) {
    /* Pseudo counts (profile supplementation) only merge with their own. */
    if (!ok || !dk)
      mp_iwarn(w, MP_IERR_COUNT_MISMATCH);
    else
      set_pseudo(d, ok == 1 || dk == 1 ? 1 : 2);
    return;
  }
  for (uint32_t i = 0; i < o->n_counts; i++) {
    int of = 0;
    uint64_t v = mp_sat_mul_add(o->counts[i], weight, d->counts[i], &of);
    if (v > MP_ICOUNT_MAX) {
      v = MP_ICOUNT_MAX;
      of = 1;
    }
    d->counts[i] = v;
    if (of) mp_iwarn(w, MP_IERR_OVERFLOW);
  }
  if (d->n_bitmap != o->n_bitmap) {
    mp_iwarn(w, MP_IERR_BITMAP_MISMATCH);
    return;
  }
  for (uint32_t i = 0; i < o->n_bitmap; i++) d->bitmap[i] |= o->bitmap[i];
  mp_isites_merge(d, o, weight, w);
}

void mp_instr_add(mp_instr *ip, const char *src, const char *name,
                  size_t name_len, mp_irecord *r, uint64_t weight) {
  mp_instr_add_md5(ip, src, name, name_len, mp_md5_low(name, name_len), r,
                   weight);
}

void mp_instr_add_md5(mp_instr *ip, const char *src, const char *name,
                      size_t name_len, uint64_t md5, mp_irecord *r,
                      uint64_t weight) {
  mp_instr_add_to(ip, src, get_func(ip, name, name_len, md5), r, weight);
}

static int any_func(const void *ctx, uint32_t val, const void *ekey) {
  (void)ctx, (void)val, (void)ekey;
  return 1; /* the slot's hash is the MD5 asked for */
}

uint32_t mp_instr_find_md5(const mp_instr *ip, uint64_t md5) {
  uint32_t v = mp_map_probe(&ip->func_index, md5, 0, any_func, ip, NULL)->val;
  return v == MP_MAP_EMPTY ? UINT32_MAX : v;
}

void mp_instr_add_to(mp_instr *ip, const char *src, uint32_t fid,
                     mp_irecord *r, uint64_t weight) {
  const mp_ifunc *f = &ip->funcs[fid];
  const char *name = mp_ifunc_name(ip, f);
  size_t name_len = f->name_len;
  mp_iwarn_ctx w = {ip, src, name, name_len, 0};
  mp_irecord *d = find_record(ip, &ip->funcs[fid], r->hash);
  if (!d) {
    d = append_record(ip, fid, r);
    if (weight > 1) scale(d, weight, &w);
  } else {
    merge(d, r, weight, &w);
    mp_irecord_clear(r);
  }
  mp_isites_sort_by_count(d);
}

void mp_instr_reserve(mp_instr *ip, uint64_t records, uint64_t name_bytes) {
  if (records > UINT32_MAX || name_bytes > UINT32_MAX) return; /* bogus */
  MP_VEC_RESERVE(ip->funcs, ip->cap_funcs, records);
  MP_VEC_RESERVE(ip->recs, ip->cap_recs, records);
  MP_VEC_RESERVE(ip->names, ip->names_cap, name_bytes);
  mp_map_reserve(&ip->func_index, records);
}

/* ---- binary ids ----------------------------------------------------------- */

void mp_instr_add_binary_id(mp_instr *ip, const uint8_t *id, size_t len) {
  MP_VEC_RESERVE(ip->ids, ip->cap_ids, ip->n_ids + 1);
  size_t cap = ip->cap_ids;
  ip->id_len = mp_xrealloc(ip->id_len, cap * sizeof *ip->id_len);
  ip->ids[ip->n_ids] = mp_xmalloc(len ? len : 1);
  memcpy(ip->ids[ip->n_ids], id, len);
  ip->id_len[ip->n_ids++] = (uint32_t)len;
}

int mp_instr_read_binary_ids(mp_instr *ip, const unsigned char *d,
                             size_t size, uint64_t file_off, mp_err *err) {
  size_t pos = 0;
  while (pos < size) {
    if (size - pos < 8)
      return mp_fail(err, "binary id at offset 0x%llx: not enough data to "
                     "read its length", (unsigned long long)(file_off + pos));
    uint64_t len = mp_rd64(d + pos);
    if (len == 0)
      return mp_fail(err, "binary id at offset 0x%llx: length is 0",
                     (unsigned long long)(file_off + pos));
    pos += 8;
    if (len > size - pos || ((len + 7) & ~7ULL) > size - pos)
      return mp_fail(err, "binary id at offset 0x%llx: %llu bytes do not "
                     "fit in the %zu left of the binary-id section",
                     (unsigned long long)(file_off + pos - 8),
                     (unsigned long long)len, size - pos);
    mp_instr_add_binary_id(ip, d + pos, (size_t)len);
    pos += (size_t)((len + 7) & ~7ULL);
  }
  return 0;
}
