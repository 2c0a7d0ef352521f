/* symtool.c - memprof-symtool: the symbolizer library on the command line,
 * for tests and benchmarks.
 *
 *   memprof-symtool [-d DEBUGDIR]... [--time] [--quiet] [--symtab] BINARY [ADDR...]
 *       one JSON line per address (hex; read from stdin when none given):
 *       {"addr":"0x..","frames":[{"name":..,"file":..,"line":..,
 *        "column":..,"discriminator":..,"decl_line":..},...]}
 *       --time prints "N addresses, S seconds" to stderr; --quiet prints
 *       only "N addresses, K with frames, F frames" (for benchmarks);
 *       --symtab names addresses no debug information covers from the
 *       symbol table, as `memprof-profdata report` does.
 *   memprof-symtool [-d DEBUGDIR]... --info BINARY
 *       one JSON object: build id, executable PT_LOADs, debug info, split
 *       DWARF files not found.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "symbolizer.h"

static void usage(void) {
  fprintf(stderr,
          "usage: memprof-symtool [-d DEBUGDIR]... [--time] [--quiet] [--symtab] "
          "BINARY [ADDR...]\n       memprof-symtool [-d DEBUGDIR]... --info "
          "BINARY\n");
  exit(2);
}

static void put_json_string(const char *s) {
  if (!s) {
    fputs("null", stdout);
    return;
  }
  putchar_unlocked('"');
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      printf("\\%c", ch);
    else if (ch < 0x20)
      printf("\\u%04x", ch);
    else
      putchar_unlocked(ch);
  }
  putchar_unlocked('"');
}

static void print_info(msym_ctx *c, const msym_module *m) {
  /* Units are looked at when the first address is symbolized. */
  const msym_frame *f;
  size_t n;
  mp_err err;
  msym_symbolize(c, m, m->exec_vaddr, &f, &n, &err);
  const char *first_missing;
  size_t missing = msym_module_missing_split(c, m, &first_missing);
  printf("{\"path\":");
  put_json_string(m->path);
  printf(",\"build_id\":\"");
  for (size_t i = 0; i < m->build_id_len; i++)
    printf("%02x", m->build_id[i]);
  printf("\",\"exec_vaddr\":%llu,\"exec_memsz\":%llu,"
         "\"num_exec_segments\":%d,\"has_debug_info\":%d,\"debug_file\":",
         (unsigned long long)m->exec_vaddr, (unsigned long long)m->exec_memsz,
         m->num_exec_segments, m->has_debug_info);
  put_json_string(msym_module_debug_file(m));
  printf(",\"missing_split\":%zu,\"first_missing_split\":", missing);
  put_json_string(first_missing);
  printf("}\n");
}

static int quiet;
static size_t n_symbolized, n_frames;

static int print_addr(msym_ctx *c, const msym_module *m, const char *text) {
  char *end;
  unsigned long long a = strtoull(text, &end, 16);
  if (*end || end == text) {
    fprintf(stderr, "memprof-symtool: bad address '%s'\n", text);
    return -1;
  }
  const msym_frame *f;
  size_t n;
  mp_err err;
  if (msym_symbolize(c, m, a, &f, &n, &err) != 0) {
    fprintf(stderr, "memprof-symtool: %s\n", err.msg);
    return -1;
  }
  n_symbolized += n != 0;
  n_frames += n;
  if (quiet)
    return 0;
  printf("{\"addr\":\"0x%llx\",\"frames\":[", a);
  for (size_t i = 0; i < n; i++) {
    printf("%s{\"name\":", i ? "," : "");
    put_json_string(f[i].name);
    printf(",\"file\":");
    put_json_string(f[i].file);
    printf(",\"line\":%u,\"column\":%u,\"discriminator\":%u,\"decl_line\":%u}",
           f[i].line, f[i].column, f[i].discriminator, f[i].decl_line);
  }
  printf("]}\n");
  return 0;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void out_of_memory(size_t n) {
  fprintf(stderr, "memprof-symtool: out of memory (allocating %zu bytes)\n", n);
  exit(3);
}

int main(int argc, char **argv) {
  mp_set_oom_handler(out_of_memory);
  msym_ctx *c = msym_new();
  mp_err err;
  int info = 0, timing = 0, i = 1;
  for (; i < argc && argv[i][0] == '-'; i++) {
    if (strcmp(argv[i], "-d") == 0 && i + 1 < argc) {
      if (msym_add_debug_dir(c, argv[++i], &err) != 0) {
        fprintf(stderr, "memprof-symtool: %s\n", err.msg);
        return 1;
      }
    } else if (strcmp(argv[i], "--info") == 0) {
      info = 1;
    } else if (strcmp(argv[i], "--quiet") == 0) {
      quiet = 1;
    } else if (strcmp(argv[i], "--time") == 0) {
      timing = 1;
    } else if (strcmp(argv[i], "--symtab") == 0) {
      msym_set_symtab_fallback(c, 1);
    } else {
      usage();
    }
  }
  if (i >= argc)
    usage();
  if (msym_add_binary(c, argv[i], &err) != 0) {
    fprintf(stderr, "memprof-symtool: %s\n", err.msg);
    msym_free(c);
    return 1;
  }
  const msym_module *m = msym_module_at(c, 0);
  int rc = 0;
  double t0 = now();
  size_t count = 0;
  if (info) {
    print_info(c, m);
  } else if (i + 1 < argc) {
    for (int k = i + 1; k < argc; k++, count++)
      rc |= print_addr(c, m, argv[k]) != 0;
  } else {
    char word[64];
    while (scanf("%63s", word) == 1 && ++count)
      rc |= print_addr(c, m, word) != 0;
  }
  if (quiet)
    printf("%zu addresses, %zu with frames, %zu frames\n", count, n_symbolized,
           n_frames);
  if (timing)
    fprintf(stderr, "%zu addresses, %.3f seconds\n", count, now() - t0);
  msym_free(c);
  return rc;
}
