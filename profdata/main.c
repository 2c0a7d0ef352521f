/* main.c - memprof-profdata: `merge` and `show`.
 *
 * Parsing lives in cli.c; this file does the I/O: open the binaries, read
 * every input (raw, indexed or YAML, detected by content) into one profile,
 * then write it.  Any error is reported as "memprof-profdata: error: WHAT:
 * why" with exit status 1, and nothing is written.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "error.h"
#include "indexed.h"
#include "io.h"
#include "model.h"
#include "raw.h"
#include "symbolizer.h"
#include "yaml_io.h"

#ifndef MEMPROF_VERSION_STRING
#define MEMPROF_VERSION_STRING "0.1.0"
#endif

static const char *tool = "memprof-profdata";

static int report(const char *what, const char *msg) {
  if (what)
    fprintf(stderr, "%s: error: %s: %s\n", tool, what, msg);
  else
    fprintf(stderr, "%s: error: %s\n", tool, msg);
  return 1;
}

static int usage_error(const cli_opts *o, const char *msg) {
  report(NULL, msg);
  const char *cmd = cli_cmd_name(o->cmd);
  fprintf(stderr, "Try '%s%s%s --help' for more information.\n", tool,
          cmd ? " " : "", cmd ? cmd : "");
  return 1;
}

static msym_ctx *open_binaries(const cli_opts *o) {
  msym_ctx *c = msym_new();
  msym_err e;
  for (size_t i = 0; i < o->n_debug_dirs; i++)
    if (msym_add_debug_dir(c, o->debug_dirs[i], &e) != 0) {
      report(o->debug_dirs[i], e.msg);
      msym_free(c);
      return NULL;
    }
  for (size_t i = 0; i < o->n_binaries; i++)
    if (msym_add_binary(c, o->binaries[i], &e) != 0) {
      report(o->binaries[i], e.msg);
      msym_free(c);
      return NULL;
    }
  return c;
}

static int read_one(mp_profile *p, const char *path, msym_ctx *sym,
                    mp_err *err) {
  mp_file f;
  if (mp_file_open(&f, path, err) != 0) return -1;
  int rc;
  if (mp_is_raw(f.data, f.size))
    rc = mp_read_raw(p, path, f.data, f.size, sym, err);
  else if (mp_is_indexed(f.data, f.size))
    rc = mp_read_indexed(p, f.data, f.size, err);
  else if (mp_is_yaml(f.data, f.size))
    rc = mp_read_yaml(p, f.data, f.size, err);
  else
    rc = mp_fail(err, "not a memory profile (neither raw, indexed nor YAML "
                      "starting with '---')");
  mp_file_close(&f);
  return rc;
}

static mp_profile *read_inputs(const cli_opts *o, msym_ctx *sym) {
  mp_profile *p = mp_profile_new();
  for (size_t i = 0; i < o->n_inputs; i++) {
    mp_err err;
    if (read_one(p, o->inputs[i], sym, &err) != 0) {
      report(o->inputs[i], err.msg);
      mp_profile_free(p);
      return NULL;
    }
  }
  return p;
}

static int write_output(const char *path, const mp_buf *b) {
  mp_err err;
  if (mp_write_atomic(path, b->data, b->len, &err) != 0)
    return report(path, err.msg);
  return 0;
}

static int run_merge(const cli_opts *o, const mp_profile *p) {
  mp_buf b = {0};
  mp_err err;
  const char *out = o->out ? o->out : MP_DEFAULT_MERGE_OUTPUT;
  int rc = mp_write_indexed(p, &o->index, &b, &err) != 0
               ? report(out, err.msg)
               : write_output(out, &b);
  mp_buf_free(&b);
  return rc;
}

static int run_show(const cli_opts *o, const mp_profile *p) {
  mp_buf b = {0};
  mp_write_yaml(p, o->symbolized, &b);
  int rc = write_output(o->out ? o->out : "-", &b);
  mp_buf_free(&b);
  return rc;
}

static int run(const cli_opts *o) {
  msym_ctx *sym = open_binaries(o);
  if (!sym) return 1;
  mp_profile *p = read_inputs(o, sym);
  int rc = 1;
  if (p) rc = o->cmd == CLI_MERGE ? run_merge(o, p) : run_show(o, p);
  mp_profile_free(p);
  msym_free(sym);
  return rc;
}

int main(int argc, char **argv) {
  cli_opts o;
  mp_err err;
  int rc;
  if (cli_parse(argc, argv, &o, &err) != 0) {
    rc = usage_error(&o, err.msg);
  } else if (o.help) {
    cli_usage(stdout, o.cmd);
    rc = 0;
  } else if (o.version) {
    printf("%s %s\n", tool, MEMPROF_VERSION_STRING);
    rc = 0;
  } else {
    rc = run(&o);
  }
  cli_free(&o);
  return rc;
}
