/* test_rt_dump.c - the runtime's raw-profile writer (runtime/output/rt_dump.c,
 * compiled in unchanged with test/stubs/rt_dump_stubs.c), in versions 3, 4
 * and 5: a fixed table of MIB entries (every field a different value,
 * histograms of several lengths), stacks of 0 to 256 PCs (enough to cross
 * the writer's output chunks many times) and a module list (build-id
 * notes, executable and other PT_LOADs, an unnamed module that must be
 * left out) are dumped, and the bytes are checked field by field against
 * docs/raw-format.md (its offsets, sizes and padding, written out here,
 * not taken from the structs the writer uses); then two dumps in one file
 * are read back with profdata's raw reader (mp_raw_prepare), which must
 * find the same segments, ids, MIB values, histograms and PCs. */
#define _GNU_SOURCE /* struct dl_phdr_info */
#include <elf.h>
#include <inttypes.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

#include "test/unit/check.h"
#include "profdata/model/model.h"
#include "profdata/raw/raw.h"
#include "profdata/raw/raw_internal.h"
#include "rt_dump_stubs.h"
#include "symbolizer/symbolizer.h"

/* ---- the table -------------------------------------------------------- */

#define N_ENTRIES 1201 /* odd: v3's MIB region ends in padding */

static rt_stub_entry entries[N_ENTRIES];
static uintptr_t pcs[N_ENTRIES][RT_MAX_STACK];
static uint64_t hists[N_ENTRIES][8];

static uint32_t depth_of(size_t i) { return i == 5 ? 0 : (uint32_t)(i * 37 % 257); }
static uint32_t hist_len(size_t i) { return (uint32_t)(i % 7); }

/* Histogram values: small, exact in v5, rounded, and past v5's clamp. */
static uint64_t hist_value(size_t i, uint32_t j) {
  static const uint64_t v[] = {0, 1, 4095, 4096, 5355, 25500, 1ull << 40, 123456789};
  return v[(i + j) % 8] + (j == 3 ? i : 0);
}

/* The value of MIB field `tag` in entry i: different in every field and
 * entry, in all the field's bytes. */
static uint64_t field_value(size_t i, unsigned tag) {
  return 0x0102030405060708ull * (tag + 1) ^ (uint64_t)(i + 1) * 0x9e3779b97f4a7c15ull;
}

static void build_table(void) {
  for (size_t i = 0; i < N_ENTRIES; i++) {
    rt_stub_entry *t = &entries[i];
    t->id = (uint32_t)(3 * i + 1);
    mpf_mib *m = &t->e.mib;
#define MIB_FIELD(Tag, Name, CType, Merge) m->Name = (CType)field_value(i, Tag);
#include "include/MIBDef.inc"
#undef MIB_FIELD
    m->AccessHistogramSize = hist_len(i);
    for (uint32_t j = 0; j < hist_len(i); j++) hists[i][j] = hist_value(i, j);
    t->e.hist = hists[i];
    /* the pointer, as the runtime keeps it (readers ignore it) */
    m->AccessHistogram = hist_len(i) ? (uint64_t)(uintptr_t)hists[i] : 0;
    t->e.present = 1;
    t->depth = depth_of(i);
    for (uint32_t j = 0; j < t->depth; j++)
      pcs[i][j] = 0x400000u + i * 0x10000u + j * 8u + 1u; /* return addresses */
    t->pcs = pcs[i];
  }
  rt_stub_entries = entries;
  rt_stub_n_entries = N_ENTRIES;
}

/* ---- the modules ------------------------------------------------------- */

typedef struct note_buf {
  unsigned char b[256];
  size_t len;
} note_buf;

static void add_note(note_buf *n, uint32_t type, const char *name, size_t desc_len,
                     const unsigned char *desc) {
  ElfW(Nhdr) h = {(ElfW(Word))(strlen(name) + 1), (ElfW(Word))desc_len, type};
  memcpy(n->b + n->len, &h, sizeof h);
  n->len += sizeof h;
  memcpy(n->b + n->len, name, strlen(name) + 1);
  n->len += (strlen(name) + 1 + 3) & ~(size_t)3;
  memcpy(n->b + n->len, desc, desc_len);
  n->len += (desc_len + 3) & ~(size_t)3;
}

static note_buf note_main, note_bar, note_long;
static ElfW(Phdr) ph_main[5], ph_unnamed[1], ph_foo[2], ph_bar[2], ph_long[2];
static struct dl_phdr_info modules[5];

#define MAIN_BASE 0x555555554000ull
#define FOO_BASE 0x7f0000000000ull
#define BAR_BASE 0x7f1000000000ull
#define LONG_BASE 0x7f2000000000ull

/* A PT_NOTE at `n`, wherever the module is loaded. */
static ElfW(Phdr) note_phdr(const note_buf *n, uint64_t base) {
  return (ElfW(Phdr)){.p_type = PT_NOTE, .p_flags = PF_R,
                      .p_vaddr = (ElfW(Addr))((uintptr_t)n->b - base),
                      .p_memsz = n->len};
}

static ElfW(Phdr) load(unsigned flags, uint64_t vaddr, uint64_t memsz) {
  return (ElfW(Phdr)){.p_type = PT_LOAD, .p_flags = flags, .p_vaddr = vaddr,
                      .p_memsz = memsz};
}

/* Build ids: the main module's is this test program's own (the raw reader
 * wants a given binary to match a segment), the others made up. */
static unsigned char id_main[32], id_bar[32], id_long[40], abi_tag[16];
static size_t id_main_len;

static void build_modules(const msym_module *self) {
  memcpy(id_main, self->build_id, self->build_id_len);
  id_main_len = self->build_id_len;
  for (unsigned k = 0; k < 40; k++) {
    if (k < 32) id_bar[k] = (unsigned char)(0x40 + k);
    if (k < 16) abi_tag[k] = (unsigned char)k;
    id_long[k] = (unsigned char)(0x70 + k);
  }
  /* the main executable: another note before its build id; one
   * executable PT_LOAD between a read-only and a writable one */
  add_note(&note_main, NT_GNU_ABI_TAG, "GNU", 16, abi_tag);
  add_note(&note_main, NT_GNU_BUILD_ID, "GNU", id_main_len, id_main);
  ph_main[0] = load(PF_R, 0, 0x800);
  ph_main[1] = note_phdr(&note_main, MAIN_BASE);
  ph_main[2] = load(PF_R | PF_X, 0x1000, 0x2345);
  ph_main[3] = load(PF_R | PF_W, 0x5000, 0x100);
  ph_main[4] = (ElfW(Phdr)){.p_type = PT_GNU_STACK, .p_flags = PF_R | PF_W};
  modules[0] = (struct dl_phdr_info){.dlpi_addr = MAIN_BASE, .dlpi_name = "",
                                     .dlpi_phdr = ph_main, .dlpi_phnum = 5};
  /* unnamed and not first: left out */
  ph_unnamed[0] = load(PF_R | PF_X, 0, 0x1000);
  modules[1] = (struct dl_phdr_info){.dlpi_addr = 0x1000000, .dlpi_name = "",
                                     .dlpi_phdr = ph_unnamed, .dlpi_phnum = 1};
  /* no build id, two executable PT_LOADs */
  ph_foo[0] = load(PF_R | PF_X, 0x0, 0x1234);
  ph_foo[1] = load(PF_X, 0x20000, 0x10);
  modules[2] = (struct dl_phdr_info){.dlpi_addr = FOO_BASE, .dlpi_name = "/lib/libfoo.so",
                                     .dlpi_phdr = ph_foo, .dlpi_phnum = 2};
  /* the longest build id the format holds */
  add_note(&note_bar, NT_GNU_BUILD_ID, "GNU", 32, id_bar);
  ph_bar[0] = note_phdr(&note_bar, BAR_BASE);
  ph_bar[1] = load(PF_R | PF_X, 0x3000, 0x777);
  modules[3] = (struct dl_phdr_info){.dlpi_addr = BAR_BASE, .dlpi_name = "/lib/libbar.so",
                                     .dlpi_phdr = ph_bar, .dlpi_phnum = 2};
  /* a build id too long for the format: none given */
  add_note(&note_long, NT_GNU_BUILD_ID, "GNU", 40, id_long);
  ph_long[0] = note_phdr(&note_long, LONG_BASE);
  ph_long[1] = load(PF_R | PF_X, 0x0, 0x99);
  modules[4] = (struct dl_phdr_info){.dlpi_addr = LONG_BASE, .dlpi_name = "/lib/liblong.so",
                                     .dlpi_phdr = ph_long, .dlpi_phnum = 2};
  rt_stub_modules = modules;
  rt_stub_n_modules = 5;
}

/* The segment entries docs/raw-format.md §3 says the modules give. */
typedef struct want_seg {
  uint64_t start, end, offset;
  const unsigned char *id;
  const size_t *id_len;
} want_seg;

static const size_t no_id = 0, bar_id_len = 32;
static const want_seg want_segs[] = {
    {MAIN_BASE + 0x1000, MAIN_BASE + 0x1000 + 0x2345, MAIN_BASE, id_main, &id_main_len},
    {FOO_BASE, FOO_BASE + 0x1234, FOO_BASE, NULL, &no_id},
    {FOO_BASE + 0x20000, FOO_BASE + 0x20010, FOO_BASE, NULL, &no_id},
    {BAR_BASE + 0x3000, BAR_BASE + 0x3777, BAR_BASE, id_bar, &bar_id_len},
    {LONG_BASE, LONG_BASE + 0x99, LONG_BASE, NULL, &no_id},
};
#define N_SEGS (sizeof want_segs / sizeof want_segs[0])

/* ---- reading the output as the document describes it ------------------- */

typedef struct cursor {
  const unsigned char *p;
  size_t off, len;
  int bad; /* reported a mismatch already: the rest would only repeat it */
} cursor;

static uint64_t le(const unsigned char *p, unsigned size) {
  uint64_t v = 0;
  for (unsigned k = 0; k < size; k++) v |= (uint64_t)p[k] << (8 * k);
  return v;
}

/* The next `size`-byte little-endian field must be `want`. */
static void expect(cursor *c, unsigned size, uint64_t want, const char *what, size_t i) {
  if (c->bad) return;
  if (c->off + size > c->len) {
    CHECK(0, "%s [%zu]: the output ends at %zu", what, i, c->len);
    c->bad = 1;
    return;
  }
  uint64_t got = le(c->p + c->off, size);
  if (size < 8) want &= (1ull << (8 * size)) - 1;
  if (got != want) {
    CHECK(0, "%s [%zu] at offset %zu: 0x%" PRIx64 ", want 0x%" PRIx64, what, i, c->off,
          got, want);
    c->bad = 1;
  }
  c->off += size;
}

/* Zero bytes up to offset `end`. */
static void expect_zeros_to(cursor *c, size_t end, const char *what) {
  while (!c->bad && c->off < end) expect(c, 1, 0, what, c->off);
}

/* docs/raw-format.md §4: the MemInfoBlock's fields, offset and size, by tag. */
static const struct {
  unsigned off, size;
} mib_layout[] = {
    [1] = {0, 4},    [2] = {4, 8},    [3] = {12, 8},   [4] = {20, 8},   [5] = {28, 8},
    [6] = {36, 4},   [7] = {40, 4},   [8] = {44, 4},   [9] = {48, 4},   [10] = {52, 8},
    [11] = {60, 4},  [12] = {64, 4},  [13] = {68, 4},  [14] = {72, 4},  [15] = {76, 4},
    [16] = {80, 4},  [17] = {84, 4},  [18] = {88, 4},  [19] = {92, 8},  [20] = {100, 8},
    [21] = {108, 4}, [22] = {112, 4}, [23] = {116, 8}, [24] = {124, 4}, [25] = {128, 4},
    [26] = {132, 4}, [27] = {136, 8},
};

static const char *const field_name[] = {
#define MIB_FIELD(Tag, Name, CType, Merge) [Tag] = "MIB " #Name " (entry)",
#include "include/MIBDef.inc"
#undef MIB_FIELD
};

static uint64_t mib_field_want(size_t i, unsigned tag) {
  if (tag == 26) return hist_len(i);
  if (tag == 27) return entries[i].e.mib.AccessHistogram;
  return field_value(i, tag);
}

/* §4.2, as the document states it. */
static uint16_t v5_encode(uint64_t c) {
  if (c > (4095ull << 15)) c = 4095ull << 15;
  uint64_t m = c, e = 0;
  while (m > 4095) {
    m = (m + 1) >> 1;
    e++;
  }
  return (uint16_t)(e << 12 | m);
}

static uint64_t v5_decode(uint16_t v) { return (uint64_t)(v & 0xfff) << (v >> 12); }

static size_t mib_size(int version) { return version == 3 ? 132 : 144; }

/* One profile at c, as docs/raw-format.md lays it out. */
static void check_profile(cursor *c, int version) {
  size_t start = c->off;
  uint64_t seg_bytes = 8 + 64 * N_SEGS;
  uint64_t hist_entries = 0, stack_bytes = 8;
  for (size_t i = 0; i < N_ENTRIES; i++) {
    hist_entries += hist_len(i);
    stack_bytes += 16 + 8ull * depth_of(i);
  }
  uint64_t rec = 8 + mib_size(version);
  uint64_t mib_bytes =
      version == 3 ? 8 + N_ENTRIES * rec
                   : 8 + N_ENTRIES * rec + (version == 4 ? 8 : 2) * hist_entries;
  mib_bytes = (mib_bytes + 7) & ~7ull;
  uint64_t total = 48 + seg_bytes + mib_bytes + stack_bytes;

  /* §2 */
  expect(c, 8, 0xFF6D70726F667281ull, "Magic", 0);
  expect(c, 8, (uint64_t)version, "Version", 0);
  expect(c, 8, total, "TotalSize", 0);
  expect(c, 8, 48, "SegmentOffset", 0);
  expect(c, 8, 48 + seg_bytes, "MIBOffset", 0);
  expect(c, 8, 48 + seg_bytes + mib_bytes, "StackOffset", 0);
  /* §3 */
  expect(c, 8, N_SEGS, "segment count", 0);
  for (size_t s = 0; s < N_SEGS; s++) {
    const want_seg *w = &want_segs[s];
    expect(c, 8, w->start, "segment Start", s);
    expect(c, 8, w->end, "segment End", s);
    expect(c, 8, w->offset, "segment Offset", s);
    expect(c, 8, *w->id_len, "segment BuildIdSize", s);
    for (unsigned k = 0; k < 32; k++)
      expect(c, 1, k < *w->id_len ? w->id[k] : 0, "segment BuildId", s);
  }
  /* §4 */
  expect(c, 8, N_ENTRIES, "MIB count", 0);
  for (size_t i = 0; i < N_ENTRIES && !c->bad; i++) {
    expect(c, 8, entries[i].id, "MIB StackId", i);
    size_t mib_at = c->off;
    for (unsigned tag = 1; tag <= 27; tag++) {
      if (mib_layout[tag].off >= mib_size(version)) continue;
      c->off = mib_at + mib_layout[tag].off;
      expect(c, mib_layout[tag].size, mib_field_want(i, tag), field_name[tag], i);
    }
    c->off = mib_at + mib_size(version);
    if (version == 3) continue;
    for (uint32_t j = 0; j < hist_len(i); j++) {
      uint64_t v = hists[i][j];
      if (version == 4)
        expect(c, 8, v, "v4 histogram value (entry)", i);
      else
        expect(c, 2, v5_encode(v), "v5 histogram value (entry)", i);
    }
  }
  expect_zeros_to(c, start + 48 + seg_bytes + mib_bytes, "MIB region padding");
  /* §5 */
  expect(c, 8, N_ENTRIES, "stack count", 0);
  for (size_t i = 0; i < N_ENTRIES && !c->bad; i++) {
    expect(c, 8, entries[i].id, "stack StackId", i);
    expect(c, 8, depth_of(i), "stack K", i);
    for (uint32_t j = 0; j < depth_of(i); j++)
      expect(c, 8, pcs[i][j] - 1, "stack PC (return address - 1)", i);
  }
  CHECK(c->bad || c->off == start + total, "v%d: profile ends at %zu, TotalSize says %" PRIu64,
        version, c->off - start, total);
}

/* One dump into a fresh capture. */
static int dump(int version, int from_signal) {
  rt_flags.raw_version = version;
  return rt_dump(from_signal);
}

static void reset_capture(void) {
  free(rt_stub_out);
  rt_stub_out = NULL;
  rt_stub_out_len = rt_stub_writes = 0;
}

static void test_layout(int version) {
  reset_capture();
  size_t locks = rt_stub_locks, clears = rt_stub_clears, live = rt_stub_add_live;
  CHECK(dump(version, 0) == 0, "v%d: rt_dump failed", version);
  CHECK(rt_stub_locks == locks + 1 && rt_stub_unlocks == rt_stub_locks &&
            rt_stub_add_live == live + 1 && rt_stub_clears == clears + 1,
        "v%d: the table is locked, filled with the live blocks, cleared, unlocked once",
        version);
  CHECK(rt_stub_writes > 4, "v%d: %zu writes: the profile should span several chunks",
        version, rt_stub_writes);
  cursor c = {rt_stub_out, 0, rt_stub_out_len, 0};
  check_profile(&c, version);
  CHECK(c.bad || c.off == c.len, "v%d: %zu bytes after the profile", version, c.len - c.off);
  /* from a signal handler: the same bytes (trylock path) */
  unsigned char *first = rt_stub_out;
  size_t first_len = rt_stub_out_len;
  rt_stub_out = NULL;
  rt_stub_out_len = 0;
  CHECK(dump(version, 1) == 0, "v%d: rt_dump from a signal failed", version);
  CHECK(rt_stub_out_len == first_len && !memcmp(first, rt_stub_out, first_len),
        "v%d: a dump from a signal handler writes other bytes", version);
  free(first);
}

/* ---- what profdata's raw reader makes of it ----------------------------- */

static void check_read(const raw_file *f, size_t d, int version) {
  const raw_dump *rd = &f->dumps[d];
  CHECK(rd->version == (uint32_t)version, "dump %zu: version %u", d, rd->version);
  CHECK(rd->n_segs == N_SEGS, "dump %zu: %" PRIu64 " segments", d, rd->n_segs);
  for (size_t s = 0; s < rd->n_segs && s < N_SEGS; s++) {
    mpf_raw_segment seg;
    memcpy(&seg, rd->segs + s * sizeof seg, sizeof seg);
    const want_seg *w = &want_segs[s];
    int id_ok = seg.build_id_size == *w->id_len &&
                !memcmp(seg.build_id, w->id ? w->id : seg.build_id, *w->id_len);
    CHECK(seg.start == w->start && seg.end == w->end && seg.offset == w->offset && id_ok,
          "dump %zu: segment %zu as read differs", d, s);
  }
  CHECK(rd->n_mibs == N_ENTRIES, "dump %zu: %" PRIu64 " MIBs", d, rd->n_mibs);
  const unsigned char *e = rd->mibs;
  for (size_t i = 0; i < rd->n_mibs && i < N_ENTRIES; i++) {
    const raw_stack *st = &f->stacks[rd->mib_stack[i]];
    CHECK(raw_u64(e) == entries[i].id && st->id == entries[i].id,
          "dump %zu MIB %zu: stack id %" PRIu64 " / %" PRIu64, d, i, raw_u64(e), st->id);
    int pcs_ok = st->n_pcs == depth_of(i);
    for (uint32_t j = 0; j < depth_of(i) && pcs_ok; j++)
      pcs_ok = raw_u64(st->pcs + 8 * j) == pcs[i][j] - 1;
    CHECK(pcs_ok, "dump %zu MIB %zu: the reader's PCs differ", d, i);
    mpf_mib m;
    memset(&m, 0, sizeof m);
    memcpy(&m, e + 8, mib_size(version));
#define MIB_FIELD(Tag, Name, CType, Merge)                                     \
  if (Tag < 26 || version != 3)                                                \
    CHECK(m.Name == (CType)mib_field_want(i, Tag), "dump %zu MIB %zu: " #Name, d, i);
#include "include/MIBDef.inc"
#undef MIB_FIELD
    const unsigned char *h = e + 8 + mib_size(version);
    for (uint32_t j = 0; version != 3 && j < hist_len(i); j++) {
      uint64_t got = version == 4 ? raw_u64(h + 8 * j)
                                  : mpf_hist_decode_v5((uint16_t)le(h + 2 * j, 2));
      uint64_t want = version == 4 ? hists[i][j] : v5_decode(v5_encode(hists[i][j]));
      CHECK(got == want, "dump %zu MIB %zu histogram %u: %" PRIu64 ", want %" PRIu64, d, i,
            j, got, want);
    }
    e += raw_mib_entry_size((uint32_t)version, e);
  }
}

static msym_ctx *sym; /* this program, the profiled binary */

static void test_reader(int version) {
  reset_capture();
  CHECK(dump(version, 0) == 0 && dump(version, 0) == 0, "v%d: dumps failed", version);
  mp_profile *p = mp_profile_new();
  mp_raw_reader *r = mp_raw_reader_new(p, sym);
  mp_raw_file *f = NULL;
  mp_err err = {{0}};
  int rc = mp_raw_prepare(r, "dump", rt_stub_out, rt_stub_out_len, &f, &err);
  CHECK(rc == 0, "v%d: the raw reader refuses the dumps: %s", version, err.msg);
  if (rc == 0) {
    CHECK(f->n_dumps == 2, "v%d: %zu dumps read", version, f->n_dumps);
    CHECK(f->n_stacks == N_ENTRIES, "v%d: %zu distinct stacks", version, f->n_stacks);
    for (size_t d = 0; d < f->n_dumps && d < 2; d++) check_read(f, d, version);
    mp_raw_file_free(f);
  }
  mp_raw_reader_free(r);
  mp_profile_free(p);
}

static void test_write_failure(void) {
  reset_capture();
  size_t clears = rt_stub_clears, unlocks = rt_stub_unlocks;
  rt_stub_write_fails = 1;
  CHECK(dump(5, 0) == -1, "a failed write is reported");
  rt_stub_write_fails = 0;
  CHECK(rt_stub_clears == clears + 1 && rt_stub_unlocks == unlocks + 1,
        "after a failed write the table is still cleared and unlocked");
}

int main(void) {
  mp_err err = {{0}};
  sym = msym_new();
  if (msym_add_binary(sym, "/proc/self/exe", &err) != 0 ||
      !msym_module_at(sym, 0)->build_id_len) {
    printf("FAIL this program cannot be the profiled binary: %s\n", err.msg);
    return 1;
  }
  build_table();
  build_modules(msym_module_at(sym, 0));
  for (int v = 3; v <= 5; v++) {
    test_layout(v);
    test_reader(v);
  }
  test_write_failure();
  reset_capture();
  msym_free(sym);
  return check_result();
}
