/* test_indexed_conv.c - a small driver that lets the Python tests in
 * test/indexed/ exercise the indexed reader and writer without the CLI.
 *
 *   test_indexed_conv                      self-check (ctest runs this)
 *   test_indexed_conv dump IN              read IN, print it as LLVM's
 *                                          memprof YAML (all 27 MIB fields,
 *                                          CalleeGuids) plus, for frames with
 *                                          symbol info, a "# sym" comment
 *   test_indexed_conv write IN OUT INDEX MEMPROF FULL SYMSEC [addsyms]
 *                                          read IN, write OUT with those
 *                                          options; addsyms first attaches
 *                                          made-up symbol info to every frame
 *   test_indexed_conv check IN             read IN; exit 1 with the message
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profdata/indexed/indexed.h"
#include "test/unit/check.h"

static void print_frame(const mp_profile *p, uint32_t f) {
  const mp_frame *fr = &p->frames[f];
  printf("          - { Function: 0x%llx, LineOffset: %u, Column: %u, "
         "IsInlineFrame: %s }", (unsigned long long)fr->guid, fr->line_offset,
         fr->column, fr->is_inline ? "true" : "false");
  const mp_frame_sym *s = &p->syms[f];
  if (s->name != MP_NO_STRING || s->file != MP_NO_STRING) {
    const char *n = mp_string(p, s->name), *file = mp_string(p, s->file);
    printf(" # sym %s %s %u %u %u", n ? n : "-", file ? file : "-", s->line,
           s->column, s->discriminator);
  }
  printf("\n");
}

static void print_stack(const mp_profile *p, uint32_t st) {
  const uint32_t *f = mp_stack_frames(p, st);
  for (uint32_t i = 0; i < p->stacks[st].len; i++) print_frame(p, f[i]);
}

static void dump(const mp_profile *p) {
  printf("---\nHeapProfileRecords:\n");
  for (size_t i = 0; i < p->n_records; i++) {
    const mp_record *r = &p->records[i];
    printf("  - GUID: 0x%llx\n", (unsigned long long)r->guid);
    if (r->n_allocs) printf("    AllocSites:\n");
    for (size_t j = 0; j < r->n_allocs; j++) {
      const mpf_mib *m = &mp_alloc_of(r, j)->mib;
      printf("      - Callstack:\n");
      print_stack(p, mp_alloc_of(r, j)->stack);
      printf("        MemInfoBlock:\n");
#define MIB_FIELD(Tag, Name, CType, Merge) \
  printf("          " #Name ": %llu\n", (unsigned long long)m->Name);
#include "include/MIBDef.inc"
#undef MIB_FIELD
    }
    if (r->n_calls) printf("    CallSites:\n");
    for (size_t j = 0; j < r->n_calls; j++) {
      const mp_call_site *c = &r->calls[j];
      printf("      - Frames:\n");
      print_stack(p, c->stack);
      if (!c->n_callees) continue;
      printf("        CalleeGuids: [ ");
      for (uint32_t k = 0; k < c->n_callees; k++)
        printf("%s0x%llx", k ? ", " : "", (unsigned long long)c->callees[k]);
      printf(" ]\n");
    }
  }
}

static void add_syms(mp_profile *p) {
  for (size_t f = 0; f < p->n_frames; f++) {
    char name[64], file[96];
    snprintf(name, sizeof name, "fn_%llx",
             (unsigned long long)p->frames[f].guid);
    snprintf(file, sizeof file, "/usr/include/c++/12/bits/f%zu.h", f % 4);
    mp_frame_sym s = {mp_intern_string(p, name, strlen(name)),
                      mp_intern_string(p, file, strlen(file)),
                      p->frames[f].line_offset + 10, p->frames[f].column,
                      (uint32_t)(f % 3)};
    mp_set_frame_sym(p, (uint32_t)f, &s);
  }
}

static int load(mp_profile *p, const char *path) {
  mp_file f;
  mp_err err;
  if (mp_file_open(&f, path, &err) ||
      mp_read_indexed(p, f.data, f.size, &err)) {
    fprintf(stderr, "%s: %s\n", path, err.msg);
    if (f.data) mp_file_close(&f);
    return -1;
  }
  mp_file_close(&f);
  return 0;
}

static int self_check(void) {
  mp_profile *p = mp_profile_new();
  mp_frame fr = {42, 1, 2, 0};
  uint32_t f = mp_intern_frame(p, &fr);
  mpf_mib m = {0};
  m.AllocCount = 3;
  mp_add_alloc_site(p, 42, mp_intern_stack(p, &f, 1), &m, NULL);
  mp_index_opts o = MP_INDEX_OPTS_DEFAULT;
  mp_buf out = {0};
  mp_err err;
  mp_profile *q = mp_profile_new();
  int wrote = mp_write_indexed(p, &o, &out, &err) == 0;
  CHECK(wrote, "write: %s", err.msg);
  if (wrote) {
    CHECK(mp_read_indexed(q, out.data, out.len, &err) == 0, "read: %s", err.msg);
    CHECK_EQ(q->n_records, 1);
    if (q->n_records == 1)
      CHECK_EQ(mp_alloc_of(&q->records[0], 0)->mib.AllocCount, 3);
  }
  mp_buf_free(&out);
  mp_profile_free(p);
  mp_profile_free(q);
  return check_result();
}

int main(int argc, char **argv) {
  if (argc < 2) return self_check();
  mp_profile *p = mp_profile_new();
  int rc = 1;
  if (!strcmp(argv[1], "dump") && argc == 3) {
    if (load(p, argv[2]) == 0) {
      dump(p);
      rc = 0;
    }
  } else if (!strcmp(argv[1], "check") && argc == 3) {
    rc = load(p, argv[2]) ? 1 : 0;
  } else if (!strcmp(argv[1], "write") && (argc == 8 || argc == 9)) {
    mp_index_opts o = {(unsigned)atoi(argv[4]), (unsigned)atoi(argv[5]),
                       atoi(argv[6]), atoi(argv[7]), 0};
    mp_buf out = {0};
    mp_err err;
    if (load(p, argv[2]) == 0) {
      if (argc == 9) add_syms(p);
      if (mp_write_indexed(p, &o, &out, &err) ||
          mp_write_atomic(argv[3], out.data, out.len, &err))
        fprintf(stderr, "%s: %s\n", argv[3], err.msg);
      else
        rc = 0;
    }
    mp_buf_free(&out);
  } else {
    fprintf(stderr, "usage: see the comment at the top of %s\n", __FILE__);
    rc = 2;
  }
  mp_profile_free(p);
  return rc;
}
