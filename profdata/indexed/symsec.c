/* symsec.c - writing and reading our symbolized section (symsec.h).
 *
 * Section (all offsets relative to its first byte, every table 8-aligned):
 *   header (64 bytes; 80 from version 1.1 when the profile has facts, 96
 *   from 1.2 when it has temporary allocations, 112 from 1.3 when it
 *   names its programs),
 *   entries (32 bytes each; the last word the entry's flags), path nodes (8 bytes each: component string
 *   id, parent node id), string table (8 bytes each: offset and length in
 *   the blob), blob, from 1.1 the sampling intervals (u64 each), and from
 *   1.2 the temporaries (u64 call-stack key, u64 count, keys increasing),
 *   from 1.3 the programs (u32 inputs, u32 path length, the path padded
 *   to 8; paths increasing).
 * Trailer (last 40 bytes of the file): "MPSYMSEC", u32 major, u32 minor,
 * u64 section offset, u64 section size, u32 crc32 of the section, u32 0.
 * The facts (how the inputs were recorded: their sampling intervals and
 * whether one was not instrumented) and the temporaries are written only
 * when there is something to say, so that a profile recorded in full gets
 * the 1.0 section byte for byte, one without temporaries the 1.0 or 1.1
 * section, and one without programs the 1.0, 1.1 or 1.2 section.
 * docs/symbolized-section.md is the normative description.
 */
#include "common/io.h"
#include "symsec.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define NONE UINT32_MAX
#define HEADER_SIZE 64u
#define HEADER_SIZE_FACTS 80u /* 1.1: facts flags, intervals count and offset */
#define HEADER_SIZE_TEMPS 96u /* 1.2: temporaries count, 0, offset */
#define HEADER_SIZE_PROGRAMS 112u /* 1.3: programs count, 0, offset */
#define ENTRY_SIZE 32u
#define NODE_SIZE 8u
#define STRING_SIZE 8u
#define TEMP_SIZE 16u
#define MAX_PATH_DEPTH 4096u

/* ---- writing -------------------------------------------------------------- */

typedef struct writer {
  mp_profile *strs; /* interner for the section's strings */
  mp_map nodes; /* (component, parent) -> node id */
  uint32_t *node_comp, *node_parent;
  size_t n_nodes, cap_nodes;
} writer;

static uint32_t node_get(writer *w, uint32_t comp, uint32_t parent) {
  uint32_t node = mp_map_get_or_put(&w->nodes, (uint64_t)comp << 32 | parent,
                                    (uint32_t)w->n_nodes);
  if (node != MP_MAP_EMPTY) return node;
  size_t cap = w->cap_nodes;
  MP_VEC_RESERVE(w->node_comp, w->cap_nodes, w->n_nodes + 1);
  w->cap_nodes = cap;
  MP_VEC_RESERVE(w->node_parent, w->cap_nodes, w->n_nodes + 1);
  w->node_comp[w->n_nodes] = comp;
  w->node_parent[w->n_nodes] = parent;
  return (uint32_t)w->n_nodes++;
}

/* Split on every '/' so that joining the components with '/' gives the path
 * back exactly ("/a/b" -> "", "a", "b"); parents always precede children. */
static uint32_t path_node(writer *w, const char *path) {
  uint32_t parent = NONE;
  for (const char *s = path;;) {
    const char *e = strchr(s, '/');
    size_t n = e ? (size_t)(e - s) : strlen(s);
    parent = node_get(w, mp_intern_string(w->strs, s, n), parent);
    if (!e) return parent;
    s = e + 1;
  }
}

static void pad8(mp_buf *out, size_t base) {
  while ((out->len - base) % 8) mp_buf_u8(out, 0);
}

static void write_strings(mp_buf *out, size_t base, const mp_profile *s,
                          uint64_t *strings_off, uint64_t *blob_off,
                          uint64_t *blob_size) {
  *strings_off = out->len - base;
  uint32_t at = 0;
  for (size_t i = 0; i < s->n_strings; i++) {
    uint32_t len = (uint32_t)strlen(mp_string(s, (uint32_t)i));
    mp_buf_u32(out, at);
    mp_buf_u32(out, len);
    at += len;
  }
  *blob_off = out->len - base;
  for (size_t i = 0; i < s->n_strings; i++) {
    const char *str = mp_string(s, (uint32_t)i);
    mp_buf_put(out, str, strlen(str));
  }
  *blob_size = out->len - base - *blob_off;
  pad8(out, base);
}

int mp_symsec_has_facts(const mp_profile *p) {
  return mp_max_interval(p) != 0 || p->uninstrumented;
}

/* A written stack's count of temporary allocations under its key. */
typedef struct temp_entry {
  uint64_t key, count;
} temp_entry;

static int cmp_temp_entry(const void *a, const void *b) {
  uint64_t x = ((const temp_entry *)a)->key, y = ((const temp_entry *)b)->key;
  return x < y ? -1 : x > y;
}

/* The written stacks that have temporary allocations, by key; *n of them. */
static temp_entry *temp_entries(const mp_profile *p, const mp_symsec_keys *k,
                                size_t *n) {
  temp_entry *t = mp_xmalloc((k->n_stacks + 1) * sizeof *t);
  *n = 0;
  for (size_t i = 0; i < k->n_stacks; i++) {
    uint64_t c = mp_temporaries(p, k->stacks[i]);
    if (c) t[(*n)++] = (temp_entry){k->stack_keys[i], c};
  }
  qsort(t, *n, sizeof *t, cmp_temp_entry);
  return t;
}

int mp_symsec_has_temporaries(const mp_profile *p, const mp_symsec_keys *k) {
  for (size_t i = 0; i < k->n_stacks; i++)
    if (mp_temporaries(p, k->stacks[i])) return 1;
  return 0;
}

/* The 1.2 header fields and the temporaries table, at the section's end. */
static void write_temporaries(mp_buf *out, size_t base, const temp_entry *t,
                              size_t n) {
  uint64_t off = out->len - base;
  for (size_t i = 0; i < n; i++) {
    mp_buf_u64(out, t[i].key);
    mp_buf_u64(out, t[i].count);
  }
  uint32_t h32[2] = {(uint32_t)n, 0};
  memcpy(out->data + base + HEADER_SIZE_FACTS, h32, sizeof h32);
  memcpy(out->data + base + HEADER_SIZE_FACTS + 8, &off, sizeof off);
}

int mp_symsec_has_programs(const mp_profile *p) { return p->n_programs != 0; }

static int cmp_program(const void *a, const void *b) {
  return strcmp((*(const mp_program *const *)a)->path, (*(const mp_program *const *)b)->path);
}

/* The 1.3 header fields and the programs table, at the section's end, by
 * path (the order of the inputs does not show in the file). */
static void write_programs(mp_buf *out, size_t base, const mp_profile *p) {
  uint64_t off = out->len - base;
  const mp_program **v = mp_xmalloc((p->n_programs + 1) * sizeof *v);
  for (size_t i = 0; i < p->n_programs; i++) v[i] = &p->programs[i];
  qsort(v, p->n_programs, sizeof *v, cmp_program);
  for (size_t i = 0; i < p->n_programs; i++) {
    uint32_t len = (uint32_t)strlen(v[i]->path);
    mp_buf_u32(out, v[i]->inputs);
    mp_buf_u32(out, len);
    mp_buf_put(out, v[i]->path, len);
    pad8(out, base);
  }
  free(v);
  uint32_t h32[2] = {(uint32_t)p->n_programs, 0};
  memcpy(out->data + base + HEADER_SIZE_TEMPS, h32, sizeof h32);
  memcpy(out->data + base + HEADER_SIZE_TEMPS + 8, &off, sizeof off);
}

/* The 1.1 header fields and the intervals table, at the section's end. */
static void write_facts(mp_buf *out, size_t base, const mp_profile *p) {
  uint64_t off = out->len - base;
  for (uint32_t i = 0; i < p->intervals.n; i++) mp_buf_u64(out, p->intervals.v[i]);
  uint32_t h32[2] = {p->uninstrumented ? MP_SYMSEC_FACT_UNINSTRUMENTED : 0,
                     p->intervals.n};
  memcpy(out->data + base + HEADER_SIZE, h32, sizeof h32);
  memcpy(out->data + base + HEADER_SIZE + 8, &off, sizeof off);
}

static void write_trailer(mp_buf *out, size_t base, uint32_t minor) {
  uint64_t size = out->len - base;
  uint32_t crc = (uint32_t)crc32_z(0, out->data + base, (z_size_t)size);
  mp_buf_put(out, MP_SYMSEC_MAGIC, 8);
  mp_buf_u32(out, MP_SYMSEC_MAJOR);
  mp_buf_u32(out, minor);
  mp_buf_u64(out, base);
  mp_buf_u64(out, size);
  mp_buf_u32(out, crc);
  mp_buf_u32(out, 0);
}

/* Per model frame, its entry flags: the leaf frames of the contexts a
 * library allocated (mp_alloc_site.in_library). */
static uint8_t *entry_flags(const mp_profile *p) {
  uint8_t *fl = mp_xcalloc(p->n_frames + 1, 1);
  for (size_t i = 0; i < p->n_records; i++)
    for (size_t j = 0; j < p->records[i].n_allocs; j++) {
      const mp_alloc_site *a = mp_alloc_of(&p->records[i], j);
      if (a->in_library && p->stacks[a->stack].len)
        fl[mp_stack_frames(p, a->stack)[0]] |= MP_SYMSEC_ENTRY_LIBRARY_CALL;
    }
  return fl;
}

void mp_symsec_write(mp_buf *out, const mp_profile *p, const mp_symsec_keys *k) {
  writer w = {mp_profile_new(), {0}, NULL, NULL, 0, 0};
  mp_map_init(&w.nodes, 1);
  uint32_t *file_node = mp_xmalloc((p->n_strings + 1) * 4);
  memset(file_node, 0xff, (p->n_strings + 1) * 4);

  while (out->len % 8) mp_buf_u8(out, 0);
  size_t base = out->len;
  size_t n_temps;
  temp_entry *temps_of = temp_entries(p, k, &n_temps);
  /* a 1.2 header holds the facts' fields too, and a 1.3 one the
   * temporaries' fields: they are always written with it (the intervals
   * the inputs had, 0 for a full record; no temporaries) */
  int programs = mp_symsec_has_programs(p);
  int temps = n_temps || programs;
  int facts = mp_symsec_has_facts(p) || temps;
  uint32_t header_size = programs ? HEADER_SIZE_PROGRAMS
                         : temps  ? HEADER_SIZE_TEMPS
                         : facts  ? HEADER_SIZE_FACTS
                                  : HEADER_SIZE;
  for (unsigned i = 0; i < header_size; i++) mp_buf_u8(out, 0);
  uint8_t *flags = entry_flags(p);
  uint32_t n_entries = 0;
  for (size_t i = 0; i < k->n_frames; i++) {
    const mp_frame_sym *s = &p->syms[k->frames[i]];
    if (s->name == MP_NO_STRING && s->file == MP_NO_STRING) continue;
    const char *name = mp_string(p, s->name), *file = mp_string(p, s->file);
    uint32_t node = NONE;
    if (file) {
      if (file_node[s->file] == NONE) file_node[s->file] = path_node(&w, file);
      node = file_node[s->file];
    }
    mp_buf_u64(out, k->frame_keys[i]);
    mp_buf_u32(out, name ? mp_intern_string(w.strs, name, strlen(name)) : NONE);
    mp_buf_u32(out, node);
    mp_buf_u32(out, s->line);
    mp_buf_u32(out, s->column);
    mp_buf_u32(out, s->discriminator);
    mp_buf_u32(out, flags[k->frames[i]]);
    n_entries++;
  }
  uint64_t nodes_off = out->len - base;
  for (size_t i = 0; i < w.n_nodes; i++) {
    mp_buf_u32(out, w.node_comp[i]);
    mp_buf_u32(out, w.node_parent[i]);
  }
  pad8(out, base);
  uint64_t strings_off, blob_off, blob_size;
  write_strings(out, base, w.strs, &strings_off, &blob_off, &blob_size);

  if (facts) write_facts(out, base, p);
  if (temps) write_temporaries(out, base, temps_of, n_temps);
  if (programs) write_programs(out, base, p);

  uint32_t h32[6] = {header_size, k->key_kind, n_entries, ENTRY_SIZE,
                     (uint32_t)w.n_nodes, (uint32_t)w.strs->n_strings};
  memcpy(out->data + base, h32, sizeof h32);
  uint64_t h64[5] = {header_size, nodes_off, strings_off, blob_off, blob_size};
  memcpy(out->data + base + 24, h64, sizeof h64);
  write_trailer(out, base, programs ? MP_SYMSEC_MINOR_PROGRAMS
                           : temps  ? MP_SYMSEC_MINOR_TEMPORARIES
                           : facts  ? MP_SYMSEC_MINOR_FACTS
                                    : 0);

  free(temps_of);
  free(flags);
  free(file_node);
  free(w.node_comp);
  free(w.node_parent);
  mp_map_free(&w.nodes);
  mp_profile_free(w.strs);
}

/* ---- reading -------------------------------------------------------------- */

int mp_symsec_present(const void *data, size_t len) {
  return len >= MP_SYMSEC_TRAILER_SIZE &&
         memcmp((const unsigned char *)data + len - MP_SYMSEC_TRAILER_SIZE,
                MP_SYMSEC_MAGIC, 8) == 0;
}

typedef struct sec {
  const unsigned char *d; /* section start */
  uint64_t size, base;
  uint32_t key_kind, n_entries, entry_size, n_nodes, n_strings;
  uint64_t entries_off, nodes_off, strings_off, blob_off, blob_size;
  uint32_t facts, n_intervals; /* 1.1 */
  uint64_t intervals_off;
  uint32_t n_temps; /* 1.2 */
  uint64_t temps_off;
} sec;

/* [off, off + count*elem) inside the section? */
static int table_fits(const sec *s, uint64_t off, uint64_t count,
                      uint64_t elem) {
  return off <= s->size && count <= (s->size - off) / elem;
}

static int read_trailer(const unsigned char *d, size_t len, sec *s,
                        mp_err *err) {
  const unsigned char *t = d + len - MP_SYMSEC_TRAILER_SIZE;
  uint64_t tpos = len - MP_SYMSEC_TRAILER_SIZE;
  uint32_t major = mp_rd32(t + 8), minor = mp_rd32(t + 12);
  if (major != MP_SYMSEC_MAJOR)
    return mp_fail(err, "symbolized section has version %u.%u; this reader "
                   "understands major version %u only", major, minor,
                   MP_SYMSEC_MAJOR);
  s->base = mp_rd64(t + 16);
  s->size = mp_rd64(t + 24);
  if (s->base > tpos || s->size != tpos - s->base)
    return mp_fail(err, "symbolized section trailer at offset 0x%llx: "
                   "section 0x%llx+0x%llx does not end at the trailer",
                   (unsigned long long)tpos, (unsigned long long)s->base,
                   (unsigned long long)s->size);
  s->d = d + s->base;
  uint32_t crc = (uint32_t)crc32_z(0, s->d, (z_size_t)s->size);
  if (crc != mp_rd32(t + 32))
    return mp_fail(err, "symbolized section at offset 0x%llx is damaged "
                   "(crc32 0x%08x, trailer says 0x%08x)",
                   (unsigned long long)s->base, crc, mp_rd32(t + 32));
  return 0;
}

static int read_header(sec *s, mp_err *err) {
  if (s->size < HEADER_SIZE || mp_rd32(s->d) < HEADER_SIZE ||
      mp_rd32(s->d) > s->size)
    return mp_fail(err, "symbolized section at offset 0x%llx: bad header "
                   "size", (unsigned long long)s->base);
  s->key_kind = mp_rd32(s->d + 4);
  s->n_entries = mp_rd32(s->d + 8);
  s->entry_size = mp_rd32(s->d + 12);
  s->n_nodes = mp_rd32(s->d + 16);
  s->n_strings = mp_rd32(s->d + 20);
  s->entries_off = mp_rd64(s->d + 24);
  s->nodes_off = mp_rd64(s->d + 32);
  s->strings_off = mp_rd64(s->d + 40);
  s->blob_off = mp_rd64(s->d + 48);
  s->blob_size = mp_rd64(s->d + 56);
  const char *bad = NULL;
  if (s->key_kind > MP_SYMSEC_KEY_FRAME_ID) bad = "unknown frame key kind";
  else if (s->entry_size < ENTRY_SIZE) bad = "entry size below 32";
  else if (!table_fits(s, s->entries_off, s->n_entries, s->entry_size))
    bad = "entry table outside the section";
  else if (!table_fits(s, s->nodes_off, s->n_nodes, NODE_SIZE))
    bad = "path node table outside the section";
  else if (!table_fits(s, s->strings_off, s->n_strings, STRING_SIZE))
    bad = "string table outside the section";
  else if (!table_fits(s, s->blob_off, s->blob_size, 1))
    bad = "string blob outside the section";
  if (bad)
    return mp_fail(err, "symbolized section at offset 0x%llx: %s",
                   (unsigned long long)s->base, bad);
  return 0;
}

/* The 1.1 facts, when the header is long enough to hold them: the
 * intervals table must lie inside the section, its values increasing
 * (distinct, in order: what the writer puts). */
static int read_facts(sec *s, mp_symsec *out, mp_err *err) {
  if (mp_rd32(s->d) < HEADER_SIZE_FACTS) return 0;
  s->facts = mp_rd32(s->d + 64);
  s->n_intervals = mp_rd32(s->d + 68);
  s->intervals_off = mp_rd64(s->d + 72);
  if (!table_fits(s, s->intervals_off, s->n_intervals, 8))
    return mp_fail(err, "symbolized section at offset 0x%llx: %u sampling "
                   "intervals at 0x%llx are outside the section",
                   (unsigned long long)s->base, s->n_intervals,
                   (unsigned long long)s->intervals_off);
  out->intervals = mp_xmalloc(((size_t)s->n_intervals + 1) * 8);
  for (uint32_t i = 0; i < s->n_intervals; i++) {
    uint64_t r = mp_rd64(s->d + s->intervals_off + 8ull * i);
    if (i && r <= out->intervals[i - 1])
      return mp_fail(err, "symbolized section at offset 0x%llx: sampling "
                     "interval %u (%llu) does not follow %llu in increasing "
                     "order", (unsigned long long)s->base, i,
                     (unsigned long long)r,
                     (unsigned long long)out->intervals[i - 1]);
    out->intervals[i] = r;
  }
  out->n_intervals = s->n_intervals;
  out->has_facts = 1;
  out->uninstrumented = (s->facts & MP_SYMSEC_FACT_UNINSTRUMENTED) != 0;
  return 0;
}

/* The 1.2 temporaries, when the header is long enough to hold them: the
 * table must lie inside the section, its keys increasing (distinct, in
 * order) and every count above 0 (what the writer puts). */
static int read_temporaries(sec *s, mp_symsec *out, mp_err *err) {
  if (mp_rd32(s->d) < HEADER_SIZE_TEMPS) return 0;
  s->n_temps = mp_rd32(s->d + 80);
  s->temps_off = mp_rd64(s->d + 88);
  if (!table_fits(s, s->temps_off, s->n_temps, TEMP_SIZE))
    return mp_fail(err, "symbolized section at offset 0x%llx: %u temporary "
                   "allocation entries at 0x%llx are outside the section",
                   (unsigned long long)s->base, s->n_temps,
                   (unsigned long long)s->temps_off);
  out->temp_keys = mp_xmalloc(((size_t)s->n_temps + 1) * 16);
  out->temp_counts = out->temp_keys + s->n_temps + 1;
  for (uint32_t i = 0; i < s->n_temps; i++) {
    const unsigned char *e = s->d + s->temps_off + (uint64_t)TEMP_SIZE * i;
    uint64_t key = mp_rd64(e), n = mp_rd64(e + 8);
    if (i && key <= out->temp_keys[i - 1])
      return mp_fail(err, "symbolized section at offset 0x%llx: temporary "
                     "allocation entry %u (call stack 0x%llx) does not follow "
                     "0x%llx in increasing order", (unsigned long long)s->base,
                     i, (unsigned long long)key,
                     (unsigned long long)out->temp_keys[i - 1]);
    if (n == 0)
      return mp_fail(err, "symbolized section at offset 0x%llx: temporary "
                     "allocation entry %u (call stack 0x%llx) has count 0",
                     (unsigned long long)s->base, i, (unsigned long long)key);
    out->temp_keys[i] = key;
    out->temp_counts[i] = n;
  }
  out->n_temporaries = s->n_temps;
  return 0;
}

/* The 1.3 programs, when the header is long enough to hold them: each
 * entry inside the section, its count above 0, the paths non-empty and
 * increasing (distinct, in order: what the writer puts). */
static int read_programs(sec *s, mp_symsec *out, mp_err *err) {
  if (mp_rd32(s->d) < HEADER_SIZE_PROGRAMS) return 0;
  uint32_t n = mp_rd32(s->d + 96);
  uint64_t at = mp_rd64(s->d + 104);
  unsigned long long base = (unsigned long long)s->base;
  if (!table_fits(s, at, n, 8))
    return mp_fail(err, "symbolized section at offset 0x%llx: %u programs at "
                   "0x%llx are outside the section", base, n, (unsigned long long)at);
  out->programs = mp_xcalloc((size_t)n + 1, sizeof *out->programs);
  for (uint32_t i = 0; i < n; i++) {
    if (s->size - at < 8)
      return mp_fail(err, "symbolized section at offset 0x%llx: program %u "
                     "runs past the section", base, i);
    uint32_t inputs = mp_rd32(s->d + at), len = mp_rd32(s->d + at + 4);
    if (len == 0 || len > s->size - at - 8)
      return mp_fail(err, "symbolized section at offset 0x%llx: program %u's "
                     "path (%u bytes) is empty or runs past the section", base, i, len);
    if (inputs == 0)
      return mp_fail(err, "symbolized section at offset 0x%llx: program %u "
                     "has 0 inputs", base, i);
    char *path = mp_xmalloc((size_t)len + 1);
    memcpy(path, s->d + at + 8, len);
    path[len] = 0;
    out->programs[i] = (mp_program){path, inputs};
    out->n_programs = i + 1; /* freed with the section on failure */
    if (memchr(path, 0, len))
      return mp_fail(err, "symbolized section at offset 0x%llx: program %u's "
                     "path holds a zero byte", base, i);
    if (i && strcmp(out->programs[i - 1].path, path) >= 0)
      return mp_fail(err, "symbolized section at offset 0x%llx: program %u's "
                     "path is not after the one before it in increasing order",
                     base, i);
    at += (8 + (uint64_t)len + 7) & ~(uint64_t)7;
  }
  return 0;
}

static int get_string(const sec *s, uint32_t id, const unsigned char **p,
                      uint32_t *n, mp_err *err) {
  const unsigned char *e = s->d + s->strings_off + (uint64_t)id * STRING_SIZE;
  uint32_t off = mp_rd32(e), len = mp_rd32(e + 4);
  if (off > s->blob_size || len > s->blob_size - off)
    return mp_fail(err, "symbolized section: string %u (0x%x+0x%x) is "
                   "outside the blob", id, off, len);
  *p = s->d + s->blob_off + off;
  *n = len;
  return 0;
}

typedef struct strbuf {
  char *d;
  size_t n, cap;
} strbuf;

static void sb_put(strbuf *b, const void *p, size_t n) {
  MP_VEC_RESERVE(b->d, b->cap, b->n + n + 1);
  memcpy(b->d + b->n, p, n);
  b->n += n;
}

/* Append the string id's text plus NUL; returns its storage offset. */
static int add_name(const sec *s, uint32_t id, strbuf *b, uint64_t *at,
                    mp_err *err) {
  const unsigned char *p = NULL;
  uint32_t n = 0;
  if (id >= s->n_strings)
    return mp_fail(err, "symbolized section: name string %u out of range "
                   "(%u strings)", id, s->n_strings);
  if (get_string(s, id, &p, &n, err)) return -1;
  *at = b->n;
  sb_put(b, p, n);
  sb_put(b, "", 1);
  return 0;
}

static int add_path(const sec *s, uint32_t node, strbuf *b, uint64_t *at,
                    mp_err *err) {
  uint32_t chain[MAX_PATH_DEPTH], depth = 0;
  for (uint32_t n = node; n != NONE; depth++) {
    if (n >= s->n_nodes)
      return mp_fail(err, "symbolized section: path node %u out of range "
                     "(%u nodes)", n, s->n_nodes);
    if (depth == MAX_PATH_DEPTH)
      return mp_fail(err, "symbolized section: path of node %u is deeper "
                     "than %u", node, MAX_PATH_DEPTH);
    chain[depth] = n;
    uint32_t parent = mp_rd32(s->d + s->nodes_off + (uint64_t)n * NODE_SIZE + 4);
    if (parent != NONE && parent >= n)
      return mp_fail(err, "symbolized section: path node %u has parent %u "
                     "(parents must come first)", n, parent);
    n = parent;
  }
  *at = b->n;
  for (uint32_t k = depth; k-- > 0;) {
    uint32_t comp = mp_rd32(s->d + s->nodes_off + (uint64_t)chain[k] * NODE_SIZE);
    const unsigned char *p = NULL;
    uint32_t n = 0;
    if (comp >= s->n_strings)
      return mp_fail(err, "symbolized section: path node %u names string %u "
                     "out of range", chain[k], comp);
    if (get_string(s, comp, &p, &n, err)) return -1;
    if (k != depth - 1) sb_put(b, "/", 1);
    sb_put(b, p, n);
  }
  sb_put(b, "", 1);
  return 0;
}

int mp_symsec_read(const void *data, size_t len, mp_symsec *out,
                   mp_err *err) {
  memset(out, 0, sizeof *out);
  sec s;
  if (!mp_symsec_present(data, len))
    return mp_fail(err, "no symbolized section trailer");
  if (read_trailer(data, len, &s, err) || read_header(&s, err)) return -1;
  if (read_facts(&s, out, err) || read_temporaries(&s, out, err) ||
      read_programs(&s, out, err)) {
    mp_symsec_free(out);
    return -1;
  }
  mp_symsec_entry *e = mp_xcalloc(s.n_entries + 1, sizeof *e);
  uint64_t *name_at = mp_xmalloc((s.n_entries + 1) * 16);
  uint64_t *file_at = name_at + s.n_entries + 1;
  strbuf b = {0};
  sb_put(&b, "", 1);
  for (uint32_t i = 0; i < s.n_entries; i++) {
    const unsigned char *p = s.d + s.entries_off + (uint64_t)i * s.entry_size;
    uint32_t name = mp_rd32(p + 8), file = mp_rd32(p + 12);
    e[i].key = mp_rd64(p);
    e[i].line = mp_rd32(p + 16);
    e[i].column = mp_rd32(p + 20);
    e[i].discriminator = mp_rd32(p + 24);
    e[i].flags = mp_rd32(p + 28);
    name_at[i] = file_at[i] = 0;
    if ((name != NONE && add_name(&s, name, &b, &name_at[i], err)) ||
        (file != NONE && add_path(&s, file, &b, &file_at[i], err))) {
      free(e);
      free(name_at);
      free(b.d);
      mp_symsec_free(out); /* the facts, temporaries and programs read above */
      return -1;
    }
  }
  for (uint32_t i = 0; i < s.n_entries; i++) {
    e[i].name = name_at[i] ? b.d + name_at[i] : NULL;
    e[i].file = file_at[i] ? b.d + file_at[i] : NULL;
  }
  free(name_at);
  out->key_kind = s.key_kind;
  out->entries = e;
  out->n_entries = s.n_entries;
  out->storage = b.d;
  out->llvm_end = s.base;
  return 0;
}

void mp_symsec_free(mp_symsec *s) {
  free(s->entries);
  free(s->storage);
  free(s->intervals);
  free(s->temp_keys); /* temp_counts shares its block */
  for (uint32_t i = 0; i < s->n_programs; i++) free(s->programs[i].path);
  free(s->programs);
  memset(s, 0, sizeof *s);
}
