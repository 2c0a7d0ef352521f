/* fuzz_indexed.c - libFuzzer target for the indexed profile reader
 * (mp_read_indexed: LLVM's header, memprof sections v2-v4, radix tree,
 * our symbolized section).
 *
 * Our symbolized section is guarded by a crc32, which random mutations
 * almost never satisfy; so when the input ends with the section's trailer
 * and the trailer's last (padding) byte is 0, the crc is recomputed first,
 * letting the fuzzer reach the section's parser.  Inputs with a non-zero
 * padding byte keep their crc and exercise the check itself.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz_common.h"
#include "profdata/indexed/symsec.h"

static uint64_t rd64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

static void fix_symsec_crc(uint8_t *d, size_t len) {
  if (!mp_symsec_present(d, len) || d[len - 1] != 0) return;
  uint8_t *t = d + len - MP_SYMSEC_TRAILER_SIZE;
  uint64_t base = rd64(t + 16), size = rd64(t + 24);
  uint64_t tpos = len - MP_SYMSEC_TRAILER_SIZE;
  if (base > tpos || size != tpos - base) return;
  uint32_t crc = (uint32_t)crc32_z(0, d + base, (z_size_t)size);
  memcpy(t + 32, &crc, 4);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *copy = malloc(size ? size : 1);
  memcpy(copy, data, size);
  fix_symsec_crc(copy, size);
  mp_profile *p = mp_profile_new();
  mp_err e = {{0}};
  fuzz_check_read(p, mp_read_indexed(p, copy, size, &e), &e);
  free(copy);
  return 0;
}
