/* test_roots_read.c - the roots file reader (profdata/roots/roots.c) on a
 * hand-encoded file: an exact parse, and refusals naming the offset.
 *
 * `test_roots_read --json FILE` prints FILE as JSON in the shape of
 * test/lib/roots_file.py's dicts, or the reader's message on stderr with
 * exit status 1: test/roots/test_roots_format.py compares the C reader to
 * the Python one through it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/unit/check.h"
#include "profdata/roots/roots.h"

static void json_str(const char *s) {
  printf("\"");
  for (; *s; s++)
    if (*s == '"' || *s == '\\')
      printf("\\%c", *s);
    else if ((unsigned char)*s < 0x20)
      printf("\\u%04x", *s);
    else
      putchar(*s);
  printf("\"");
}

static void json_list(const mp_roots_ctx *v, size_t n, int wide) {
  printf("[");
  for (size_t i = 0; i < n; i++) {
    printf("%s[%" PRIu64 ", %" PRIu64 ", %" PRIu64, i ? ", " : "", v[i].stack_id, v[i].bytes,
           v[i].blocks);
    if (wide)
      printf(", %" PRIu64 ", %" PRIu64, v[i].direct_bytes, v[i].direct_blocks);
    printf("]");
  }
  printf("]");
}

static void json_root(const mp_roots_root *x) {
  printf("{\"kind\": %" PRIu64 ", \"flags\": %" PRIu64 ", \"module\": %" PRIu64
         ", \"offset\": %" PRIu64 ", \"size\": %" PRIu64 ", \"name\": ",
         x->kind, x->flags, x->module, x->offset, x->size);
  json_str(x->name);
  printf(", \"reached\": [%" PRIu64 ", %" PRIu64 "], \"retained\": [%" PRIu64 ", %" PRIu64
         "], \"ctx\": ",
         x->reached_bytes, x->reached_blocks, x->retained_bytes, x->retained_blocks);
  json_list(x->ctx, x->n_ctx, 0);
  printf("}");
}

static void json_bands(const mp_roots_census *c) {
  printf(", \"bands\": [");
  for (size_t i = 0; i < c->n_bands; i++) {
    const mp_roots_band *b = &c->bands[i];
    printf("%s[[", i ? ", " : "");
    for (size_t j = 0; j < b->n_roots; j++)
      printf("%s%zu", j ? ", " : "", b->roots[j]);
    printf("], %" PRIu64 ", %" PRIu64 "]", b->bytes, b->blocks);
  }
  printf("], \"other\": [%" PRIu64 ", %" PRIu64 "]", c->other_bytes, c->other_blocks);
}

static int dump_json(const char *path) {
  mp_roots t;
  mp_err e = {{0}};
  if (mp_roots_read(path, &t, &e)) {
    fprintf(stderr, "%s\n", e.msg);
    return 1;
  }
  printf("{\"version\": %" PRIu64 ", \"pid\": %" PRIu64 ", \"raw_bytes\": %" PRIu64
         ", \"census\": [",
         t.version, t.pid, t.raw_bytes);
  for (size_t i = 0; i < t.n_census; i++) {
    const mp_roots_census *c = &t.census[i];
    printf("%s{\"kind\": %" PRIu64 ", \"t_ms\": %" PRIu64 ", \"heap_bytes\": %" PRIu64
           ", \"heap_blocks\": %" PRIu64 ", \"scanned\": %" PRIu64 ", \"modules\": [",
           i ? ", " : "", c->kind, c->t_ms, c->heap_bytes, c->heap_blocks, c->scanned_bytes);
    for (size_t k = 0; k < c->n_modules; k++) {
      printf("%s", k ? ", " : "");
      json_str(c->modules[k]);
    }
    printf("], \"roots\": [");
    for (size_t k = 0; k < c->n_roots; k++) {
      printf("%s", k ? ", " : "");
      json_root(&c->roots[k]);
    }
    printf("], \"shared\": [%" PRIu64 ", %" PRIu64 "], \"shared_ctx\": ", c->shared_bytes,
           c->shared_blocks);
    json_list(c->shared, c->n_shared, 0);
    if (t.version >= 3)
      json_bands(c);
    printf(", \"unreached\": [%" PRIu64 ", %" PRIu64 ", %" PRIu64 ", %" PRIu64
           "], \"unreached_ctx\": ",
           c->unreached_bytes, c->unreached_blocks, c->direct_bytes, c->direct_blocks);
    json_list(c->unreached, c->n_unreached, 1);
    printf("}");
  }
  printf("]}\n");
  mp_roots_free(&t);
  return 0;
}

/* One census of a 700-byte heap: global "g" of module "/a" retains 100
 * bytes of stack id 2; 200 bytes of id 3 shared; 400 of id 5 unreached. */
static const uint8_t good[] = {
    'M', 'P', 'R', 'O', 'O', 'T', 'S', '\n', 1, 0, 7, 0, 1, /* header, 1 census */
    3, 9, 0xbc, 0x05, 3, 64,                          /* exit, t 9, 700 B, 3 blocks */
    1, 2, '/', 'a',                                   /* modules */
    1, 1, 0, 1, 0x10, 8, 1, 'g', 100, 1, 100, 1,       /* root g */
    1, 2, 100, 1,                                     /* its list */
    0xc8, 0x01, 1, 1, 3, 0xc8, 0x01, 1,               /* shared */
    0x90, 0x03, 1, 0x90, 0x03, 1, 1, 5, 0x90, 0x03, 1, 0x90, 0x03, 1, /* unreached */
};

static void test_good(void) {
  mp_roots t;
  mp_err e = {{0}};
  int rc = mp_roots_parse("f.roots", good, sizeof good, &t, &e);
  CHECK(rc == 0, "good file refused: %s", e.msg);
  if (rc)
    return;
  CHECK(t.pid == 7 && t.n_census == 1, "header");
  const mp_roots_census *c = &t.census[0];
  CHECK(c->kind == 3 && c->heap_bytes == 700 && c->heap_blocks == 3 && c->n_modules == 1,
        "census");
  CHECK(c->n_roots == 1 && !strcmp(c->roots[0].name, "g") && c->roots[0].offset == 16 &&
            c->roots[0].n_ctx == 1 && c->roots[0].ctx[0].stack_id == 2,
        "root");
  char label[64];
  mp_roots_label(c, &c->roots[0], label, sizeof label);
  CHECK(!strcmp(label, "g (a)"), "label %s", label);
  CHECK(c->shared_bytes == 200 && c->n_shared == 1 && c->shared[0].stack_id == 3, "shared");
  CHECK(c->unreached_bytes == 400 && c->direct_blocks == 1 && c->unreached[0].stack_id == 5,
        "unreached");
  mp_roots_free(&t);
}

static void refused(size_t at, int v, const char *want) {
  uint8_t d[sizeof good];
  memcpy(d, good, sizeof good);
  size_t n = sizeof good;
  if (v < 0)
    n = at;
  else
    d[at] = (uint8_t)v;
  mp_roots t;
  mp_err e = {{0}};
  int rc = mp_roots_parse("f.roots", d, n, &t, &e);
  CHECK(rc == -1, "damage at %zu accepted", at);
  CHECK(strstr(e.msg, want) != NULL, "damage at %zu: got \"%s\", want \"%s\"", at, e.msg,
        want);
  CHECK(t.census == NULL && t.n_census == 0, "refusal left a partial file");
}

int main(int argc, char **argv) {
  if (argc == 3 && !strcmp(argv[1], "--json"))
    return dump_json(argv[2]);
  test_good();
  refused(0, 'X', "offset 0x0: not a memprof roots file");
  refused(8, 4, "offset 0x8: version 4 (supported: 1 to 3)");
  refused(12, 200, "offset 0xc: CensusCount");
  refused(13, 4, "offset 0xd: census 0: kind 4");
  refused(24, 5, "offset 0x18: root 0: kind 5");
  refused(26, 2, "offset 0x1a: root 0: module 2");
  refused(33, 101, "offset 0x21: root 0: retains more than it reaches");
  refused(37, 99, "offset 0x23: root 0: the contexts sum to 99 bytes");
  refused(sizeof good - 1, -1, "varint runs past the end");
  refused(15, 0xbd, "sum to 700 bytes in 3 blocks, the heap held 701");
  return check_result();
}
