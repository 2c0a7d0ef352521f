/* test_indexed_roundtrip.c - unit tests of the indexed writer and reader
 * (profdata/indexed/indexed.h) and their parts:
 *  - every (index version x memprof version x schema) writes, reads back and
 *    gives the same records, stacks, frames and schema MIB fields; the
 *    combinations LLVM cannot read are refused;
 *  - the symbolized section round-trips names, paths, lines, columns and
 *    discriminators, and shares path prefixes;
 *  - the v4 summary counts contexts with LLVM's cold rule;
 *  - every truncation at 8-byte boundaries, every single-byte corruption
 *    and random word overwrites of small files are either read or refused
 *    with a message, never a crash or hang;
 *  - index versions 8-13 are read, 7 and 14 and non-memprof files refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profdata/indexed/indexed.h"
#include "profdata/instrprof/instrprof.h"
#include "profdata/llvm/mib_schema.h"
#include "profdata/indexed/symsec.h"
#include "test/unit/check.h"
#include "test/unit/rng.h"

/* A profile with shared stack roots, inline frames, several sites per
 * record, call sites with callees, and symbol info on most frames. */
static mp_profile *make_profile(int n_records, int with_syms) {
  mp_profile *p = mp_profile_new();
  uint32_t fr[40];
  static const char *files[] = {"/usr/include/c++/12/bits/vector.tcc",
                                "/usr/include/c++/12/bits/stl_vector.h",
                                "src/main.cc", "main.cc", "/a//b/c.h"};
  for (int i = 0; i < 40; i++) {
    mp_frame f = {0x1000 + rnd() % 12 * 0x1111111111ULL, (uint32_t)(rnd() % 50),
                  (uint32_t)(rnd() % 80), (uint8_t)(rnd() % 3 == 0)};
    fr[i] = mp_intern_frame(p, &f);
    if (with_syms && i % 7 != 3) {
      char name[32];
      snprintf(name, sizeof name, "_Z3f%02dv", i);
      const char *file = files[rnd() % 5];
      mp_frame_sym s = {mp_intern_string(p, name, strlen(name)),
                        i % 5 == 1 ? MP_NO_STRING
                                   : mp_intern_string(p, file, strlen(file)),
                        (uint32_t)(10 + i), (uint32_t)(i % 9),
                        (uint32_t)(i % 4)};
      mp_set_frame_sym(p, fr[i], &s);
    }
  }
  for (int r = 0; r < n_records; r++) {
    uint64_t guid = 0xabc0000000000000ULL + rnd() % 1000003;
    int na = (int)(rnd() % 4), nc = (int)(rnd() % 3);
    for (int a = 0; a < na + nc; a++) {
      uint32_t st[12];
      uint32_t len = 1 + (uint32_t)(rnd() % 11);
      /* root side drawn from few frames so stacks share roots */
      for (uint32_t k = 0; k < len; k++)
        st[len - 1 - k] = fr[k < 3 ? rnd() % 3 : rnd() % 40];
      uint32_t s = mp_intern_stack(p, st, len);
      if (a < na) {
        mpf_mib m;
        unsigned char *b = (unsigned char *)&m;
        for (size_t i = 0; i < sizeof m; i++) b[i] = (unsigned char)rnd();
        m.AllocCount = 1 + (uint32_t)(rnd() % 100);
        m.AccessHistogramSize = 0;
        m.AccessHistogram = 0;
        mp_add_alloc_site(p, guid, s, &m, NULL);
      } else {
        uint64_t cal[3] = {rnd(), rnd(), rnd()};
        mp_add_call_site(p, guid, s, cal, (uint32_t)(rnd() % 4));
      }
    }
    if (na + nc == 0) mp_record_get(p, guid);
  }
  return p;
}

static const mp_profile *g_dump;
static int cmp_rec(const void *a, const void *b) {
  uint64_t x = g_dump->records[*(const size_t *)a].guid;
  uint64_t y = g_dump->records[*(const size_t *)b].guid;
  return x < y ? -1 : x > y;
}

/* Canonical text of a profile: records by GUID (the file stores them in
 * hash order), sites in order, frames spelled out, MIB limited to the
 * schema's fields. */
static void dump(const mp_profile *p, const mp_schema *s, int callees,
                 int syms, mp_buf *out) {
  size_t *order = malloc((p->n_records + 1) * sizeof *order);
  for (size_t i = 0; i < p->n_records; i++) order[i] = i;
  g_dump = p;
  qsort(order, p->n_records, sizeof *order, cmp_rec);
  for (size_t oi = 0; oi < p->n_records; oi++) {
    const mp_record *r = &p->records[order[oi]];
    mp_buf_printf(out, "R %llx\n", (unsigned long long)r->guid);
    for (size_t j = 0; j < r->n_allocs + r->n_calls; j++) {
      int is_alloc = j < r->n_allocs;
      uint32_t st = is_alloc ? mp_alloc_of(r, j)->stack
                             : r->calls[j - r->n_allocs].stack;
      mp_buf_printf(out, is_alloc ? " A" : " C");
      const uint32_t *f = mp_stack_frames(p, st);
      for (uint32_t k = 0; k < p->stacks[st].len; k++) {
        const mp_frame *fr = &p->frames[f[k]];
        mp_buf_printf(out, " %llx:%u:%u:%u", (unsigned long long)fr->guid,
                      fr->line_offset, fr->column, fr->is_inline);
        const mp_frame_sym *y = &p->syms[f[k]];
        if (syms && (y->name != MP_NO_STRING || y->file != MP_NO_STRING))
          mp_buf_printf(out, "[%s %s %u %u %u]",
                        mp_string(p, y->name) ? mp_string(p, y->name) : "-",
                        mp_string(p, y->file) ? mp_string(p, y->file) : "-",
                        y->line, y->column, y->discriminator);
      }
      if (is_alloc) {
        mp_buf out1 = {0};
        mp_mib_write(&out1, s, &mp_alloc_of(r, j)->mib);
        for (size_t b = 0; b < out1.len; b++)
          mp_buf_printf(out, "%s%02x", b ? "" : " mib=", out1.data[b]);
        mp_buf_free(&out1);
      } else if (callees) {
        const mp_call_site *c = &r->calls[j - r->n_allocs];
        for (uint32_t k = 0; k < c->n_callees; k++)
          mp_buf_printf(out, " g%llx", (unsigned long long)c->callees[k]);
      }
      mp_buf_printf(out, "\n");
    }
  }
  free(order);
  mp_buf_u8(out, 0);
}

static void test_roundtrip_matrix(void) {
  mp_profile *p = make_profile(60, 1);
  for (unsigned iv = 10; iv <= 14; iv++)
    for (unsigned mv = 1; mv <= 5; mv++)
      for (int full = 0; full < 2; full++) {
        mp_index_opts o = {iv, mv, full, 1, 0};
        mp_buf out = {0};
        mp_err err = {{0}};
        int rc = mp_write_indexed(p, &o, &out, &err);
        int valid = iv >= 11 && iv <= 13 && mv >= 2 && mv <= 4 &&
                    !(mv == 4 && iv < 12);
        CHECK(rc == (valid ? 0 : -1));
        if (rc) {
          CHECK(err.msg[0] != 0);
          mp_buf_free(&out);
          continue;
        }
        CHECK(mp_is_indexed(out.data, out.len));
        CHECK(mp_symsec_present(out.data, out.len));
        mp_profile *q = mp_profile_new();
        rc = mp_read_indexed(q, out.data, out.len, &err);
        if (rc) fprintf(stderr, "read v%u/%u: %s\n", iv, mv, err.msg);
        CHECK(rc == 0);
        mp_schema s;
        if (full) mp_schema_full(&s);
        else mp_schema_hot_cold(&s);
        mp_buf a = {0}, b = {0};
        dump(p, &s, mv == 4, 1, &a);
        dump(q, &s, mv == 4, 1, &b);
        CHECK(strcmp((char *)a.data, (char *)b.data) == 0);
        if (strcmp((char *)a.data, (char *)b.data))
          fprintf(stderr, "mismatch index %u memprof %u full %d\n%s\n--\n%s\n",
                  iv, mv, full, (char *)a.data, (char *)b.data);
        /* without the section: same records, no symbols */
        o.symbolized_section = 0;
        mp_buf plain = {0};
        CHECK(mp_write_indexed(p, &o, &plain, &err) == 0);
        CHECK(!mp_symsec_present(plain.data, plain.len));
        CHECK(plain.len < out.len);
        CHECK(memcmp(plain.data, out.data, plain.len) == 0);
        mp_buf_free(&plain);
        mp_buf_free(&a);
        mp_buf_free(&b);
        mp_buf_free(&out);
        mp_profile_free(q);
      }
  mp_profile_free(p);
}

/* Paths sharing /usr/include/c++/12/bits are stored once. */
static void test_symsec_prefix_sharing(void) {
  mp_profile *p = mp_profile_new();
  const char *files[] = {"/usr/include/c++/12/bits/stl_vector.h",
                         "/usr/include/c++/12/bits/vector.tcc",
                         "/usr/include/c++/12/bits/new_allocator.h"};
  uint32_t fr[3];
  for (int i = 0; i < 3; i++) {
    mp_frame f = {100 + (uint64_t)i, (uint32_t)i, 1, 0};
    fr[i] = mp_intern_frame(p, &f);
    mp_frame_sym s = {mp_intern_string(p, "fn", 2),
                      mp_intern_string(p, files[i], strlen(files[i])), 1, 2, 3};
    mp_set_frame_sym(p, fr[i], &s);
  }
  uint32_t st = mp_intern_stack(p, fr, 3);
  mpf_mib m = {0};
  m.AllocCount = 1;
  mp_add_alloc_site(p, 100, st, &m, NULL);
  mp_index_opts o = MP_INDEX_OPTS_DEFAULT;
  mp_buf out = {0};
  mp_err err;
  CHECK(mp_write_indexed(p, &o, &out, &err) == 0);
  /* nodes: "", usr, include, c++, 12, bits + 3 leaves = 9 */
  const unsigned char *t = out.data + out.len - MP_SYMSEC_TRAILER_SIZE;
  uint64_t base;
  memcpy(&base, t + 16, 8);
  uint32_t n_nodes, n_entries;
  memcpy(&n_entries, out.data + base + 8, 4);
  memcpy(&n_nodes, out.data + base + 16, 4);
  CHECK(n_entries == 3);
  CHECK(n_nodes == 9);
  mp_symsec sec;
  CHECK(mp_symsec_read(out.data, out.len, &sec, &err) == 0);
  for (size_t i = 0; i < sec.n_entries; i++) {
    int found = 0;
    for (int k = 0; k < 3; k++) found |= strcmp(sec.entries[i].file, files[k]) == 0;
    CHECK(found);
    CHECK(sec.entries[i].line == 1 && sec.entries[i].column == 2 &&
          sec.entries[i].discriminator == 3);
  }
  mp_symsec_free(&sec);
  /* damage one byte of the section: the checksum catches it */
  out.data[base + 70] ^= 1;
  mp_profile *q = mp_profile_new();
  CHECK(mp_read_indexed(q, out.data, out.len, &err) == -1);
  CHECK(strstr(err.msg, "damaged") != NULL);
  out.data[base + 70] ^= 1;
  /* unknown major version is refused with a message */
  uint32_t major = 2;
  memcpy(out.data + out.len - MP_SYMSEC_TRAILER_SIZE + 8, &major, 4);
  CHECK(mp_read_indexed(q, out.data, out.len, &err) == -1);
  CHECK(strstr(err.msg, "version 2.0") != NULL);
  mp_profile_free(q);
  mp_buf_free(&out);
  mp_profile_free(p);
}

/* v4 summary: one cold context (counted once although two records list
 * it), one warm. */
static void test_v4_summary(void) {
  mp_profile *p = mp_profile_new();
  mp_frame f1 = {1, 1, 1, 1}, f2 = {2, 2, 2, 0};
  uint32_t a[2] = {mp_intern_frame(p, &f1), mp_intern_frame(p, &f2)};
  uint32_t cold = mp_intern_stack(p, a, 2), warm = mp_intern_stack(p, a + 1, 1);
  mpf_mib m = {0};
  m.AllocCount = 2;
  m.TotalSize = 4096;
  m.TotalLifetime = 400000; /* 200 s average */
  m.TotalLifetimeAccessDensity = 0;
  mp_add_alloc_site(p, 1, cold, &m, NULL);
  mp_add_alloc_site(p, 2, cold, &m, NULL);
  m.TotalSize = 77;
  m.TotalLifetime = 399999;
  mp_add_alloc_site(p, 2, warm, &m, NULL);
  mp_index_opts o = {12, 4, 0, 0, 0};
  mp_buf out = {0};
  mp_err err;
  CHECK(mp_write_indexed(p, &o, &out, &err) == 0);
  uint64_t mo, sum[6];
  memcpy(&mo, out.data + 40, 8);
  uint32_t nsum;
  memcpy(&nsum, out.data + mo + 40, 4);
  CHECK(nsum == 6);
  memcpy(sum, out.data + mo + 44, sizeof sum);
  CHECK(sum[0] == 2 && sum[1] == 1 && sum[2] == 0);
  CHECK(sum[3] == 4096 && sum[4] == 77 && sum[5] == 0);
  mp_buf_free(&out);
  mp_profile_free(p);
}

/* Every truncation and every single-byte change either reads or fails
 * with a message. */
static void test_corruption(void) {
  mp_profile *p = make_profile(3, 1);
  for (unsigned mv = 2; mv <= 4; mv++) {
    mp_index_opts o = {12, mv, mv == 3, 1, 0};
    mp_buf out = {0};
    mp_err err;
    CHECK(mp_write_indexed(p, &o, &out, &err) == 0);
    unsigned char *copy = malloc(out.len);
    for (size_t cut = 0; cut < out.len; cut += 8) {
      memcpy(copy, out.data, cut);
      mp_profile *q = mp_profile_new();
      err.msg[0] = 0;
      if (mp_read_indexed(q, copy, cut, &err) != 0) CHECK(err.msg[0] != 0);
      mp_profile_free(q);
    }
    for (size_t i = 0; i < out.len; i++)
      for (int v = 0; v < 3; v++) {
        static const unsigned char vals[] = {0xff, 0x80, 0x01};
        memcpy(copy, out.data, out.len);
        copy[i] ^= vals[v];
        mp_profile *q = mp_profile_new();
        err.msg[0] = 0;
        if (mp_read_indexed(q, copy, out.len, &err) != 0)
          CHECK(err.msg[0] != 0);
        mp_profile_free(q);
      }
    for (int k = 0; k < 3000; k++) { /* random word overwrites */
      memcpy(copy, out.data, out.len);
      for (int w = 0; w < 1 + k % 3; w++) {
        size_t at = (size_t)(rnd() % (out.len / 4)) * 4;
        uint32_t vals[4] = {0, 0xffffffffu, (uint32_t)rnd(),
                            (uint32_t)(rnd() % 64)};
        memcpy(copy + at, &vals[rnd() % 4], 4);
      }
      mp_profile *q = mp_profile_new();
      err.msg[0] = 0;
      if (mp_read_indexed(q, copy, out.len, &err) != 0) CHECK(err.msg[0] != 0);
      mp_profile_free(q);
    }
    free(copy);
    mp_buf_free(&out);
  }
  mp_profile_free(p);
}

/* Index versions 10-11 share one header length (and 12-13 another) and
 * differ only in header words we do not read; 7 and 14 are refused.  (8 and
 * 9 have shorter headers, so the profile summary moves: a relabeled file
 * is not one of theirs.)  A file
 * without the memprof variant bit is an instrumentation profile: its
 * memprof section is not read, and its (empty) function table is. */
static void test_header_versions(void) {
  mp_profile *p = make_profile(5, 0);
  mp_index_opts o = {11, 3, 0, 0, 0}, o12 = {12, 3, 0, 0, 0};
  mp_buf out = {0}, out12 = {0};
  mp_err err;
  CHECK(mp_write_indexed(p, &o, &out, &err) == 0);
  CHECK(mp_write_indexed(p, &o12, &out12, &err) == 0);
  for (uint64_t v = 7; v <= 14; v++) {
    if (v == 8 || v == 9) continue;
    uint64_t w = MPF_INDEXED_VARIANT_MEMPROF | v;
    mp_buf *b = v >= 12 ? &out12 : &out;
    memcpy(b->data + 8, &w, 8);
    mp_profile *q = mp_profile_new();
    int rc = mp_read_indexed(q, b->data, b->len, &err);
    CHECK(rc == (v >= 8 && v <= 13 ? 0 : -1));
    CHECK(rc != 0 || q->n_records == p->n_records);
    mp_profile_free(q);
  }
  uint64_t w = 11;
  memcpy(out.data + 8, &w, 8);
  mp_profile *q = mp_profile_new();
  CHECK(mp_read_indexed(q, out.data, out.len, &err) == 0);
  CHECK(q->n_records == 0 && q->input == 0);
  CHECK(q->instr && q->instr->n_funcs == 0 && q->instr->variant == 0);
  mp_profile_free(q);
  mp_buf_free(&out);
  mp_buf_free(&out12);
  mp_profile_free(p);
}

int main(void) {
  test_roundtrip_matrix();
  test_symsec_prefix_sharing();
  test_v4_summary();
  test_corruption();
  test_header_versions();
  return check_result();
}
