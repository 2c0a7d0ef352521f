/* test_md5.c - MD5 against RFC 1321's test suite (appendix A.5) and the
 * GUIDs LLVM computes (verified against llvm-profdata-22). */
#include <stdio.h>
#include <string.h>

#include "common/guid.h"
#include "common/md5.h"
#include "profdata/model/model.h"
#include "test/unit/check.h"

static void check_md5(const char *in, const char *hex) {
  unsigned char d[16];
  char got[33];
  mp_md5_digest(in, strlen(in), d);
  for (int i = 0; i < 16; i++) sprintf(got + 2 * i, "%02x", d[i]);
  CHECK(strcmp(got, hex) == 0, "md5(\"%s\") = %s, want %s", in, got, hex);
}

/* Feeding the input in uneven pieces must give the same digest. */
static void check_incremental(const char *in) {
  unsigned char a[16], b[16];
  mp_md5_digest(in, strlen(in), a);
  mp_md5 m;
  mp_md5_init(&m);
  size_t n = strlen(in), step = 1;
  for (size_t i = 0; i < n; i += step, step = step * 2 + 1)
    mp_md5_update(&m, in + i, step < n - i ? step : n - i);
  mp_md5_final(&m, b);
  CHECK(memcmp(a, b, 16) == 0, "incremental md5 of \"%s\"", in);
}

static void check_guid(const char *name, unsigned long long want) {
  unsigned long long got = mp_guid_of_name(name, strlen(name));
  CHECK(got == want, "guid(%s) = %#llx, want %#llx", name, got, want);
}

static void check_same_guid(const char *a, const char *b) {
  check_guid(a, mp_guid_of_name(b, strlen(b)));
}

/* GUID of `canon` hashed as is, without canonicalization. */
static unsigned long long raw_guid(const char *canon) {
  unsigned char d[16];
  unsigned long long g = 0;
  mp_md5_digest(canon, strlen(canon), d);
  for (int i = 7; i >= 0; i--) g = g << 8 | d[i];
  return g;
}

static void check_different_guid(const char *a, const char *b) {
  CHECK(mp_guid_of_name(a, strlen(a)) != mp_guid_of_name(b, strlen(b)),
        "guid(%s) == guid(%s)", a, b);
}

int main(void) {
  check_md5("", "d41d8cd98f00b204e9800998ecf8427e");
  check_md5("a", "0cc175b9c0f1b6a831c399e269772661");
  check_md5("abc", "900150983cd24fb0d6963f7d28e17f72");
  check_md5("message digest", "f96b697d7cb7938d525a2f31aaf161d0");
  check_md5("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b");
  check_md5("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
            "d174ab98d277d9f5a5611c2c9f419d9f");
  check_md5("1234567890123456789012345678901234567890123456789012345678901234"
            "5678901234567890",
            "57edf4a22be3c955ac49da2e2107b67a");
  check_incremental("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                    "1234567890123456789012345678901234567890123456789012345678");

  check_guid("main", 15822663052811949562ULL);
  check_guid("_ZL12alloc_staticm", 0x3070946744ff26acULL);
  check_same_guid("foo.llvm.123", "foo");
  check_same_guid("foo.part.1", "foo");
  check_same_guid("foo.part.2.llvm.1", "foo");
  check_guid("foo.llvm.1.part.2", raw_guid("foo.llvm.1"));
  check_guid("foo.__uniq.77", raw_guid("foo.__uniq.77"));
  check_guid("foo", raw_guid("foo"));
  check_different_guid("foo.__uniq.77", "foo");
  check_different_guid("foo.cold", "foo");
  check_different_guid("foo.llvm.1.x", "foo");

  /* the canonical part and the plain MD5 (guid.h) */
  static const struct {
    const char *name;
    size_t canon;
  } canon[] = {{"foo", 3},           {"foo.llvm.123", 3},
               {"foo.part.1", 3},    {"foo.part.2.llvm.1", 3},
               {"foo.llvm.1.part.2", 10}, {"foo.llvm.1.x", 12},
               {"foo.__uniq.77", 13}, {".llvm.", 0},
               {"", 0}};
  for (size_t i = 0; i < sizeof canon / sizeof *canon; i++)
    CHECK(mp_guid_canon_len(canon[i].name, strlen(canon[i].name)) ==
              canon[i].canon,
          "canonical length of \"%s\"", canon[i].name);
  CHECK_EQ(mp_md5_low("main", 4), 15822663052811949562ULL);
  CHECK_EQ(mp_md5_low("foo.llvm.1", 10), raw_guid("foo.llvm.1"));

  return check_result();
}
