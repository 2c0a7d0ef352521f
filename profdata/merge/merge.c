/* merge.c - the merge engine (merge.h): input files recognised by
 * content, read into one profile by a pipeline of threads, and the
 * inputs that are (or may have) timelines.
 */
#include "merge.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/helper.h"
#include "common/io.h"
#include "profdata/indexed/indexed.h"
#include "profdata/instrprof/instrprof.h"
#include "profdata/raw/raw.h"
#include "profdata/roots/roots.h"
#include "profdata/timeline/timeline.h"
#include "profdata/yaml/yaml_io.h"

/* One input, opened and (for a raw profile) validated and keyed ahead of
 * being added to the profile. */
typedef struct input {
  const char *path;
  mp_raw_reader *raw; /* shared; preparing only reads its binaries */
  uint64_t weight; /* of its instrumentation counts */
  mp_file f;
  int opened;
  enum { IN_RAW, IN_INDEXED, IN_YAML, IN_INSTR_RAW } kind;
  mp_raw_file *prepared;
  mp_input_ids *ids; /* where its stack ids go, or NULL: not wanted */
  int rc;
  mp_err err;
} input;

static void prepare_input(input *in) {
  in->rc = mp_file_open(&in->f, in->path, &in->err);
  if (in->rc) return;
  in->opened = 1;
  const void *d = in->f.data;
  size_t n = in->f.size;
  if (mp_is_raw(d, n)) {
    in->kind = IN_RAW;
    in->rc = mp_raw_prepare(in->raw, in->path, d, n, &in->prepared, &in->err);
  } else if (mp_is_indexed(d, n)) {
    in->kind = IN_INDEXED;
  } else if (mp_is_yaml(d, n)) {
    in->kind = IN_YAML;
  } else if (mp_is_instr_raw(d, n)) {
    in->kind = IN_INSTR_RAW;
  } else {
    in->rc = mp_fail(&in->err, "not a profile (neither a raw memory or "
                               "instrumentation profile, an indexed profile "
                               "nor YAML starting with '---')");
  }
}

static void close_input(input *in);

/* What the second thread does for the next input: first release the
 * input added before the current one (unmapping a file of some MB takes
 * the kernel a while), then prepare the next. */
typedef struct prep_job {
  input *next;
  input done;
  int finished; /* set last, for start_mibs */
} prep_job;

static void *prepare_thread(void *arg) {
  prep_job *j = arg;
  close_input(&j->done);
  prepare_input(j->next);
  __atomic_store_n(&j->finished, 1, __ATOMIC_RELEASE);
  return NULL;
}

static void close_input(input *in) {
  mp_raw_file_free(in->prepared);
  if (in->opened) mp_file_close(&in->f);
  in->prepared = NULL;
  in->opened = 0;
}

/* The MIBs of the raw input whose stacks were added last, being added on
 * a thread of their own (mp_raw_add_mibs) while the next input's stacks
 * are added. */
typedef struct mib_stage {
  pthread_t t;
  input *in; /* NULL: none running */
} mib_stage;

static void *add_mibs_thread(void *arg) {
  input *in = arg;
  mp_raw_add_mibs(in->raw, in->prepared);
  return NULL;
}

static void finish_mibs(mib_stage *m) {
  if (m->in) pthread_join(m->t, NULL);
  m->in = NULL;
}

/* On a thread of its own only while inputs bring many new stacks: then
 * adding the stacks (symbolizing, interning) is most of the work and the
 * MIBs are worth moving off.  A file of known stacks is lookups here and
 * merges there over the same cache entries, which two cores only fetch
 * twice.  `inline_mibs`: add them here anyway (see add_input). */
static void start_mibs(mib_stage *m, input *in, int inline_mibs) {
  if (!inline_mibs && mp_raw_mostly_new(in->prepared) &&
      mp_helper_start(&m->t, add_mibs_thread, in) == 0) {
    m->in = in;
  } else {
    mp_raw_add_mibs(in->raw, in->prepared);
  }
}

/* Input i: a raw input's stacks, while the MIBs of input i - 1 finish,
 * then its own MIBs are started; any other input whole, once the profile
 * is quiet (its reader touches all of it).  The MIBs stay on this thread
 * when it would only wait next: for the last input, and on two CPUs while
 * the next input is still being prepared (`prep`, NULL if nothing is):
 * a MIB thread would share the other CPU with that preparation and this
 * thread would wait for both. */
static int add_input(mp_profile *p, input *in, mib_stage *m, int last,
                     const prep_job *prep) {
  if (in->rc == 0 && in->kind == IN_RAW) {
    int rc = mp_raw_add_stacks(in->raw, in->prepared, &in->err);
    if (rc == 0 && in->ids) in->ids->raw = 1;
    if (rc == 0 && in->ids && in->ids->wanted) {
      mp_raw_stack_ids(in->raw, in->prepared, &in->ids->ids, &in->ids->stacks,
                       &in->ids->n);
    }
    finish_mibs(m);
    int prep_busy =
        prep && !__atomic_load_n(&prep->finished, __ATOMIC_ACQUIRE);
    if (rc == 0)
      start_mibs(m, in, last || (prep_busy && mp_helper_cpus() <= 2));
    return rc;
  }
  finish_mibs(m);
  if (in->rc) return in->rc;
  const unsigned char *d = in->f.data;
  size_t n = in->f.size;
  switch (in->kind) {
  case IN_INDEXED:
    return mp_read_indexed_input(p, d, n, in->path, in->weight, &in->err);
  case IN_INSTR_RAW:
    return mp_read_instr_raw(mp_profile_instr(p), in->path, d, n, in->weight,
                             &in->err);
  default: return mp_read_yaml(p, d, n, &in->err);
  }
}

/* A pipeline of three inputs on up to three threads: input i+1 is opened,
 * validated and keyed (and input i-2 released) on one while the stacks of
 * input i are added on this one and the MIBs of input i-1 on a third (see
 * add_input and start_mibs for when); the parts take comparable time.
 * Each step takes the inputs in order, so the result is the same as
 * reading them one by one. */
mp_profile *mp_merge_read(const mp_merge_inputs *ins, msym_ctx *sym,
                          mp_input_ids *ids, const char **failed_path,
                          mp_err *err) {
  mp_profile *p = mp_profile_new();
  mp_raw_reader *raw = mp_raw_reader_new(p, sym);
  mp_raw_reader_expect(raw, ins->n);
  mp_raw_reader_given(raw, ins->n_binaries);
  mp_raw_reader_probe(raw, ins->probe, ins->probe_ctx);
  input in[3];
  memset(in, 0, sizeof in);
  mib_stage mibs = {0};
  int failed = 0;
  if (ins->n) {
    in[0].path = ins->paths[0];
    in[0].weight = ins->weights[0];
    in[0].raw = raw;
    in[0].ids = ids;
    prepare_input(&in[0]);
  }
  for (size_t i = 0; i < ins->n && !failed; i++) {
    input *cur = &in[i % 3], *next = &in[(i + 1) % 3];
    pthread_t t;
    int threaded = 0, more = i + 1 < ins->n;
    prep_job job = {next, *next, 0}; /* next's slot holds input i - 2 */
    memset(next, 0, sizeof *next);
    if (more) {
      next->path = ins->paths[i + 1];
      next->weight = ins->weights[i + 1];
      next->raw = raw;
      next->ids = ids ? &ids[i + 1] : NULL;
      threaded = mp_helper_start(&t, prepare_thread, &job) == 0;
    }
    if (!threaded) close_input(&job.done);
    if (add_input(p, cur, &mibs, !more, threaded ? &job : NULL) != 0) {
      *failed_path = cur->path;
      *err = cur->err;
      failed = 1;
    }
    if (threaded) pthread_join(t, NULL);
    if (!failed && more && !threaded) prepare_input(next);
  }
  finish_mibs(&mibs);
  for (int k = 0; k < 3; k++) close_input(&in[k]);
  mp_raw_reader_free(raw);
  if (failed) {
    mp_profile_free(p);
    return NULL;
  }
  mp_profile_finish(p);
  return p;
}
void mp_merge_input_sizes(const mp_merge_inputs *in, uint64_t *sum,
                          uint64_t *largest) {
  struct stat st;
  *sum = *largest = 0;
  for (size_t i = 0; i < in->n; i++)
    if (stat(in->paths[i], &st) == 0 && S_ISREG(st.st_mode)) {
      *sum += (uint64_t)st.st_size;
      if ((uint64_t)st.st_size > *largest) *largest = (uint64_t)st.st_size;
    }
}


/* 1 if the file at path starts with a timeline's or a roots file's magic
 * (files the runtime writes beside a raw profile).  O_NONBLOCK: a
 * FIFO without a writer must not hold the tool here (the reader refuses
 * it later, at once). */
static int starts_as_timeline(const char *path) {
  uint8_t head[8];
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return 0;
  ssize_t n = read(fd, head, sizeof head);
  close(fd);
  return n > 0 && (mp_is_timeline(head, (size_t)n) || mp_is_roots(head, (size_t)n));
}

/* 1 if `raw` is one of the inputs.  Input `near` is tried first: a
 * sorted glob lists a raw profile just before its timeline, and a fleet's
 * glob of thousands of both would otherwise compare every pair. */
static int is_input(const mp_merge_inputs *in, const char *raw, size_t near) {
  if (near < in->n && strcmp(in->paths[near], raw) == 0) return 1;
  for (size_t i = 0; i < in->n; i++)
    if (strcmp(in->paths[i], raw) == 0) return 1;
  return 0;
}

const char **mp_merge_drop_timelines(const mp_merge_inputs *in, size_t *n_kept,
                                     const char ***orphans, size_t *n_orphans) {
  const char **kept = NULL;
  size_t n = 0;
  *orphans = NULL;
  *n_orphans = 0;
  for (size_t i = 0; i < in->n; i++) {
    const char *path = in->paths[i];
    if (!starts_as_timeline(path)) {
      if (kept) kept[n] = path;
      n++;
      continue;
    }
    if (!kept) {
      kept = mp_xmalloc((in->n + 1) * sizeof *kept);
      memcpy(kept, in->paths, i * sizeof *kept);
    }
    size_t len = strlen(path);
    size_t suffix = len > 9 && strcmp(path + len - 9, ".timeline") == 0 ? 9
                    : len > 6 && strcmp(path + len - 6, ".roots") == 0 ? 6
                                                                        : 0;
    char *raw = suffix ? strndup(path, len - suffix) : NULL;
    if (!raw || !is_input(in, raw, i - 1)) { /* i - 1 wraps for i = 0: past the end */
      if (!*orphans) *orphans = mp_xmalloc(in->n * sizeof **orphans);
      (*orphans)[(*n_orphans)++] = path;
    }
    free(raw);
  }
  *n_kept = n;
  return kept ? kept : (const char **)in->paths;
}

mp_input_ids *mp_merge_timeline_inputs(const mp_merge_inputs *in, int given) {
  mp_input_ids *ids = mp_xcalloc(in->n + 1, sizeof *ids);
  int any = 0;
  for (size_t i = 0; i < in->n; i++) {
    char *t = given ? NULL : mp_timeline_path_for(in->paths[i]);
    char *roots = mp_roots_path_for(in->paths[i]);
    ids[i].wanted = !t || access(t, F_OK) == 0 || access(roots, F_OK) == 0;
    any |= ids[i].wanted;
    free(t);
    free(roots);
  }
  if (!any) {
    free(ids);
    return NULL;
  }
  return ids;
}

void mp_merge_ids_free(mp_input_ids *ids, size_t n) {
  for (size_t i = 0; ids && i < n; i++) {
    free(ids[i].ids);
    free(ids[i].stacks);
  }
  free(ids);
}
