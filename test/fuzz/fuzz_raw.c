/* fuzz_raw.c - libFuzzer target for the raw profile reader (mp_read_raw).
 *
 * PCs are symbolized against the small real binaries the seed corpus was
 * recorded from (MEMPROF_FUZZ_BINARY, a ':'-separated list; default set by
 * CMake), so the symbolizer and record building are fuzzed too, not only
 * validation.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "profdata/raw/raw.h"
#include "symbolizer/symbolizer.h"

#ifndef MEMPROF_FUZZ_DEFAULT_BINARY
#define MEMPROF_FUZZ_DEFAULT_BINARY ""
#endif

static msym_ctx *sym;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  sym = msym_new();
  const char *bin = getenv("MEMPROF_FUZZ_BINARY");
  if (!bin) bin = MEMPROF_FUZZ_DEFAULT_BINARY;
  char *list = strdup(bin), *save = NULL;
  for (char *b = strtok_r(list, ":", &save); b; b = strtok_r(NULL, ":", &save)) {
    mp_err e;
    if (msym_add_binary(sym, b, &e) != 0)
      fprintf(stderr, "fuzz_raw: %s: %s (PCs of its segments stay unsymbolized)\n",
              b, e.msg);
  }
  free(list);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mp_profile *p = mp_profile_new();
  mp_err e = {{0}};
  fuzz_check_read(p, mp_read_raw(p, "fuzz-input", data, size, sym, &e), &e);
  return 0;
}
