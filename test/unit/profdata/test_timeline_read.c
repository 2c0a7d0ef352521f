/* test_timeline_read.c - the timeline reader (profdata/timeline/timeline.c) on
 * hand-encoded files: an exact parse, and a refusal with the exact offset
 * for each kind of damage.
 *
 * `test_timeline_read --json FILE` prints FILE as JSON in the shape of
 * test/lib/timeline_file.py's dicts, or the reader's message on stderr
 * with exit status 1: the Python tests compare the C reader to the Python
 * writer through it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/unit/check.h"
#include "profdata/timeline/timeline.h"

static void json_list(const mp_timeline_live *v, size_t n) {
  printf("[");
  for (size_t i = 0; i < n; i++)
    printf("%s[%" PRIu64 ", %" PRIu64 ", %" PRIu64 "]", i ? ", " : "", v[i].stack_id,
           v[i].bytes, v[i].blocks);
  printf("]");
}

static int dump_json(const char *path) {
  mp_timeline t;
  mp_err e = {{0}};
  if (mp_timeline_read(path, &t, &e)) {
    fprintf(stderr, "%s\n", e.msg);
    return 1;
  }
  printf("{\"pid\": %" PRIu64 ", \"raw_bytes\": %" PRIu64 ", \"interval_ms\": %" PRIu64
         ", \"end_ms\": %" PRIu64 ", \"top_n\": %" PRIu64 ", \"total_allocs\": %" PRIu64
         ", \"start_ms\": %" PRId64 ", \"start_from\": %" PRIu64 ",\n",
         t.pid, t.raw_bytes, t.interval_ms, t.end_ms, t.top_n, t.total_allocs, t.start_ms,
         t.start_from);
  printf(" \"peak\": {\"t_ms\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"blocks\": %" PRIu64
         ", \"ctx\": ",
         t.peak_t_ms, t.peak_bytes, t.peak_blocks);
  json_list(t.at_peak, t.n_at_peak);
  printf("},\n \"exit\": {\"bytes\": %" PRIu64 ", \"blocks\": %" PRIu64 ", \"ctx\": ",
         t.exit_bytes, t.exit_blocks);
  json_list(t.at_exit, t.n_at_exit);
  printf("},\n \"census\": [");
  for (size_t i = 0; i < t.n_census; i++) {
    const mp_timeline_census *c = &t.census[i];
    printf("%s\n  {\"t_ms\": %" PRIu64 ", \"allocs\": %" PRIu64 ", \"live_bytes\": %" PRIu64
           ", \"live_blocks\": %" PRIu64 ", \"other_bytes\": %" PRIu64 ", \"ctx\": ",
           i ? "," : "", c->t_ms, c->allocs, c->live_bytes, c->live_blocks, c->other_bytes);
    json_list(c->ctx, c->n_ctx);
    printf("}");
  }
  printf("]}\n");
  mp_timeline_free(&t);
  return 0;
}

/* A small valid file: peak of 2 contexts, exit of 1, one census. */
static const uint8_t good[] = {
    'M', 'P', 'T', 'L', 'I', 'N', 'E', '\n',
    2, 0, 42, 0, 10, 100, 2, 5,      /* version flags pid raw interval end top allocs */
    6, 1,                            /* StartMs 3 (zigzag 6), from the kernel */
    50, 0xb0, 0x09, 3, 2,            /* peak: t 50, 1200 bytes, 3 blocks, 2 ctx */
    1, 0xa0, 0x06, 2, 2, 0x90, 0x03, 1, /* id 1: 800/2, id 3: 400/1 */
    100, 1, 1, 3, 100, 1,            /* exit: 100/1, id 3 */
    1, 10, 5, 0xf8, 0x01, 2, 0x58, 1, 2, 0xa0, 0x01, 1, /* census t 10, 5 allocs */
};

static int parse(const uint8_t *d, size_t n, mp_timeline *t, mp_err *e) {
  return mp_timeline_parse("f.timeline", d, n, t, e);
}

static void test_good(void) {
  mp_timeline t;
  mp_err e = {{0}};
  int rc = parse(good, sizeof good, &t, &e);
  CHECK(rc == 0, "good file refused: %s", e.msg);
  if (rc)
    return;
  CHECK(t.pid == 42 && t.interval_ms == 10 && t.end_ms == 100 && t.top_n == 2 &&
            t.total_allocs == 5 && t.start_ms == 3 && t.start_from == 1,
        "header");
  CHECK(t.peak_t_ms == 50 && t.peak_bytes == 1200 && t.peak_blocks == 3 &&
            t.n_at_peak == 2,
        "peak totals");
  CHECK(t.at_peak[0].stack_id == 1 && t.at_peak[0].bytes == 800 &&
            t.at_peak[1].stack_id == 3 && t.at_peak[1].bytes == 400,
        "peak contexts");
  CHECK(t.exit_bytes == 100 && t.n_at_exit == 1 && t.at_exit[0].stack_id == 3,
        "exit");
  CHECK(t.n_census == 1 && t.census[0].t_ms == 10 && t.census[0].allocs == 5 &&
            t.census[0].live_bytes == 248 &&
            t.census[0].other_bytes == 88 && t.census[0].n_ctx == 1 &&
            t.census[0].ctx[0].stack_id == 2 && t.census[0].ctx[0].bytes == 160,
        "census");
  mp_timeline_free(&t);
}

/* Damage at byte `at` (new value v, or truncate when v < 0): refused with
 * a message that contains `want`. */
static void refused(int at, int v, const char *want) {
  uint8_t d[sizeof good];
  memcpy(d, good, sizeof good);
  size_t n = sizeof good;
  if (v < 0)
    n = (size_t)at;
  else
    d[at] = (uint8_t)v;
  mp_timeline t;
  mp_err e = {{0}};
  int rc = parse(d, n, &t, &e);
  CHECK(rc == -1, "damage at %d accepted", at);
  CHECK(strstr(e.msg, want) != NULL, "damage at %d: got \"%s\", want \"%s\"", at, e.msg,
        want);
  CHECK(t.n_at_peak == 0 && t.at_peak == NULL && t.n_census == 0, "out not empty");
}

static void test_damage(void) {
  refused(0, 'X', "f.timeline: timeline at offset 0x0: not a memprof timeline");
  refused(5, -1, "offset 0x0: file of 5 bytes is shorter");
  refused(8, 1, "offset 0x8: version 1 (supported: 2)");
  refused(9, 4, "offset 0x9: unknown flags 0x4");
  refused(18, 101, "offset 0x12: PeakMs 101 is after EndMs 100");
  refused(21, 4, "offset 0x16: peak: contexts sum to 1200 bytes in 3 blocks, the "
                 "section says 1200 in 4");
  refused(22, 200, "offset 0x16: peak: 200 contexts cannot fit");
  refused(27, 0, "offset 0x1b: peak: context 1: id delta 0");
  refused(30, 0, "offset 0x1e: peak: context 1 (stack id 3): 0 blocks");
  refused(38, 101, "offset 0x26: census 0: time 0 + 101 is after EndMs 100");
  refused(14, 0, "offset 0x2c: census 0: 1 contexts, more than TopN 0");
  refused(40, 0xf9, "offset 0x2c: census 0: contexts and OtherBytes sum to 248 bytes, "
                    "LiveBytes says 249");
  refused(12, 0, "offset 0x25: 1 censuses but IntervalMs is 0");
  refused((int)sizeof good - 1, -1, "census 0: context 0: varint runs past the end");
  refused(33, 0x80, "offset 0x21: exit: 384 contexts cannot fit");
  /* the allocation counts: every block was an allocation first, and the
   * censuses' counts add up to TotalAllocs */
  refused(15, 2, "offset 0x16: peak: 3 blocks, more than the 2 allocations TotalAllocs "
                 "counts");
  refused(39, 6, "offset 0x27: census 0: 0 + 6 allocations exceed TotalAllocs 5");
  refused(39, 4, "offset 0x25: the censuses count 4 allocations, TotalAllocs 5");
  /* the start: not after the end, from a known source */
  refused(16, 202, "offset 0x10: StartMs 101 is after EndMs 100");
  refused(17, 3, "offset 0x11: StartFrom 3 (known: 1, 2)");
  refused(42, 6, "offset 0x2a: census 0: 6 live blocks, more than the 5 allocations so far");
  /* ExitBytes 1201 (two bytes) */
  uint8_t d[sizeof good];
  memcpy(d, good, sizeof good);
  d[31] = 0xb1;
  d[32] = 0x09;
  mp_timeline t;
  mp_err e = {{0}};
  CHECK(parse(d, sizeof d, &t, &e) == -1 &&
            strstr(e.msg, "offset 0x1f: ExitBytes 1201 exceeds PeakBytes 1200"),
        "exit above peak: %s", e.msg);
}

static void test_trailing_and_varints(void) {
  uint8_t d[sizeof good + 1];
  memcpy(d, good, sizeof good);
  d[sizeof good] = 0;
  mp_timeline t;
  mp_err e = {{0}};
  CHECK(parse(d, sizeof d, &t, &e) == -1 &&
            strstr(e.msg, "offset 0x31: 1 bytes after the last census"),
        "trailing byte: %s", e.msg);
  /* pid as an 11-byte varint, then as a 10-byte one above 64 bits */
  uint8_t v[40] = {'M', 'P', 'T', 'L', 'I', 'N', 'E', '\n', 2, 0};
  memset(v + 10, 0x80, 11);
  CHECK(parse(v, sizeof v, &t, &e) == -1 && strstr(e.msg, "offset 0xa: Pid: varint"),
        "long varint: %s", e.msg);
  v[19] = 2;
  CHECK(parse(v, sizeof v, &t, &e) == -1 &&
            strstr(e.msg, "offset 0xa: Pid: varint does not fit in 64 bits"),
        "wide varint: %s", e.msg);
}

static void test_match(void) {
  mp_timeline t;
  mp_err e = {{0}};
  uint8_t d[sizeof good];
  memcpy(d, good, sizeof good);
  d[11] = 77; /* RawBytes */
  CHECK(parse(d, sizeof d, &t, &e) == 0, "raw bytes 77: %s", e.msg);
  CHECK(mp_timeline_match(&t, "a.timeline", 77, &e) == 0, "matching size refused");
  CHECK(mp_timeline_match(&t, "a.timeline", 78, &e) == -1 &&
            !strcmp(e.msg, "a.timeline: timeline at offset 0xb: written for a raw "
                           "profile of 77 bytes, the raw profile beside it has 78"),
        "mismatch: %s", e.msg);
  mp_timeline_free(&t);
  char *p = mp_timeline_path_for("dir/app.memprof.12");
  CHECK(!strcmp(p, "dir/app.memprof.12.timeline"), "path_for: %s", p);
  free(p);
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--json"))
    return dump_json(argv[2]);
  test_good();
  test_damage();
  test_trailing_and_varints();
  test_match();
  return check_result();
}
