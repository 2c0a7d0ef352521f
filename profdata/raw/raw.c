/* raw.c - recognising and validating LLVM raw memory profiles (v3, v4, v5;
 * one or more concatenated dumps per file) before anything is built from
 * them (raw_build.c does that).
 *
 * Every count and offset is checked against the bytes that are really there
 * before it is used, so a truncated or corrupt file is refused whole with a
 * message that says what is wrong and at which file offset.
 */
#include "raw.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "include/internal/memprof_format.h"
#include "raw_internal.h"

/* ---- format helpers ------------------------------------------------------ */

int mp_is_raw(const void *data, size_t len) {
  return len >= 8 && raw_u64(data) == MPF_RAW_MAGIC;
}

/* ---- validation ---------------------------------------------------------- */

typedef struct dump_hdr {
  size_t at; /* file offset */
  uint64_t version, total, seg_off, mib_off, stack_off;
} dump_hdr;

static int check_header(const raw_file *f, size_t at, dump_hdr *h,
                        mp_err *err) {
  size_t left = f->len - at;
  if (left < sizeof(mpf_raw_header))
    return mp_fail(err,
                   "truncated dump header at offset 0x%zx: needs 48 bytes, "
                   "%zu remain",
                   at, left);
  const unsigned char *p = f->data + at;
  uint64_t magic = raw_u64(p);
  if (magic != MPF_RAW_MAGIC)
    return mp_fail(err,
                   "bad magic 0x%016" PRIx64
                   " at offset 0x%zx: not a memprof raw profile dump",
                   magic, at);
  h->at = at;
  h->version = raw_u64(p + 8);
  h->total = raw_u64(p + 16);
  h->seg_off = raw_u64(p + 24);
  h->mib_off = raw_u64(p + 32);
  h->stack_off = raw_u64(p + 40);
  if (h->version < MPF_RAW_VERSION_MIN || h->version > MPF_RAW_VERSION_MAX)
    return mp_fail(err,
                   "unsupported raw profile version %" PRIu64
                   " in dump at offset 0x%zx (supported: 3, 4, 5)",
                   h->version, at);
  if (h->total < sizeof(mpf_raw_header) || h->total > left)
    return mp_fail(err,
                   "dump at offset 0x%zx: TotalSize %" PRIu64
                   " does not fit the %zu bytes left in the file "
                   "(truncated file?)",
                   at, h->total, left);
  /* each section needs at least its u64 count */
  if (h->seg_off < sizeof(mpf_raw_header) || h->seg_off > h->total - 8 ||
      h->mib_off < h->seg_off + 8 || h->mib_off > h->total - 8 ||
      h->stack_off < h->mib_off + 8 || h->stack_off > h->total - 8)
    return mp_fail(err,
                   "dump at offset 0x%zx: section offsets out of order or "
                   "outside the dump (SegmentOffset 0x%" PRIx64
                   ", MIBOffset 0x%" PRIx64 ", StackOffset 0x%" PRIx64
                   ", TotalSize 0x%" PRIx64 ")",
                   at, h->seg_off, h->mib_off, h->stack_off, h->total);
  return 0;
}

static int check_segments(const raw_file *f, const dump_hdr *h, raw_dump *d,
                          mp_err *err) {
  size_t at = h->at + h->seg_off;
  uint64_t room = h->mib_off - h->seg_off - 8;
  uint64_t n = raw_u64(f->data + at);
  if (n > room / sizeof(mpf_raw_segment))
    return mp_fail(err,
                   "segment table at offset 0x%zx: %" PRIu64
                   " entries of 64 bytes do not fit in the %" PRIu64
                   " bytes before the MIB table",
                   at, n, room);
  d->segs = f->data + at + 8;
  d->n_segs = n;
  for (uint64_t i = 0; i < n; i++) {
    mpf_raw_segment s;
    memcpy(&s, d->segs + i * sizeof s, sizeof s);
    size_t so = at + 8 + (size_t)i * sizeof s;
    if (s.build_id_size > MPF_BUILD_ID_MAX)
      return mp_fail(err,
                     "segment %" PRIu64 " at offset 0x%zx: BuildIdSize %" PRIu64
                     " exceeds %u",
                     i, so, s.build_id_size, MPF_BUILD_ID_MAX);
    if (s.start > s.end)
      return mp_fail(err,
                     "segment %" PRIu64 " at offset 0x%zx: Start 0x%" PRIx64
                     " is above End 0x%" PRIx64,
                     i, so, s.start, s.end);
  }
  return 0;
}

static int check_mibs(const raw_file *f, const dump_hdr *h, raw_dump *d,
                      mp_err *err) {
  size_t at = h->at + h->mib_off;
  size_t end = h->at + h->stack_off;
  uint32_t v = (uint32_t)h->version;
  uint64_t n = raw_u64(f->data + at);
  size_t fixed = mib_fixed_size(v);
  if (n > (end - at - 8) / fixed)
    return mp_fail(err,
                   "MIB table at offset 0x%zx: %" PRIu64
                   " entries cannot fit in the %zu bytes before the stack "
                   "table (at least %zu bytes each)",
                   at, n, end - at - 8, fixed);
  d->mibs = f->data + at + 8;
  d->n_mibs = n;
  size_t cur = at + 8;
  for (uint64_t i = 0; i < n; i++) {
    if (end - cur < fixed)
      return mp_fail(err,
                     "MIB %" PRIu64 " at offset 0x%zx: needs %zu bytes, %zu "
                     "left before the stack table",
                     i, cur, fixed, end - cur);
    uint64_t hs = mib_hist_size(v, f->data + cur);
    if (hs > MP_HIST_MAX_ENTRIES)
      return mp_fail(err,
                     "MIB %" PRIu64 " at offset 0x%zx: AccessHistogramSize %" PRIu64
                     " is larger than %u", i, cur, hs, MP_HIST_MAX_ENTRIES);
    uint64_t need = fixed + hs * hist_entry_size(v);
    if (end - cur < need)
      return mp_fail(err,
                     "MIB %" PRIu64 " at offset 0x%zx: AccessHistogramSize %" PRIu64
                     " needs %" PRIu64 " bytes, %zu left before the stack table",
                     i, cur, hs, need, end - cur);
    cur += need;
  }
  return 0;
}

static int add_stack(raw_file *f, const unsigned char *entry, uint32_t dump,
                     mp_err *err) {
  uint64_t id = raw_u64(entry), k = raw_u64(entry + 8);
  if (f->n_stacks >= UINT32_MAX - 1)
    return mp_fail(err, "too many distinct stacks");
  uint32_t prev =
      mp_map_get_or_put(&f->stack_index, id, (uint32_t)f->n_stacks);
  if (prev != UINT32_MAX) {
    const raw_stack *s = &f->stacks[prev];
    if (s->n_pcs != k || memcmp(s->pcs, entry + 16, k * 8) != 0)
      return mp_fail(err,
                     "stack at offset 0x%zx: got different call stack for "
                     "same id 0x%016" PRIx64 " (first seen at offset 0x%zx)",
                     (size_t)(entry - f->data), id,
                     (size_t)(s->pcs - 16 - f->data));
    return 0;
  }
  MP_VEC_RESERVE(f->stacks, f->cap_stacks, f->n_stacks + 1);
  f->stacks[f->n_stacks++] =
      (raw_stack){.id = id, .pcs = entry + 16, .n_pcs = k, .dump = dump,
                  .state = RAW_STACK_NEW};
  return 0;
}

/* The tables after the note's fixed fields (docs/raw-format.md, section
 * 7): the segments' paths (report reads them: raw_libs.c), then the
 * temporary allocations, kept for raw_mibs.c.  A note of 32 bytes has
 * none. */
static int read_note_tables(raw_file *f, raw_dump *d, size_t at, size_t end,
                            mp_err *err) {
  if (end - at < 8 || raw_u64(f->data + at) != d->n_segs)
    return mp_fail(err, "runtime note at offset 0x%zx: its path list does "
                        "not list the dump's %" PRIu64 " segments",
                   at, d->n_segs);
  at += 8;
  for (uint64_t i = 0; i < d->n_segs; i++) {
    uint64_t len = end - at >= 8 ? raw_u64(f->data + at) : 0;
    if (end - at < 8 || len > end - at - 8 ||
        ((len + 7) & ~(uint64_t)7) > end - at - 8)
      return mp_fail(err, "runtime note at offset 0x%zx: path %" PRIu64
                          " runs past the note's end", at, i);
    if (i == 0 && len && !f->program) { /* the main program's (rt_dump.c) */
      f->program = (const char *)f->data + at + 8;
      f->program_len = (size_t)len;
    }
    at += 8 + ((len + 7) & ~(uint64_t)7);
  }
  if (end - at < 8 || raw_u64(f->data + at) != (end - at - 8) / 16 ||
      (end - at - 8) % 16)
    return mp_fail(err, "runtime note at offset 0x%zx: its table of "
                        "temporary allocations does not fill the note", at);
  uint64_t n = raw_u64(f->data + at);
  d->temps = f->data + at + 8;
  d->n_temps = n;
  return 0;
}

/* The runtime's note, if one follows the stack table at `at` (the bytes
 * up to the dump's end are padding for LLVM's readers); a dump without
 * one recorded every allocation. */
static int read_note(raw_file *f, raw_dump *d, size_t at, size_t end,
                     mp_err *err) {
  mpf_raw_note n = {0};
  if (end - at >= sizeof n) memcpy(&n, f->data + at, sizeof n);
  if (n.magic != MPF_RAW_NOTE_MAGIC || n.size < sizeof n) n.sample_interval = n.flags = n.size = 0;
  if (n.size > end - at)
    return mp_fail(err, "runtime note at offset 0x%zx: its size %" PRIu64
                        " runs past the dump's end", at, n.size);
  mp_intervals_add(&f->intervals, n.sample_interval);
  if (n.flags & MPF_RAW_NOTE_UNINSTRUMENTED) f->uninstrumented = 1;
  if (n.size > sizeof n)
    return read_note_tables(f, d, at + sizeof n, at + n.size, err);
  return 0;
}

static int check_stacks(raw_file *f, const dump_hdr *h, uint32_t dump,
                        mp_err *err) {
  size_t at = h->at + h->stack_off;
  size_t end = h->at + h->total;
  uint64_t n = raw_u64(f->data + at);
  if (n > (end - at - 8) / 16)
    return mp_fail(err,
                   "stack table at offset 0x%zx: %" PRIu64
                   " entries cannot fit in the %zu bytes left in the dump",
                   at, n, end - at - 8);
  size_t cur = at + 8;
  mp_map_reserve(&f->stack_index, f->stack_index.used + (size_t)n);
  /* one allocation for the whole table (n fits in the file, 16+ bytes
   * each) instead of a copy at every doubling */
  if (f->n_stacks + n > f->cap_stacks) {
    f->cap_stacks = f->n_stacks + (size_t)n;
    f->stacks = mp_xrealloc(f->stacks, (f->cap_stacks + 1) * sizeof *f->stacks);
  }
  for (uint64_t i = 0; i < n; i++) {
    if (end - cur < 16)
      return mp_fail(err,
                     "stack %" PRIu64 " at offset 0x%zx: needs 16 bytes, %zu "
                     "left in the dump",
                     i, cur, end - cur);
    uint64_t k = raw_u64(f->data + cur + 8);
    if (k > (end - cur - 16) / 8)
      return mp_fail(err,
                     "stack %" PRIu64 " (id 0x%016" PRIx64 ") at offset 0x%zx: "
                     "%" PRIu64 " PCs do not fit in the %zu bytes left in the "
                     "dump",
                     i, raw_u64(f->data + cur), cur, k, end - cur - 16);
    if (add_stack(f, f->data + cur, dump, err) != 0) return -1;
    cur += 16 + (size_t)k * 8;
  }
  return read_note(f, &f->dumps[dump], cur, end, err);
}

/* Every MIB must name a stack some dump of the file lists; remember which,
 * so that building does not look it up again.  Writers list a dump's
 * stacks in the order of its MIBs, so the stack after the previous MIB's
 * is tried first: a match needs no lookup (ids are unique in f->stacks). */
static int check_mib_stacks(raw_file *f, mp_err *err) {
  uint32_t next = 0;
  for (size_t d = 0; d < f->n_dumps; d++) {
    raw_dump *rd = &f->dumps[d];
    const unsigned char *e = rd->mibs;
    rd->mib_stack = mp_xmalloc(((size_t)rd->n_mibs + 1) * 4);
    for (uint64_t i = 0; i < rd->n_mibs; i++) {
      uint64_t id = raw_u64(e);
      uint32_t s = next < f->n_stacks && f->stacks[next].id == id
                       ? next
                       : mp_map_get(&f->stack_index, id);
      if (s == UINT32_MAX)
        return mp_fail(err,
                       "MIB %" PRIu64 " at offset 0x%zx: stack id 0x%016" PRIx64
                       " is in no stack table",
                       i, (size_t)(e - f->data), id);
      rd->mib_stack[i] = s;
      next = s + 1;
      e += raw_mib_entry_size(rd->version, e);
    }
    for (uint64_t i = 0; i < rd->n_temps; i++) {
      uint64_t id = raw_u64(rd->temps + 16 * i);
      if (mp_map_get(&f->stack_index, id) == UINT32_MAX)
        return mp_fail(err,
                       "runtime note of the dump at offset 0x%" PRIx64
                       ": temporary allocations for stack id 0x%016" PRIx64
                       ", which is in no stack table",
                       rd->at, id);
    }
  }
  return 0;
}

static int parse_file(raw_file *f, mp_err *err) {
  if (f->len == 0) return mp_fail(err, "empty file");
  size_t at = 0;
  while (at < f->len) {
    dump_hdr h = {0};
    if (check_header(f, at, &h, err) != 0) return -1;
    f->dumps = mp_xrealloc(f->dumps, (f->n_dumps + 1) * sizeof *f->dumps);
    raw_dump *d = &f->dumps[f->n_dumps];
    memset(d, 0, sizeof *d);
    d->at = at;
    d->version = (uint32_t)h.version;
    if (check_segments(f, &h, d, err) != 0 || check_mibs(f, &h, d, err) != 0 ||
        check_stacks(f, &h, (uint32_t)f->n_dumps, err) != 0)
      return -1;
    f->n_dumps++;
    at += h.total;
  }
  return check_mib_stacks(f, err);
}

void mp_raw_file_free(mp_raw_file *f) {
  if (!f) return;
  raw_keys_free(f);
  mp_map_free(&f->stack_index);
  for (size_t d = 0; d < f->n_dumps; d++) free(f->dumps[d].mib_stack);
  free(f->dumps);
  free(f->stacks);
  free(f->intervals.v);
  free(f->calls);
  free(f);
}

int mp_raw_prepare(const mp_raw_reader *r, const char *name, const void *data,
                   size_t len, mp_raw_file **out, mp_err *err) {
  raw_file *f = mp_xcalloc(1, sizeof *f);
  f->name = name;
  f->data = data;
  f->len = len;
  mp_map_init(&f->stack_index, 1);
  raw_reader_modules(r, &f->sym, &f->mods, &f->n_mods, &f->n_given);
  if (parse_file(f, err) != 0 || raw_prepare_keys(f, err) != 0) {
    mp_raw_file_free(f);
    *out = NULL;
    return -1;
  }
  *out = f;
  return 0;
}

int mp_raw_add_stacks(mp_raw_reader *r, mp_raw_file *f, mp_err *err) {
  return raw_build_stacks(f, r, err);
}

void mp_raw_add_mibs(mp_raw_reader *r, mp_raw_file *f) {
  raw_add_mibs(f, raw_reader_mib_ctx(r));
}

int mp_raw_mostly_new(const mp_raw_file *f) {
  return f->n_new * 8 >= f->n_stacks && f->n_new > 0;
}

int mp_raw_add(mp_raw_reader *r, mp_raw_file *f, mp_err *err) {
  if (mp_raw_add_stacks(r, f, err) != 0) return -1;
  mp_raw_add_mibs(r, f);
  return 0;
}

int mp_raw_reader_read(mp_raw_reader *r, const char *name, const void *data,
                       size_t len, mp_err *err) {
  mp_raw_file *f;
  if (mp_raw_prepare(r, name, data, len, &f, err) != 0) return -1;
  int rc = mp_raw_add(r, f, err);
  mp_raw_file_free(f);
  return rc;
}

int mp_read_raw(mp_profile *p, const char *name, const void *data, size_t len,
                msym_ctx *sym, mp_err *err) {
  mp_raw_reader *r = mp_raw_reader_new(p, sym);
  int rc = mp_raw_reader_read(r, name, data, len, err);
  mp_raw_reader_free(r);
  return rc;
}
