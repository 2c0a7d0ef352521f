/* test_symbolizer.c - the symbolizer's C API contract: module lookup by
 * build id, the per-(module, vaddr) memo (same pointers on a repeat),
 * frames of a known function, n == 0 outside DWARF, and the error paths.
 * Frame-by-frame equality with LLVM is in test/symbolizer/.
 *
 * Builds a small program with clang-22 -g into a temporary folder and
 * takes function addresses from `nm`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolizer/symbolizer.h"
#include "test/unit/check.h"

static const char PROGRAM[] =
    "static inline __attribute__((always_inline)) int sq(int x) {\n" /* 1 */
    "  return x * x;\n"                                              /* 2 */
    "}\n"                                                            /* 3 */
    "__attribute__((noinline)) int target(int x) {\n"                /* 4 */
    "  return sq(x) + 1;\n"                                          /* 5 */
    "}\n"                                                            /* 6 */
    "int main(int argc, char **argv) {\n"                            /* 7 */
    "  (void)argv;\n"                                                /* 8 */
    "  return target(argc);\n"                                       /* 9 */
    "}\n";

static unsigned long long nm_address(const char *exe, const char *sym) {
  char cmd[1024], line[512];
  snprintf(cmd, sizeof cmd, "nm %s", exe);
  FILE *p = popen(cmd, "r");
  unsigned long long addr = 0, a;
  char type, name[256];
  while (p && fgets(line, sizeof line, p))
    if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 &&
        strcmp(name, sym) == 0)
      addr = a;
  if (p)
    pclose(p);
  return addr;
}

static int build(const char *dir, char *exe, size_t cap) {
  char src[512], cmd[2048];
  snprintf(src, sizeof src, "%s/t.c", dir);
  snprintf(exe, cap, "%s/t", dir);
  FILE *f = fopen(src, "w");
  if (!f)
    return -1;
  fputs(PROGRAM, f);
  fclose(f);
  snprintf(cmd, sizeof cmd, "clang-22 -O0 -g %s -o %s", src, exe);
  return system(cmd) == 0 ? 0 : -1;
}

static void test_frames(msym_ctx *c, const msym_module *m, const char *exe) {
  unsigned long long target = nm_address(exe, "target");
  CHECK(target != 0);
  const msym_frame *f, *again;
  size_t n, n2;
  mp_err err;
  /* The address after the prologue's first instruction is on line 4. */
  CHECK(msym_symbolize(c, m, target + 1, &f, &n, &err) == 0);
  CHECK(n == 1);
  if (n == 1) {
    CHECK(strcmp(f[0].name, "target") == 0);
    CHECK(f[0].line == 4);
    CHECK(f[0].decl_line == 4);
    CHECK(f[0].file && strstr(f[0].file, "/t.c"));
  }
  CHECK(msym_symbolize(c, m, target + 1, &again, &n2, &err) == 0);
  CHECK(again == f && n2 == n); /* memoized: the very same frames */
  /* Address 0 is below every function: no frames, not an error. */
  CHECK(msym_symbolize(c, m, 0, &f, &n, &err) == 0 && n == 0);
}

static void test_modules(msym_ctx *c, const char *exe) {
  mp_err err;
  CHECK(msym_add_binary(c, exe, &err) == 0);
  CHECK(msym_num_modules(c) == 1);
  const msym_module *m = msym_module_at(c, 0);
  CHECK(m && m->has_debug_info && m->build_id_len == 20);
  CHECK(m && m->num_exec_segments == 1 && m->exec_memsz > 0);
  CHECK(msym_find_build_id(c, m->build_id, m->build_id_len) == m);
  uint8_t other[20] = {0};
  CHECK(msym_find_build_id(c, other, sizeof other) == NULL);
  CHECK(strcmp(msym_module_debug_file(m), exe) == 0);
  test_frames(c, m, exe);
}

static void test_errors(const char *dir, const msym_module *foreign) {
  msym_ctx *c = msym_new();
  mp_err err;
  char path[600];
  snprintf(path, sizeof path, "%s/missing", dir);
  CHECK(msym_add_binary(c, path, &err) == -1);
  CHECK(strstr(err.msg, "missing: no such file") != NULL);
  snprintf(path, sizeof path, "%s/t.c", dir);
  CHECK(msym_add_binary(c, path, &err) == -1);
  CHECK(strstr(err.msg, "not an ELF file") != NULL);
  CHECK(msym_add_debug_dir(c, "", &err) == -1);
  const msym_frame *f;
  size_t n;
  CHECK(msym_symbolize(c, foreign, 0x1000, &f, &n, &err) == -1);
  CHECK(msym_num_modules(c) == 0);
  msym_free(c);
}

int main(void) {
  char dir[] = "/tmp/memprof-symunit-XXXXXX", exe[600];
  if (!mkdtemp(dir) || build(dir, exe, sizeof exe) != 0) {
    CHECK(0, "cannot build the test program with clang-22");
    return check_result();
  }
  msym_ctx *c = msym_new();
  test_modules(c, exe);
  test_errors(dir, msym_module_at(c, 0));
  msym_free(c);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0)
    fprintf(stderr, "could not remove %s\n", dir);
  return check_result();
}
