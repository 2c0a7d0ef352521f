/* test_indexed_roundtrip.c - unit tests of the indexed writer and reader
 * (profdata/indexed.h) and their parts:
 *  - every (index version x memprof version x schema) writes, reads back and
 *    gives the same records, stacks, frames and schema MIB fields; the
 *    combinations LLVM cannot read are refused;
 *  - the symbolized section round-trips names, paths, lines, columns and
 *    discriminators, and shares path prefixes;
 *  - the v4 summary counts contexts with LLVM's cold rule;
 *  - radix encoder/decoder round-trip on random stacks with shared roots,
 *    and hostile radix arrays (jumps out, jump to jump, long lengths) fail;
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
#include "profdata/llvm/radix.h"
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
        mp_mib m;
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
  mp_mib m = {0};
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
  mp_mib m = {0};
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

static void test_radix_random(void) {
  for (int round = 0; round < 50; round++) {
    size_t n = 1 + rnd() % 200, nf = 2 + rnd() % 30;
    uint32_t *store = malloc(n * 20 * 4);
    mp_radix_stack *st = malloc(n * sizeof *st);
    uint64_t *count = calloc(nf, 8), *key = malloc(nf * 8);
    for (size_t f = 0; f < nf; f++) key[f] = rnd();
    size_t used = 0, k = 0;
    for (size_t tries = 0; k < n && tries < 20 * n; tries++) {
      uint32_t len = (uint32_t)(rnd() % 20);
      uint32_t *s = store + used;
      for (uint32_t i = 0; i < len; i++)
        s[len - 1 - i] = (uint32_t)(i < 4 ? rnd() % (nf < 2 ? nf : 2) : rnd() % nf);
      int dup = 0; /* the builder takes distinct stacks */
      for (size_t j = 0; j < k && !dup; j++)
        dup = st[j].len == len && !memcmp(st[j].frames, s, len * 4);
      if (dup) continue;
      for (uint32_t i = 0; i < len; i++) count[s[i]]++;
      st[k++] = (mp_radix_stack){s, len};
      used += len;
    }
    n = k;
    uint32_t *arr, *pos = malloc(n * 4), out[32];
    size_t na;
    mp_radix_build(st, n, count, key, &arr, &na, pos);
    CHECK(na <= used + 2 * n);
    for (size_t i = 0; i < n; i++) {
      mp_err err;
      long l = mp_radix_decode((unsigned char *)arr, na, pos[i], nf, out, 32,
                               &err);
      CHECK(l == st[i].len);
      if (l != st[i].len) { fprintf(stderr, "radix: %ld vs %u: %s\n", l, st[i].len, l < 0 ? err.msg : ""); break; }
      CHECK(l < 0 || memcmp(out, st[i].frames, (size_t)l * 4) == 0);
    }
    free(arr);
    free(pos);
    free(store);
    free(st);
    free(count);
    free(key);
  }
}

/* Rank of each frame as the builder orders them: ascending count, then
 * key, then id. */
static const uint64_t *g_cnt, *g_key;
static int cmp_rank(const void *pa, const void *pb) {
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  if (g_cnt[a] != g_cnt[b]) return g_cnt[a] < g_cnt[b] ? -1 : 1;
  if (g_key[a] != g_key[b]) return g_key[a] < g_key[b] ? -1 : 1;
  return a < b ? -1 : a > b;
}

/* Root-first comparison of two stacks by frame rank; a prefix first. */
static int cmp_root_first(const mp_radix_stack *a, const mp_radix_stack *b,
                          const uint32_t *rank) {
  for (uint32_t d = 0; d < a->len && d < b->len; d++) {
    uint32_t ra = rank[a->frames[a->len - 1 - d]],
             rb = rank[b->frames[b->len - 1 - d]];
    if (ra != rb) return ra < rb ? -1 : 1;
  }
  return a->len < b->len ? -1 : a->len > b->len;
}

/* Enough stacks for the builder to sort on two threads: one root chain
 * that nearly all share (a level dominated by one bucket), then eight
 * even branches (split between the threads), then tails that make every
 * stack distinct.  The array must hold the stacks in root-first rank
 * order (positions grow with it) and decode to each stack. */
static void test_radix_parallel(void) {
  enum { N = 20000, NF = 300 };
  uint32_t *store = malloc((size_t)N * 32 * 4);
  mp_radix_stack *st = malloc(N * sizeof *st);
  uint64_t count[NF] = {0}, key[NF];
  for (uint32_t f = 0; f < NF; f++) key[f] = rnd();
  size_t used = 0;
  for (uint32_t i = 0; i < N; i++) {
    uint32_t root[32], len = 0;
    if (i % 20) { /* the dominant chain, then a branch */
      root[len++] = 1;
      root[len++] = 2;
      root[len++] = 10 + i % 8;
    } else {
      root[len++] = 20 + (uint32_t)(rnd() % 50);
    }
    uint32_t extra = (uint32_t)(rnd() % 12);
    for (uint32_t k = 0; k < extra; k++) root[len++] = 100 + (uint32_t)(rnd() % 100);
    root[len++] = 200 + i / NF % 100; /* i in two digits: all distinct */
    root[len++] = i % NF;
    uint32_t *s = store + used;
    for (uint32_t d = 0; d < len; d++) s[len - 1 - d] = root[d]; /* leaf first */
    for (uint32_t d = 0; d < len; d++) count[s[d]]++;
    st[i] = (mp_radix_stack){s, len};
    used += len;
  }
  uint32_t by[NF], rank[NF];
  for (uint32_t f = 0; f < NF; f++) by[f] = f;
  g_cnt = count;
  g_key = key;
  qsort(by, NF, 4, cmp_rank);
  for (uint32_t r = 0; r < NF; r++) rank[by[r]] = r;
  uint32_t *arr, *pos = malloc(N * 4), out[32];
  size_t na;
  mp_radix_build(st, N, count, key, &arr, &na, pos);
  uint32_t *ord = malloc(N * 4);
  for (uint32_t i = 0; i < N; i++) ord[i] = i;
  int bad = 0; /* positions are distinct: shell-sort the stacks by them */
  for (uint32_t gap = N / 2; gap > 0; gap /= 2)
    for (uint32_t i = gap; i < N; i++)
      for (uint32_t j = i; j >= gap && pos[ord[j - gap]] > pos[ord[j]]; j -= gap) {
        uint32_t t = ord[j];
        ord[j] = ord[j - gap];
        ord[j - gap] = t;
      }
  for (uint32_t i = 1; i < N && !bad; i++)
    if (cmp_root_first(&st[ord[i - 1]], &st[ord[i]], rank) >= 0) bad = 1;
  CHECK(!bad);
  for (uint32_t i = 0; i < N && !bad; i++) {
    mp_err err;
    long l = mp_radix_decode((unsigned char *)arr, na, pos[i], NF, out, 32, &err);
    if (l != st[i].len || memcmp(out, st[i].frames, (size_t)l * 4)) bad = 1;
  }
  CHECK(!bad);
  free(ord);
  free(arr);
  free(pos);
  free(st);
  free(store);
}

static void test_radix_worked_example(void) {
  /* docs/indexed-format.md's radix example: the array llvm-profdata wrote for m.cc */
  uint32_t a[16] = {1, (uint32_t)-4, 3, 0, 1, 3, 1, 1,
                    1, (uint32_t)-4, 3, 0, 2, 4, 1, 2};
  uint32_t out[8];
  mp_err err;
  CHECK(mp_radix_decode((unsigned char *)a, 16, 2, 5, out, 8, &err) == 3);
  CHECK(out[0] == 0 && out[1] == 1 && out[2] == 3);
  CHECK(mp_radix_decode((unsigned char *)a, 16, 0, 5, out, 8, &err) == 1);
  CHECK(out[0] == 3);
  CHECK(mp_radix_decode((unsigned char *)a, 16, 8, 5, out, 8, &err) == 1);
  CHECK(out[0] == 4);
  /* the builder reproduces the same array from the same input */
  uint32_t s0[] = {3}, s2[] = {0, 1, 3}, s6[] = {1}, s8[] = {4},
           s10[] = {0, 2, 4}, s14[] = {2};
  mp_radix_stack st[] = {{s0, 1}, {s2, 3}, {s6, 1}, {s8, 1}, {s10, 3},
                         {s14, 1}};
  /* all frames occur twice; FrameId order as in that file (consistent
   * with its frame array: F1 < F2, F3 < F4) */
  uint64_t count[5] = {2, 2, 2, 2, 2}, key[5] = {4, 1, 3, 0, 2};
  uint32_t *arr, pos[6];
  size_t n;
  mp_radix_build(st, 6, count, key, &arr, &n, pos);
  CHECK(n == 16 && memcmp(arr, a, sizeof a) == 0);
  CHECK(pos[0] == 0 && pos[1] == 2 && pos[2] == 6 && pos[3] == 8 &&
        pos[4] == 10 && pos[5] == 14);
  free(arr);
}

static void test_radix_hostile(void) {
  mp_err err;
  uint32_t out[8];
  uint32_t jump_out[] = {2, 0, (uint32_t)-100};
  CHECK(mp_radix_decode((unsigned char *)jump_out, 3, 0, 5, out, 8, &err) < 0);
  uint32_t jump_jump[] = {2, (uint32_t)-1, (uint32_t)-1, 0, 0};
  CHECK(mp_radix_decode((unsigned char *)jump_jump, 5, 0, 5, out, 8, &err) < 0);
  uint32_t int_min[] = {1, 0x80000000u, 0};
  CHECK(mp_radix_decode((unsigned char *)int_min, 3, 0, 5, out, 8, &err) < 0);
  uint32_t too_long[] = {0xffffffffu, 0, 0};
  CHECK(mp_radix_decode((unsigned char *)too_long, 3, 0, 5, out, 8, &err) < 0);
  uint32_t bad_frame[] = {1, 9};
  CHECK(mp_radix_decode((unsigned char *)bad_frame, 2, 0, 5, out, 8, &err) < 0);
  CHECK(strstr(err.msg, "frame id 9") != NULL);
  CHECK(mp_radix_decode((unsigned char *)bad_frame, 2, 7, 5, out, 8, &err) < 0);
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
    uint64_t w = MP_INDEXED_VARIANT_MEMPROF | v;
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
  test_radix_random();
  test_radix_parallel();
  test_radix_worked_example();
  test_radix_hostile();
  test_corruption();
  test_header_versions();
  return check_result();
}
