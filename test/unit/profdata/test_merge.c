/* test_merge.c - the merge engine (profdata/merge/): inputs recognised by
 * content and read by the pipeline into the profile that reading them one
 * by one gives, whatever the order and whether helper threads run; a bad
 * input named with its reason; timelines left out of the inputs (those
 * whose raw profile is not an input named) and the inputs that may have
 * one.  Inputs are the YAML profiles of the fuzz corpus and indexed files
 * written from them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test/unit/check.h"
#include "common/helper.h"
#include "common/io.h"
#include "profdata/indexed/indexed.h"
#include "profdata/merge/merge.h"
#include "profdata/model/model.h"
#include "profdata/yaml/yaml_io.h"

static char dir[] = "/tmp/test_merge.XXXXXX";
static const char *const corpus[] = {"llvm22-indexed-show.yaml",
                                     "ours-from-indexed.yaml",
                                     "ours-symbolized-hist.yaml"};
#define N_CORPUS 3
static char *yaml_path[N_CORPUS];

static char *path_in(const char *folder, const char *name) {
  size_t n = strlen(folder) + strlen(name) + 2;
  char *p = malloc(n);
  snprintf(p, n, "%s/%s", folder, name);
  return p;
}

static void write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, n, f) != n) {
    perror(path);
    exit(2);
  }
  fclose(f);
}

/* The profile as symbolized YAML text (NUL-terminated; free it). */
static char *as_yaml(const mp_profile *p) {
  mp_buf b = {0};
  mp_write_yaml(p, 1, &b);
  mp_buf_put(&b, "", 1);
  return (char *)b.data;
}

/* Reading the inputs one by one, in order, into one profile. */
static char *one_by_one(const char *const *paths, size_t n) {
  mp_profile *p = mp_profile_new();
  for (size_t i = 0; i < n; i++) {
    mp_file f;
    mp_err e;
    if (mp_file_open(&f, paths[i], &e) != 0 ||
        mp_read_yaml(p, f.data, f.size, &e) != 0) {
      printf("reading %s: %s\n", paths[i], e.msg);
      exit(2);
    }
    mp_file_close(&f);
  }
  mp_profile_finish(p);
  char *y = as_yaml(p);
  mp_profile_free(p);
  return y;
}

static mp_profile *merged(const char *const *paths, size_t n,
                          const char **failed, mp_err *e) {
  static const uint64_t ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  mp_merge_inputs in = {paths, ones, n, 0, NULL, NULL};
  msym_ctx *sym = msym_new();
  mp_profile *p = mp_merge_read(&in, sym, NULL, failed, e);
  msym_free(sym);
  return p;
}

static char *merged_yaml(const char *const *paths, size_t n) {
  const char *failed = NULL;
  mp_err e;
  mp_profile *p = merged(paths, n, &failed, &e);
  if (!p) {
    printf("merging: %s: %s\n", failed, e.msg);
    return strdup("");
  }
  char *y = as_yaml(p);
  mp_profile_free(p);
  return y;
}

/* The pipeline gives what reading one by one gives, on one thread and on
 * several, in any order of the inputs. */
static void test_pipeline_equals_sequential(void) {
  const char *fwd[N_CORPUS], *rev[N_CORPUS];
  for (int i = 0; i < N_CORPUS; i++) {
    fwd[i] = yaml_path[i];
    rev[i] = yaml_path[N_CORPUS - 1 - i];
  }
  char *want = one_by_one(fwd, N_CORPUS);
  CHECK(strstr(want, "HeapProfileRecords") != NULL, "reference has records");
  for (int helpers = 0; helpers <= 1; helpers++) {
    mp_helper_enable(helpers);
    char *a = merged_yaml(fwd, N_CORPUS), *b = merged_yaml(rev, N_CORPUS);
    CHECK(strcmp(a, want) == 0, "helpers=%d: merged in order differs from one by one", helpers);
    CHECK(strcmp(b, want) == 0, "helpers=%d: merged in reverse differs from one by one", helpers);
    free(a);
    free(b);
  }
  mp_helper_enable(0);
  free(want);
}

/* An indexed input is recognised as one: the file written from a profile
 * reads back into the same profile as when read alone. */
static void test_indexed_input(void) {
  const char *all[N_CORPUS];
  for (int i = 0; i < N_CORPUS; i++) all[i] = yaml_path[i];
  const char *failed = NULL;
  mp_err e;
  mp_profile *p = merged(all, N_CORPUS, &failed, &e);
  CHECK(p != NULL, "merge of the corpus");
  if (!p) return;
  mp_index_opts o = MP_INDEX_OPTS_DEFAULT;
  o.full_schema = 1;
  mp_buf b = {0};
  CHECK(mp_write_indexed(p, &o, &b, &e) == 0, "write indexed: %s", e.msg);
  char *ipath = path_in(dir, "all.memprofdata");
  write_file(ipath, b.data, b.len);

  mp_profile *q = mp_profile_new();
  CHECK(mp_read_indexed(q, b.data, b.len, &e) == 0, "read indexed: %s", e.msg);
  mp_profile_finish(q);
  char *want = as_yaml(q);
  const char *one[1] = {ipath};
  char *got = merged_yaml(one, 1);
  CHECK(strcmp(got, want) == 0, "indexed input through the engine differs");
  CHECK(strstr(got, "HeapProfileRecords") != NULL, "indexed input has records");
  free(got);
  free(want);
  mp_profile_free(q);
  mp_buf_free(&b);
  mp_profile_free(p);
  unlink(ipath);
  free(ipath);
}

/* The first bad input stops the merge and is named with its reason. */
static void test_bad_input_named(void) {
  char *bad = path_in(dir, "notes.txt");
  write_file(bad, "hello\n", 6);
  const char *in[3] = {yaml_path[0], bad, yaml_path[1]};
  const char *failed = NULL;
  mp_err e;
  mp_profile *p = merged(in, 3, &failed, &e);
  CHECK(p == NULL, "a bad input fails the merge");
  CHECK(failed && strcmp(failed, bad) == 0, "the failing input is named (%s)",
        failed ? failed : "none");
  CHECK(strncmp(e.msg, "not a profile", 13) == 0, "reason: %s", e.msg);
  mp_profile_free(p);
  unlink(bad);
  free(bad);
}

/* Timelines leave the inputs; one whose raw profile is not an input is an
 * orphan.  The inputs with "<input>.timeline" beside them may have one. */
static void test_timelines(void) {
  static const char magic[] = "MPTLINE\n";
  char *raw = path_in(dir, "memprof.profraw.1");
  char *tl = path_in(dir, "memprof.profraw.1.timeline");
  char *orphan = path_in(dir, "memprof.profraw.2.timeline");
  write_file(raw, "x", 1);
  write_file(tl, magic, 8);
  write_file(orphan, magic, 8);

  const char *paths[4] = {raw, tl, yaml_path[0], orphan};
  const uint64_t w[4] = {1, 1, 1, 1};
  mp_merge_inputs in = {paths, w, 4, 0, NULL, NULL};
  size_t n_kept, n_orphans;
  const char **orphans;
  const char **kept = mp_merge_drop_timelines(&in, &n_kept, &orphans, &n_orphans);
  CHECK(n_kept == 2 && kept != paths && strcmp(kept[0], raw) == 0 &&
            strcmp(kept[1], yaml_path[0]) == 0,
        "kept the two profiles (%zu)", n_kept);
  CHECK(n_orphans == 1 && strcmp(orphans[0], orphan) == 0,
        "the timeline without its raw profile is named (%zu)", n_orphans);
  free(orphans);

  mp_merge_inputs k = {kept, w, n_kept, 0, NULL, NULL};
  mp_input_ids *ids = mp_merge_timeline_inputs(&k, 0);
  CHECK(ids && ids[0].wanted && !ids[1].wanted,
        "only the input with a timeline beside it may have one");
  mp_merge_ids_free(ids, n_kept);
  ids = mp_merge_timeline_inputs(&k, 1);
  CHECK(ids && ids[0].wanted && ids[1].wanted, "--timeline: every input may");
  mp_merge_ids_free(ids, n_kept);
  mp_merge_inputs only_yaml = {kept + 1, w, 1, 0, NULL, NULL};
  CHECK(mp_merge_timeline_inputs(&only_yaml, 0) == NULL, "none may: NULL");
  free(kept);

  const char *no_tl[1] = {raw};
  mp_merge_inputs plain = {no_tl, w, 1, 0, NULL, NULL};
  const char **same = mp_merge_drop_timelines(&plain, &n_kept, &orphans, &n_orphans);
  CHECK(same == no_tl && n_kept == 1 && n_orphans == 0 && !orphans,
        "no timeline: the inputs themselves");

  uint64_t sum, largest;
  struct stat st;
  stat(yaml_path[0], &st);
  mp_merge_input_sizes(&in, &sum, &largest);
  CHECK(sum == 1 + 8 + 8 + (uint64_t)st.st_size, "sizes add up (%llu)",
        (unsigned long long)sum);
  CHECK(largest == (uint64_t)st.st_size, "largest input (%llu)",
        (unsigned long long)largest);
  unlink(raw);
  unlink(tl);
  unlink(orphan);
  free(raw);
  free(tl);
  free(orphan);
}

int main(void) {
  const char *src = getenv("MEMPROF_SOURCE_DIR");
  if (!src) {
    printf("MEMPROF_SOURCE_DIR is not set\n");
    return 2;
  }
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 2;
  }
  char *yaml_dir = path_in(src, "test/fuzz/corpus/yaml");
  for (int i = 0; i < N_CORPUS; i++) yaml_path[i] = path_in(yaml_dir, corpus[i]);
  free(yaml_dir);

  test_pipeline_equals_sequential();
  test_indexed_input();
  test_bad_input_named();
  test_timelines();

  for (int i = 0; i < N_CORPUS; i++) free(yaml_path[i]);
  rmdir(dir);
  return check_result();
}
