/* fuzz_yaml.c - libFuzzer target for the memprof YAML reader
 * (mp_read_yaml). */
#include <stdint.h>

#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mp_profile *p = mp_profile_new();
  mp_err e = {{0}};
  fuzz_check_read(p, mp_read_yaml(p, data, size, &e), &e);
  return 0;
}
