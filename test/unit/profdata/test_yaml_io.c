/* test_yaml_io.c - the memprof YAML reader and writer
 * (profdata/yaml/yaml_*.c).
 *
 * Without arguments: unit checks of LLVM's scalar rules, of the profile read
 * from a YAML text, of the exact text written (golden output of
 * llvm-profdata-22 show --memory), of write -> read -> write identity (with
 * symbol comments and histogram sizes) and of error messages for malformed
 * inputs.
 *
 * As a driver for test/yaml/test_yaml_llvm.py:
 *   test_yaml_io FILE [--symbolized]   read FILE, print it as YAML
 * exits 1 with "FILE: line:col: reason" on stderr for bad input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/io.h"
#include "profdata/model/model.h"
#include "profdata/yaml/yaml_io.h"
#include "profdata/yaml/yaml_scalar.h"
#include "test/unit/check.h"

/* ---- driver mode ---------------------------------------------------------- */

static int drive(const char *path, int symbolized) {
  mp_err err;
  mp_file f;
  if (mp_file_open(&f, path, &err) != 0) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  mp_profile *p = mp_profile_new();
  int rc = mp_read_yaml(p, f.data, f.size, &err);
  mp_file_close(&f);
  if (rc != 0) {
    mp_err_prefix(&err, path);
    fprintf(stderr, "%s\n", err.msg);
    mp_profile_free(p);
    return 1;
  }
  mp_buf out = {0};
  mp_write_yaml(p, symbolized, &out);
  fwrite(out.data, 1, out.len, stdout);
  mp_buf_free(&out);
  mp_profile_free(p);
  return 0;
}

/* ---- helpers -------------------------------------------------------------- */

static mp_profile *read_text(const char *text, mp_err *err) {
  mp_profile *p = mp_profile_new();
  if (mp_read_yaml(p, text, strlen(text), err) != 0) {
    mp_profile_free(p);
    return NULL;
  }
  return p;
}

static char *write_text(const mp_profile *p, int symbolized) {
  mp_buf out = {0};
  mp_write_yaml(p, symbolized, &out);
  char *s = mp_xstrndup((const char *)out.data, out.len);
  mp_buf_free(&out);
  return s;
}

/* ---- scalar rules (each verified with llvm-profdata-22) ------------------- */

static void test_scalars(void) {
  static const struct {
    const char *in;
    int ok;
    uint64_t v;
  } nums[] = {
      {"0", 1, 0},           {"42", 1, 42},          {"0x1F", 1, 31},
      {"0XaB", 1, 171},      {"0b101", 1, 5},        {"0B11", 1, 3},
      {"0o17", 1, 15},       {"017", 1, 15},         {"00", 1, 0},
      {"0O7", 0, 0},         {"08", 0, 0},           {"0x", 0, 0},
      {"0b", 0, 0},          {"", 0, 0},             {"+5", 0, 0},
      {"-0", 0, 0},          {"1e3", 0, 0},          {"1_0", 0, 0},
      {"12abc", 0, 0},       {" 1", 0, 0},
      {"18446744073709551615", 1, UINT64_MAX},
      {"18446744073709551616", 0, 0},
      {"0xffffffffffffffff", 1, UINT64_MAX},
      {"0x10000000000000000", 0, 0},
  };
  for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) {
    uint64_t v = 0;
    int ok = mp_yaml_uint(nums[i].in, strlen(nums[i].in), &v) == 0;
    CHECK(ok == nums[i].ok && (!ok || v == nums[i].v),
          "uint '%s': ok=%d v=%llu", nums[i].in, ok, (unsigned long long)v);
  }
  static const char *const yes[] = {"y", "Y", "yes", "Yes", "YES", "on",
                                    "On", "ON", "true", "True", "TRUE"};
  static const char *const no[] = {"n", "N", "no", "No", "NO", "off",
                                   "Off", "OFF", "false", "False", "FALSE"};
  static const char *const bad[] = {"oN", "oFF", "yES", "tRUE", "fAlse",
                                    "nO", "1", "0", "", "null", "~"};
  for (size_t i = 0; i < 11; i++) {
    int b = -1;
    CHECK(mp_yaml_bool(yes[i], strlen(yes[i]), &b) == 0 && b == 1, "bool %s",
          yes[i]);
    CHECK(mp_yaml_bool(no[i], strlen(no[i]), &b) == 0 && b == 0, "bool %s",
          no[i]);
    CHECK(mp_yaml_bool(bad[i], strlen(bad[i]), &b) != 0, "bool %s", bad[i]);
  }
  uint64_t g = 0;
  CHECK(mp_yaml_guid("123", 3, &g) != NULL, "decimal GUID must be refused");
  CHECK(mp_yaml_guid("", 0, &g) != NULL, "empty GUID must be refused");
  CHECK(mp_yaml_guid("0xzz", 4, &g) != NULL, "bad hex GUID");
  CHECK(mp_yaml_guid("0X1f", 4, &g) == NULL && g == 0x1f, "0X1f");
  CHECK(mp_yaml_guid("main", 4, &g) == NULL && g == 0xdb956436e78dd5faULL,
        "main -> %llx", (unsigned long long)g);
  /* "-5" and "~" are names to LLVM (not all digits, no 0x) */
  CHECK(mp_yaml_guid("~", 1, &g) == NULL && g == 0x3668010e171f764cULL,
        "~ -> %llx", (unsigned long long)g);
  CHECK(mp_yaml_guid("foo.llvm.123", 12, &g) == NULL &&
            g == 0x5cf8c24cdb18bdacULL,
        "foo.llvm.123 -> %llx", (unsigned long long)g);
}

/* ---- reading -------------------------------------------------------------- */

static const char *const sample =
    "---\n"
    "# comment\n"
    "HeapProfileRecords:\n"
    "  - AllocSites:          # GUID after the sites is fine\n"
    "      - MemInfoBlock: { AllocCount: 2, TotalSize: 0x10, MinSize: "
    "4294967297, AccessHistogramSize: 3, AccessHistogram: 77 }\n"
    "        Callstack:\n"
    "          - { Function: 0xabc, LineOffset: 1, Column: 10, "
    "IsInlineFrame: false }\n"
    "          - { IsInlineFrame: yes, Column: 3, LineOffset: 2, Function: "
    "main }\n"
    "    GUID: 0xabc\n"
    "    CallSites:\n"
    "      - Frames: []\n"
    "        CalleeGuids: [ main, 0x5 ]\n"
    "      - Frames: ~\n"
    "  - GUID: main\n"
    "    AllocSites:\n"
    "    CallSites: null\n"
    "DataAccessProfiles:\n"
    "  SampledRecords:\n"
    "    - { Symbol: foo, AccessCount: 5, Locations: [{FileName: a.c, Line: "
    "3}] }\n"
    "  KnownColdStrHashes: [ 12 ]\n"
    "...\n"
    "---\n"
    "ignored: [ {\n";

static void test_read_sample(void) {
  mp_err err;
  mp_profile *p = read_text(sample, &err);
  CHECK(p, "sample must read: %s", err.msg);
  if (!p) return;
  CHECK(p->n_records == 2, "records %zu", p->n_records);
  const mp_record *r = &p->records[0];
  CHECK(r->guid == 0xabc && r->n_allocs == 1 && r->n_calls == 1,
        "record 0: %llx %zu %zu", (unsigned long long)r->guid, r->n_allocs,
        r->n_calls);
  const mp_alloc_site *a = mp_alloc_of(r, 0);
  const mp_stack *s = &p->stacks[a->stack];
  CHECK(s->len == 2, "alloc stack len %u", s->len);
  const mp_frame *f0 = &p->frames[mp_stack_frames(p, a->stack)[0]];
  const mp_frame *f1 = &p->frames[mp_stack_frames(p, a->stack)[1]];
  CHECK(f0->guid == 0xabc && f0->line_offset == 1 && f0->column == 10 &&
            !f0->is_inline,
        "leaf frame");
  CHECK(f1->guid == 0xdb956436e78dd5faULL && f1->line_offset == 2 &&
            f1->column == 3 && f1->is_inline,
        "caller frame");
  CHECK(a->mib.AllocCount == 2 && a->mib.TotalSize == 16 &&
            a->mib.MinSize == 1 /* u64 truncated to u32, like LLVM */ &&
            a->mib.TotalLifetime == 0,
        "mib values");
  CHECK(a->mib.AccessHistogramSize == 3 && a->hist && a->hist[2] == 0 &&
            a->mib.AccessHistogram == 0,
        "histogram size kept with zero counts, pointer dropped");
  /* "Frames: []" and "Frames: ~" are the same (empty) stack: merged */
  const mp_call_site *c = &r->calls[0];
  CHECK(p->stacks[c->stack].len == 0 && c->n_callees == 2 &&
            c->callees[0] == 0xdb956436e78dd5faULL && c->callees[1] == 5,
        "call site");
  CHECK(p->records[1].guid == 0xdb956436e78dd5faULL &&
            p->records[1].n_allocs == 0 && p->records[1].n_calls == 0,
        "empty record by name");
  mp_profile_free(p);
}

/* Documents with an empty root (show's summary comment) are skipped. */
static void test_documents(void) {
  mp_err err;
  mp_profile *p = read_text(
      "---\n# MemProfSummary:\n#   Total contexts: 0\n---\n"
      "HeapProfileRecords:\n  - GUID: 0x1\n", &err);
  CHECK(p && p->n_records == 1 && p->records[0].guid == 1, "second doc");
  mp_profile_free(p);
  p = read_text("---\n", &err);
  CHECK(p && p->n_records == 0, "empty stream");
  mp_profile_free(p);
  p = read_text("--- {}\n...\n", &err);
  CHECK(p && p->n_records == 0, "empty mapping");
  mp_profile_free(p);
  CHECK(mp_is_yaml("---\n", 4) && !mp_is_yaml(" ---", 4) &&
            !mp_is_yaml("--", 2),
        "mp_is_yaml");
}

/* ---- writing -------------------------------------------------------------- */

/* llvm-profdata-22 show --memory of the merged (full schema, v4) input
 * below, after its summary block; the frame line that passes column 80
 * wraps exactly as LLVM wraps it. */
static const char *const golden_in =
    "---\n"
    "HeapProfileRecords:\n"
    "  - GUID: 0x7f8d88fcc70a347b\n"
    "    AllocSites:\n"
    "      - Callstack:\n"
    "          - { Function: _Z3foov, LineOffset: 1, Column: 10, "
    "IsInlineFrame: false }\n"
    "          - { Function: 0xffffffffffffffff, LineOffset: 4294967295, "
    "Column: 999, IsInlineFrame: true }\n"
    "        MemInfoBlock: { AllocCount: 1, TotalSize: 400, TotalLifetime: "
    "300000, MaxAccessDensity: 7, AccessHistogramSize: 3 }\n"
    "      - Callstack: []\n"
    "        MemInfoBlock: {}\n"
    "    CallSites:\n"
    "      - Frames:\n"
    "          - { Function: main, LineOffset: 2, Column: 3, IsInlineFrame: "
    "false }\n"
    "        CalleeGuids: [ 0x1000000, 0x1000001, 0x1000002, 0x1000003, "
    "0x1000004, 0x1000005 ]\n";

static const char *const mib_zero_tail =
    "          MinLifetime:     0\n"
    "          MaxLifetime:     0\n"
    "          AllocCpuId:      0\n"
    "          DeallocCpuId:    0\n"
    "          NumMigratedCpu:  0\n"
    "          NumLifetimeOverlaps: 0\n"
    "          NumSameAllocCpu: 0\n"
    "          NumSameDeallocCpu: 0\n"
    "          DataTypeId:      0\n"
    "          TotalAccessDensity: 0\n"
    "          MinAccessDensity: 0\n";

static void test_write_golden(void) {
  mp_err err;
  mp_profile *p = read_text(golden_in, &err);
  CHECK(p, "golden input: %s", err.msg);
  if (!p) return;
  char want[8192];
  snprintf(
      want, sizeof want,
      "---\n"
      "HeapProfileRecords:\n"
      "  - GUID:            0x7f8d88fcc70a347b\n"
      "    AllocSites:\n"
      "      - Callstack:\n"
      "          - { Function: 0x7f8d88fcc70a347b, LineOffset: 1, Column: "
      "10, IsInlineFrame: false }\n"
      "          - { Function: 0xffffffffffffffff, LineOffset: 4294967295, "
      "Column: 999, \n"
      "              IsInlineFrame: true }\n"
      "        MemInfoBlock:\n"
      "          AllocCount:      1\n"
      "          TotalAccessCount: 0\n"
      "          MinAccessCount:  0\n"
      "          MaxAccessCount:  0\n"
      "          TotalSize:       400\n"
      "          MinSize:         0\n"
      "          MaxSize:         0\n"
      "          AllocTimestamp:  0\n"
      "          DeallocTimestamp: 0\n"
      "          TotalLifetime:   300000\n"
      "%s"
      "          MaxAccessDensity: 7\n"
      "          TotalLifetimeAccessDensity: 0\n"
      "          MinLifetimeAccessDensity: 0\n"
      "          MaxLifetimeAccessDensity: 0\n"
      "          AccessHistogramSize: 3\n"
      "          AccessHistogram: 0\n"
      "      - Callstack:       []\n"
      "        MemInfoBlock:\n"
      "          AllocCount:      0\n"
      "          TotalAccessCount: 0\n"
      "          MinAccessCount:  0\n"
      "          MaxAccessCount:  0\n"
      "          TotalSize:       0\n"
      "          MinSize:         0\n"
      "          MaxSize:         0\n"
      "          AllocTimestamp:  0\n"
      "          DeallocTimestamp: 0\n"
      "          TotalLifetime:   0\n"
      "%s"
      "          MaxAccessDensity: 0\n"
      "          TotalLifetimeAccessDensity: 0\n"
      "          MinLifetimeAccessDensity: 0\n"
      "          MaxLifetimeAccessDensity: 0\n"
      "          AccessHistogramSize: 0\n"
      "          AccessHistogram: 0\n"
      "    CallSites:\n"
      "      - Frames:\n"
      "          - { Function: 0xdb956436e78dd5fa, LineOffset: 2, Column: 3, "
      "IsInlineFrame: false }\n"
      "        CalleeGuids:     [ 0x1000000, 0x1000001, 0x1000002, "
      "0x1000003, 0x1000004, \n"
      "                           0x1000005 ]\n"
      "...\n",
      mib_zero_tail, mib_zero_tail);
  char *got = write_text(p, 0);
  CHECK(strcmp(got, want) == 0, "golden output differs:\n%s\nwant:\n%s", got,
        want);
  free(got);
  mp_profile_free(p);
}

static void test_write_empty(void) {
  mp_profile *p = mp_profile_new();
  char *got = write_text(p, 0);
  CHECK(strcmp(got, "--- {}\n...\n") == 0, "empty profile: %s", got);
  free(got);
  mp_profile_free(p);
}

/* write -> read -> write is the identity, also with symbol comments (which
 * the reader skips) and with histograms from a non-YAML source. */
static void test_round_trip(void) {
  mp_profile *p = mp_profile_new();
  mp_frame fr[3] = {{0x1234, 5, 7, 1}, {0xfeed, 0, 1, 0}, {0x9, 1, 2, 0}};
  uint32_t ids[3];
  for (int i = 0; i < 3; i++) ids[i] = mp_intern_frame(p, &fr[i]);
  mp_frame_sym sym = {mp_intern_string(p, "_Z1fv", 5),
                      mp_intern_string(p, "dir/f\n.c", 8), 12, 7, 0};
  mp_set_frame_sym(p, ids[0], &sym);
  mp_frame_sym nofile = {mp_intern_string(p, "g", 1), MP_NO_STRING, 3, 0, 0};
  mp_set_frame_sym(p, ids[1], &nofile);
  uint32_t st = mp_intern_stack(p, ids, 3);
  mpf_mib m;
  memset(&m, 0, sizeof m);
  m.AllocCount = 3;
  m.TotalLifetimeAccessDensity = 123456789012ULL;
  m.AccessHistogramSize = 4;
  uint64_t hist[4] = {1, 2, 3, 4};
  mp_add_alloc_site(p, 0x1234, st, &m, hist);
  uint64_t callees[2] = {0xfeed, 0xbeef};
  mp_add_call_site(p, 0xfeed, mp_intern_stack(p, ids + 1, 2), callees, 2);
  mp_record_get(p, 0x42);

  for (int symbolized = 0; symbolized <= 1; symbolized++) {
    char *first = write_text(p, symbolized);
    mp_err err;
    mp_profile *q = read_text(first, &err);
    CHECK(q, "re-read (symbolized=%d): %s", symbolized, err.msg);
    if (!q) {
      free(first);
      continue;
    }
    char *second = write_text(q, 0);
    char *plain = write_text(p, 0);
    CHECK(strcmp(second, plain) == 0, "round trip differs:\n%s\nvs\n%s",
          second, plain);
    if (symbolized)
      CHECK(strstr(first, "IsInlineFrame: true } # _Z1fv dir/f?.c:12:7\n") &&
                strstr(first, "IsInlineFrame: false } # g ??:3:0\n") &&
                strstr(first, "LineOffset: 1, Column: 2, IsInlineFrame: "
                              "false }\n"),
            "symbol comments:\n%s", first);
    else
      CHECK(!strchr(first, '#'), "no comments without symbolized");
    free(first);
    free(second);
    free(plain);
    mp_profile_free(q);
  }
  mp_profile_free(p);
}

/* ---- malformed input ------------------------------------------------------ */

static void test_errors(void) {
  static const struct {
    const char *yaml, *want;
  } cases[] = {
      {"---\nHeapProfileRecords:\n  - GUID: 0x1\n    Foo: 1\n",
       "4:5: unknown key 'Foo' in a heap profile record"},
      {"---\nBar: 1\n", "2:1: unknown key 'Bar' in the document"},
      {"---\nHeapProfileRecords:\n  - GUID: 123\n", "3:11: GUID '123'"},
      {"---\nHeapProfileRecords:\n  - GUID: 0xzz\n", "invalid hex64 number"},
      {"---\nHeapProfileRecords:\n  - GUID: 0x1\n   CallSites: []\n", "4:"},
      {"---\nHeapProfileRecords:\n  - GUID: 0x1\n    CallSites:\n      - "
       "Frames:\n          - { Function: 0x2, LineOffset: abc, Column: 3, "
       "IsInlineFrame: false }\n",
       "6:42: LineOffset 'abc' is not a valid unsigned number"},
      {"---\nHeapProfileRecords:\n  - GUID: 0x1\n    CallSites:\n      - "
       "Frames:\n          - { Function: 0x2, LineOffset: 4294967296, "
       "Column: 3, IsInlineFrame: false }\n",
       "6:42: LineOffset 4294967296 is out of range"},
      {"---\nHeapProfileRecords:\n  - GUID: 0x1\n    CallSites:\n      - "
       "Frames:\n          - { Function: 0x2, LineOffset: 1, Column: 1, "
       "IsInlineFrame: 1 }\n",
       "6:71: IsInlineFrame '1' is not a boolean"},
      {"---\nHeapProfileRecords:\n  - GUID: 0x1\n    CallSites:\n      - "
       "Frames:\n          - { Function: 0x2, LineOffset: 1, Column: 1 }\n",
       "6:13: a frame has no 'IsInlineFrame'"},
      {"---\nHeapProfileRecords:\n  - GUID: 0x1\n    CallSites:\n      - "
       "Frames:\n          - { Function: 0x2, LineOffset: 1, Colu",
       "6:"},
      {"---\nHeapProfileRecords:\n  - GUID: 0x1\n    AllocSites:\n      - "
       "Callstack: []\n",
       "5:9: an alloc site has no 'MemInfoBlock'"},
      {"---\nHeapProfileRecords:\n  - GUID: 0x1\n    AllocSites:\n      - "
       "Callstack: []\n        MemInfoBlock:\n          Bogus: 1\n",
       "7:11: unknown key 'Bogus' in MemInfoBlock"},
      {"---\nHeapProfileRecords:\n  - GUID: 0x1\n    AllocSites:\n      - "
       "Callstack: []\n        MemInfoBlock:\n",
       "MemInfoBlock must be a mapping, found nothing"},
      {"---\nHeapProfileRecords:\n  - GUID: 0x1\n    AllocSites:\n      - "
       "Callstack: []\n        MemInfoBlock: { TotalSize: "
       "18446744073709551616 }\n",
       "6:36: TotalSize '18446744073709551616' is not a valid"},
      {"---\nHeapProfileRecords:\n  - GUID: 0x1\n    CallSites: 5\n",
       "4:16: CallSites must be a sequence, found a scalar"},
      {"---\nHeapProfileRecords:\n  - GUID: [0x1]\n",
       "3:11: GUID must be a scalar, found a sequence"},
      {"---\nHeapProfileRecords:\n  - GUID: 0x1\n    GUID: 0x2\n",
       "4:5: duplicated key 'GUID'"},
      {"---\nHeapProfileRecords:\n  -\n  - GUID: 0x1\n",
       "a heap profile record must be a mapping, found nothing"},
      {"---\n- 1\n", "2:1: the document must be a mapping, found a sequence"},
      {"--- 5\n", "1:5: the document must be a mapping, found a scalar"},
      {"---\nHeapProfileRecords:\n  - GUID: 0x1\n    CallSites:\n      - "
       "Frames:\n          - &f { Function: 0x5, LineOffset: 1, Column: 1, "
       "IsInlineFrame: false }\n          - *f\n",
       "7:13: YAML aliases (*f) are not supported"},
      {"---\nHeapProfileRecords:\n  - GUID: 0x1\nDataAccessProfiles: ~\n",
       "4:21: DataAccessProfiles must be a mapping"},
      {"---\nHeapProfileRecords:\n  - GUID: 0x1\n    AllocSites:\n      - "
       "Callstack: []\n        MemInfoBlock: { AccessHistogramSize: "
       "4000000000 }\n",
       "AccessHistogramSize 4000000000 is larger than"},
      {"---\nHeapProfileRecords:\n\t- GUID: 0x1\n", "3:1: "},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    mp_err err;
    memset(&err, 0, sizeof err);
    mp_profile *p = read_text(cases[i].yaml, &err);
    CHECK(!p, "case %zu must fail", i);
    CHECK(strstr(err.msg, cases[i].want), "case %zu: got '%s', want '%s'", i,
          err.msg, cases[i].want);
    mp_profile_free(p);
  }
  /* every prefix of a valid file either reads or fails cleanly */
  size_t n = strlen(golden_in);
  for (size_t cut = 0; cut < n; cut++) {
    mp_profile *p = mp_profile_new();
    mp_err err;
    (void)mp_read_yaml(p, golden_in, cut, &err);
    mp_profile_free(p);
  }
}

int main(int argc, char **argv) {
  if (argc >= 2)
    return drive(argv[1], argc >= 3 && strcmp(argv[2], "--symbolized") == 0);
  test_scalars();
  test_read_sample();
  test_documents();
  test_write_golden();
  test_write_empty();
  test_round_trip();
  test_errors();
  return check_result();
}
