/* instrprof_values.c - value-profile data: LLVM's ValueProfData as raw and
 * indexed files store it (read, sized, written) and LLVM's rules for
 * value sites (InstrProfValueSiteRecord: merge by target value, scale,
 * sort by count and keep 255).
 *
 * ValueProfData: u32 TotalSize, u32 NumValueKinds, then per kind a
 * record: u32 Kind, u32 NumValueSites, u8 per site its value count, zero
 * padding to 8 bytes, then {u64 Value, u64 Count} for all sites in order.
 */
#include <stdlib.h>
#include <string.h>

#include "instrprof_priv.h"

/* ---- sorting (stable, like llvm::stable_sort) --------------------------- */

typedef int (*before_fn)(const mp_ivalue *a, const mp_ivalue *b);

static int by_count_desc(const mp_ivalue *a, const mp_ivalue *b) {
  return a->count > b->count;
}
static int by_value(const mp_ivalue *a, const mp_ivalue *b) {
  return a->value < b->value;
}

static void stable_sort(mp_ivalue *v, uint32_t n, before_fn before) {
  if (n < 2) return;
  if (n <= 16) {
    for (uint32_t i = 1; i < n; i++) {
      mp_ivalue x = v[i];
      uint32_t j = i;
      while (j && before(&x, &v[j - 1])) {
        v[j] = v[j - 1];
        j--;
      }
      v[j] = x;
    }
    return;
  }
  uint32_t h = n / 2;
  stable_sort(v, h, before);
  stable_sort(v + h, n - h, before);
  mp_ivalue *tmp = mp_xmalloc((size_t)n * sizeof *tmp);
  uint32_t i = 0, j = h, k = 0;
  while (i < h && j < n) tmp[k++] = before(&v[j], &v[i]) ? v[j++] : v[i++];
  while (i < h) tmp[k++] = v[i++];
  while (j < n) tmp[k++] = v[j++];
  memcpy(v, tmp, (size_t)n * sizeof *tmp);
  free(tmp);
}

void mp_isites_sort_by_count(mp_irecord *r) {
  for (int k = 0; k < MP_IPVK_NUM; k++)
    for (uint32_t s = 0; s < r->n_sites[k]; s++) {
      mp_isite *site = &r->sites[k][s];
      stable_sort(site->v, site->n, by_count_desc);
      if (site->n > MP_IVAL_MAX_PER_SITE) site->n = MP_IVAL_MAX_PER_SITE;
    }
}

void mp_isites_scale(mp_irecord *r, uint64_t n, mp_iwarn_ctx *w) {
  for (int k = 0; k < MP_IPVK_NUM; k++)
    for (uint32_t s = 0; s < r->n_sites[k]; s++)
      for (uint32_t i = 0; i < r->sites[k][s].n; i++) {
        int o = 0;
        mp_ivalue *v = &r->sites[k][s].v[i];
        v->count = mp_sat_mul(v->count, n, &o);
        if (o) mp_iwarn(w, MP_IERR_OVERFLOW);
      }
}

/* Both sites sorted by value, then merged: a value in both gets o's count
 * times the weight added; a value only in o comes over unweighted, as in
 * LLVM. */
static void merge_site(mp_isite *d, mp_isite *o, uint64_t weight,
                       mp_iwarn_ctx *w) {
  stable_sort(d->v, d->n, by_value);
  stable_sort(o->v, o->n, by_value);
  mp_ivalue *m = mp_xmalloc(((size_t)d->n + o->n + 1) * sizeof *m);
  uint32_t i = 0, k = 0;
  for (uint32_t j = 0; j < o->n; j++) {
    const mp_ivalue *J = &o->v[j];
    while (i < d->n && d->v[i].value < J->value) m[k++] = d->v[i++];
    if (i < d->n && d->v[i].value == J->value) {
      int of = 0;
      d->v[i].count = mp_sat_mul_add(J->count, weight, d->v[i].count, &of);
      if (of) mp_iwarn(w, MP_IERR_OVERFLOW);
      m[k++] = d->v[i++];
      continue;
    }
    m[k++] = *J;
  }
  while (i < d->n) m[k++] = d->v[i++];
  free(d->v);
  d->v = m;
  d->n = k;
}

void mp_isites_merge(mp_irecord *d, mp_irecord *o, uint64_t weight,
                     mp_iwarn_ctx *w) {
  for (int k = 0; k < MP_IPVK_NUM; k++) {
    if (d->n_sites[k] != o->n_sites[k]) {
      mp_iwarn(w, MP_IERR_SITE_MISMATCH); /* that kind only, as LLVM */
      continue;
    }
    for (uint32_t s = 0; s < d->n_sites[k]; s++)
      merge_site(&d->sites[k][s], &o->sites[k][s], weight, w);
  }
}

/* ---- ValueProfData ------------------------------------------------------- */

static uint32_t record_header(uint32_t n_sites) {
  return (8 + n_sites + 7) & ~7u;
}

uint32_t mp_ivalues_size(const mp_irecord *r) {
  uint32_t size = 8;
  for (int k = 0; k < MP_IPVK_NUM; k++) {
    if (!r->n_sites[k]) continue;
    size += record_header(r->n_sites[k]);
    for (uint32_t s = 0; s < r->n_sites[k]; s++) size += 16 * r->sites[k][s].n;
  }
  return size;
}

void mp_ivalues_write(mp_buf *out, const mp_irecord *r) {
  uint32_t kinds = 0;
  for (int k = 0; k < MP_IPVK_NUM; k++) kinds += r->n_sites[k] != 0;
  mp_buf_u32(out, mp_ivalues_size(r));
  mp_buf_u32(out, kinds);
  for (uint32_t k = 0; k < MP_IPVK_NUM; k++) {
    uint32_t ns = r->n_sites[k];
    if (!ns) continue;
    mp_buf_u32(out, k);
    mp_buf_u32(out, ns);
    for (uint32_t s = 0; s < ns; s++) mp_buf_u8(out, (uint8_t)r->sites[k][s].n);
    for (uint32_t p = 8 + ns; p < record_header(ns); p++) mp_buf_u8(out, 0);
    for (uint32_t s = 0; s < ns; s++)
      mp_buf_put(out, r->sites[k][s].v, 16 * (size_t)r->sites[k][s].n);
  }
}

/* One kind's record at d[0, avail) into r; *len receives its size. */
static int read_kind(mp_irecord *r, const unsigned char *d, size_t avail,
                     mp_iremap_fn remap, const void *ctx, size_t *len,
                     mp_err *err) {
  if (avail < 8)
    return mp_fail(err, "value profile address is greater than total size");
  uint32_t kind = mp_rd32(d), ns = mp_rd32(d + 4);
  if (kind >= MP_IPVK_NUM)
    return mp_fail(err, "value kind %u is invalid", kind);
  if (r->sites[kind])
    return mp_fail(err, "value kind %u appears twice", kind);
  size_t hdr = ((size_t)8 + ns + 7) & ~(size_t)7;
  if (hdr > avail)
    return mp_fail(err, "value profile address is greater than total size");
  size_t n_values = 0;
  for (uint32_t s = 0; s < ns; s++) n_values += d[8 + s];
  if (n_values > (avail - hdr) / 16)
    return mp_fail(err, "value profile address is greater than total size");
  r->n_sites[kind] = ns;
  r->sites[kind] = mp_xcalloc(ns ? ns : 1, sizeof(mp_isite));
  const unsigned char *v = d + hdr;
  for (uint32_t s = 0; s < ns; s++) {
    mp_isite *site = &r->sites[kind][s];
    site->n = d[8 + s];
    site->v = mp_xmalloc((site->n ? site->n : 1) * sizeof(mp_ivalue));
    for (uint32_t i = 0; i < site->n; i++, v += 16) {
      uint64_t val = mp_rd64(v);
      site->v[i].value = remap ? remap(ctx, kind, val) : val;
      site->v[i].count = mp_rd64(v + 8);
    }
  }
  *len = hdr + 16 * n_values;
  return 0;
}

int mp_instr_read_values(mp_irecord *r, const unsigned char *d, size_t avail,
                         mp_iremap_fn remap, const void *ctx, uint32_t *size,
                         mp_err *err) {
  if (avail < 8) return mp_fail(err, "truncated value profile data");
  uint32_t total = mp_rd32(d), kinds = mp_rd32(d + 4);
  if (total > avail)
    return mp_fail(err, "value profile data of %u bytes does not fit in the "
                   "%zu left", total, avail);
  if (kinds > MP_IPVK_NUM)
    return mp_fail(err, "number of value profile kinds %u is invalid", kinds);
  if (total % 8 || total < 8)
    return mp_fail(err, "value profile size %u is not a multiple of 8",
                   total);
  size_t pos = 8;
  for (uint32_t k = 0; k < kinds; k++) {
    size_t len = 0;
    if (read_kind(r, d + pos, total - pos, remap, ctx, &len, err)) return -1;
    pos += len;
  }
  *size = total;
  return 0;
}
