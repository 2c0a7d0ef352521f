/* fuzz_instrprof.c - libFuzzer target for the instrumentation profile
 * readers: raw files of clang's PGO runtimes (mp_read_instr_raw: header,
 * binary ids, zlib or plain name table, counters, bitmaps, value data) and
 * indexed files with a function table (mp_read_indexed_input), read with a
 * weight so that scaling is exercised too.  Merge warnings are dropped.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "profdata/instrprof/instrprof.h"

static void quiet(const char *msg) { (void)msg; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mp_instr_set_warn_handler(quiet);
  uint8_t *copy = malloc(size ? size : 1);
  memcpy(copy, data, size);
  mp_profile *p = mp_profile_new();
  mp_err e = {{0}};
  int rc = mp_is_instr_raw(copy, size)
               ? mp_read_instr_raw(mp_profile_instr(p), "fuzz", copy, size,
                                   3, &e)
               : mp_read_indexed_input(p, copy, size, "fuzz", 2, &e);
  fuzz_check_read(p, rc, &e);
  free(copy);
  return 0;
}
