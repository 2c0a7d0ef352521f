/* guid.c - LLVM's function GUIDs (guid.h): the first 8 bytes of the MD5
 * of a function's canonical name, and that MD5 alone (LLVM's MD5Hash). */
#include "guid.h"

#include <string.h>

#include "md5.h"

/* LLVM strips a suffix only when it is the last dotted component, i.e. no
 * '.' follows the suffix's digits-or-whatever tail. */
static size_t strip_suffix(const char *name, size_t len, const char *suffix) {
  size_t sl = strlen(suffix);
  if (len < sl) return len;
  for (size_t i = len - sl + 1; i-- > 0;) {
    if (memcmp(name + i, suffix, sl) != 0) continue;
    /* the match must contain the last '.' of the string */
    const char *dot = memchr(name + i + sl, '.', len - i - sl);
    return dot ? len : i;
  }
  return len;
}

size_t mp_guid_canon_len(const char *name, size_t len) {
  len = strip_suffix(name, len, ".llvm.");
  return strip_suffix(name, len, ".part.");
}

uint64_t mp_md5_low(const void *data, size_t len) {
  unsigned char d[16];
  mp_md5_digest(data, len, d);
  uint64_t g = 0;
  for (int i = 7; i >= 0; i--) g = g << 8 | d[i];
  return g;
}

uint64_t mp_guid_of_name(const char *name, size_t len) {
  return mp_md5_low(name, mp_guid_canon_len(name, len));
}
