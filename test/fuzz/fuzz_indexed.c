/* fuzz_indexed.c - libFuzzer target for the indexed profile reader
 * (mp_read_indexed: LLVM's header, memprof sections v2-v4, radix tree,
 * our symbolized section). */
#include <stdint.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mp_profile *p = mp_profile_new();
  mp_err e = {{0}};
  if (mp_read_indexed(p, data, size, &e) == 0)
    fuzz_roundtrip(p);
  else
    fuzz_check_refusal(&e);
  mp_profile_free(p);
  return 0;
}
