/* mib_schema.c - indexed MIB schemas and (un)packing of one MIB under a
 * schema (mib_schema.h).  The field list comes from MIBDef.inc only. */
#include "mib_schema.h"

#include <string.h>

void mp_schema_hot_cold(mp_schema *s) {
  static const uint8_t t[] = {MPF_MIB_AllocCount, MPF_MIB_TotalSize,
                              MPF_MIB_TotalLifetime,
                              MPF_MIB_TotalLifetimeAccessDensity};
  s->n = sizeof t;
  memcpy(s->tags, t, sizeof t);
}

void mp_schema_full(mp_schema *s) {
  s->n = 0;
#define MIB_FIELD(Tag, Name, CType, Merge) s->tags[s->n++] = Tag;
#include "include/MIBDef.inc"
#undef MIB_FIELD
}

unsigned mp_mib_tag_width(unsigned tag) {
  switch (tag) {
#define MIB_FIELD(Tag, Name, CType, Merge) \
  case Tag:                                \
    return sizeof(CType);
#include "include/MIBDef.inc"
#undef MIB_FIELD
  default:
    return 0;
  }
}

size_t mp_schema_mib_size(const mp_schema *s) {
  size_t n = 0;
  for (uint32_t i = 0; i < s->n; i++) n += mp_mib_tag_width(s->tags[i]);
  return n;
}

void mp_schema_write(mp_buf *out, const mp_schema *s) {
  mp_buf_u64(out, s->n);
  for (uint32_t i = 0; i < s->n; i++) mp_buf_u64(out, s->tags[i]);
}

void mp_mib_write(mp_buf *out, const mp_schema *s, const mpf_mib *m) {
  for (uint32_t i = 0; i < s->n; i++) {
    switch (s->tags[i]) {
#define MIB_FIELD(Tag, Name, CType, Merge)                          \
  case Tag: {                                                       \
    CType v = Tag == MPF_MIB_AccessHistogram ? 0 : m->Name;          \
    mp_buf_put(out, &v, sizeof v);                                  \
    break;                                                          \
  }
#include "include/MIBDef.inc"
#undef MIB_FIELD
    }
  }
}

void mp_mib_read(const unsigned char *p, const mp_schema *s, mpf_mib *m) {
  memset(m, 0, sizeof *m);
  for (uint32_t i = 0; i < s->n; i++) {
    switch (s->tags[i]) {
#define MIB_FIELD(Tag, Name, CType, Merge) \
  case Tag: {                              \
    CType v;                               \
    memcpy(&v, p, sizeof v);               \
    m->Name = v;                           \
    p += sizeof v;                         \
    break;                                 \
  }
#include "include/MIBDef.inc"
#undef MIB_FIELD
    }
  }
}
