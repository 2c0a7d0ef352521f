/* test_blake3.c - BLAKE3 (common/blake3.c) against the published test
 * vectors and the ids llvm-profdata-22 derives with it.  blake3.h gives the
 * first 8 bytes of the digest as a little-endian u64. */
#include <stdint.h>
#include <string.h>

#include "common/blake3.h"
#include "test/unit/check.h"

/* The "hash" (unkeyed) field of every case of test_vectors/test_vectors.json
 * in the BLAKE3 repository (github.com/BLAKE3-team/BLAKE3): the first 8
 * bytes of the digest, in hex as the file spells them.  Input byte i of
 * each case is i % 251. */
static const struct {
  size_t len;
  const char *hash;
} vectors[] = {
    {0, "af1349b9f5f9a1a6"},      {1, "2d3adedff11b61f1"},
    {1023, "10108970eeda3eb9"},   {1024, "42214739f095a406"},
    {1025, "d00278ae47eb27b3"},   {2048, "e776b6028c7cd22a"},
    {2049, "5f4d72f40d7a5f82"},   {3072, "b98cb0ff3623be03"},
    {3073, "7124b49501012f81"},   {4096, "015094013f57a527"},
    {4097, "9b4052b38f1c5fc8"},   {5120, "9cadc15fed8b5d85"},
    {5121, "628bd2cb2004694a"},   {6144, "3e2e5b74e048f3ad"},
    {6145, "f1323a8631446cc5"},   {7168, "61da957ec2499a95"},
    {7169, "a003fc7a51754a9b"},   {8192, "aae792484c8efe4f"},
    {8193, "bab6c09cb8ce8cf4"},   {16384, "f875d6646de28985"},
    {31744, "62b6960e1a44bcc1"},  {102400, "bc3e3d41a1146b06"},
};

/* The u64 blake3.h returns for these 8 digest bytes (little-endian). */
static uint64_t le_of_hex(const char *hex) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) {
    unsigned byte = 0;
    for (int k = 0; k < 2; k++) {
      char c = hex[2 * i + k];
      byte = byte * 16 + (unsigned)(c <= '9' ? c - '0' : c - 'a' + 10);
    }
    v = v << 8 | byte;
  }
  return v;
}

static unsigned char input[102400], shifted[102400 + 1];

int main(void) {
  for (size_t i = 0; i < sizeof input; i++) input[i] = (unsigned char)(i % 251);
  for (size_t i = 0; i < sizeof vectors / sizeof *vectors; i++) {
    uint64_t want = le_of_hex(vectors[i].hash);
    uint64_t got = mp_blake3_u64(input, vectors[i].len);
    CHECK(got == want, "blake3 of %zu bytes: %016llx, want %016llx (%s)",
          vectors[i].len, (unsigned long long)got, (unsigned long long)want,
          vectors[i].hash);
    /* the same bytes at an odd address */
    memcpy(shifted + 1, input, vectors[i].len);
    CHECK(mp_blake3_u64(shifted + 1, vectors[i].len) == want,
          "blake3 of %zu bytes at an odd address", vectors[i].len);
  }

  /* FrameId and CallStackId of a file llvm-profdata-22 wrote: a frame's
   * 17 bytes (GUID, line offset, column, inline flag) and a stack of two
   * FrameIds. */
  unsigned char frame[17] = {0x52, 0x15, 0x23, 0xc8, 0x44, 0x16, 0x14, 0x41,
                             0, 0, 0, 0, 53, 0, 0, 0, 1};
  CHECK_EQ(mp_blake3_u64(frame, 17), 0xaaad5c248e7696a7ULL);
  uint64_t ids[2] = {0xaaad5c248e7696a7ULL, 0xbe65ef00ffd80277ULL};
  CHECK_EQ(mp_blake3_u64(ids, 16), 0x386c02837ab2ea66ULL);
  return check_result();
}
