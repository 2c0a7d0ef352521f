/* varfile.c - the varint file cursor (varfile.h). */
#include "varfile.h"

#include <stdarg.h>
#include <stdio.h>

#include "bytes.h"

int mp_varfile_fail(mp_varfile *r, size_t at, const char *fmt, ...) {
  char what[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return mp_fail(r->err, "%s: %s at offset 0x%zx: %s", r->name, r->kind, at, what);
}

int mp_varfile_uv(mp_varfile *r, const char *what, uint64_t *v) {
  size_t start = r->at;
  mp_cursor c = {r->p + r->at, r->p + r->len, 0};
  *v = mp_uleb(&c);
  if (c.bad == MP_CURSOR_PAST_END)
    return mp_varfile_fail(r, start, "%s: varint runs past the end of the file (%zu bytes)",
                           what, r->len);
  if (c.bad)
    return mp_varfile_fail(r, start, "%s: varint does not fit in 64 bits", what);
  r->at = (size_t)(c.p - r->p);
  return 0;
}

int mp_varfile_add(mp_varfile *r, size_t at, const char *what, uint64_t *sum,
                   uint64_t v) {
  if (*sum + v < *sum)
    return mp_varfile_fail(r, at, "%s overflows 64 bits", what);
  *sum += v;
  return 0;
}
