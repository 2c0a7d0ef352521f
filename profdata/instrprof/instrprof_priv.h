/* instrprof_priv.h - what the instrumentation profile's pieces share (not
 * a public API): LLVM's saturating arithmetic, the per-record warning
 * context, and the value-site operations of instrprof_values.c.
 */
#ifndef PROFDATA_INSTRPROF_PRIV_H
#define PROFDATA_INSTRPROF_PRIV_H

#include <stdint.h>

#include "instrprof.h"

/* The instrprof_error codes merging raises (instrprof_model.c's table). */
enum {
  MP_IERR_COUNT_MISMATCH,
  MP_IERR_OVERFLOW,
  MP_IERR_SITE_MISMATCH,
  MP_IERR_BITMAP_MISMATCH,
};

/* x * y and x * y + a, saturating at UINT64_MAX; *overflow set when they
 * saturate (llvm/Support/MathExtras.h). */
static inline uint64_t mp_sat_mul(uint64_t x, uint64_t y, int *overflow) {
  uint64_t r;
  if (__builtin_mul_overflow(x, y, &r)) {
    *overflow = 1;
    return UINT64_MAX;
  }
  return r;
}

static inline uint64_t mp_sat_mul_add(uint64_t x, uint64_t y, uint64_t a,
                                      int *overflow) {
  int o = 0;
  uint64_t p = mp_sat_mul(x, y, &o), r;
  if (o || __builtin_add_overflow(p, a, &r)) {
    *overflow = 1;
    return UINT64_MAX;
  }
  return r;
}

typedef struct mp_iwarn_ctx {
  mp_instr *ip;
  const char *src; /* input file, or NULL */
  const char *name;
  size_t name_len;
  int reported;
} mp_iwarn_ctx;

/* Report error `code` for the record being added ("FILE: FUNC: text";
 * instrprof_warn.c). */
void mp_iwarn(mp_iwarn_ctx *w, int code);

/* Value sites (instrprof_values.c). */
void mp_isites_scale(mp_irecord *r, uint64_t n, mp_iwarn_ctx *w);
void mp_isites_merge(mp_irecord *d, mp_irecord *o, uint64_t weight,
                     mp_iwarn_ctx *w);
/* Each site by count, largest first (stable), cut to 255 values. */
void mp_isites_sort_by_count(mp_irecord *r);
/* The serialized ValueProfData of `r`: its size, and writing it. */
uint32_t mp_ivalues_size(const mp_irecord *r);
void mp_ivalues_write(mp_buf *out, const mp_irecord *r);

#endif
