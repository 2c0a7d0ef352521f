/* yaml_scalar.h - the scalar rules of LLVM's YAML I/O (YAMLTraits), so that
 * our YAML reader accepts and rejects exactly the numbers, booleans and
 * GUIDs that `llvm-profdata-22 merge` does, and writes strings as its
 * `show` does.  Private to yaml/ and its tests.
 */
#ifndef PROFDATA_YAML_SCALAR_H
#define PROFDATA_YAML_SCALAR_H

#include <stddef.h>
#include <stdint.h>

#include "common/io.h"

/* Unsigned integer with LLVM's radix sensing: 0x/0X hex, 0b/0B binary, 0o
 * octal, a leading 0 followed by a digit octal, else decimal.  No sign, no
 * spaces, no separators.  0 on success, -1 if invalid or above UINT64_MAX. */
int mp_yaml_uint(const char *s, size_t n, uint64_t *out);

/* YAML 1.1 booleans as LLVM spells them: y/Y/yes/Yes/YES/on/On/ON/true/True/
 * TRUE and their negations n/N/no/No/NO/off/Off/OFF/false/False/FALSE.
 * 0 on success, -1 otherwise. */
int mp_yaml_bool(const char *s, size_t n, int *out);

/* LLVM's GUIDHex64: "0x..." (or "0X...") is a hex GUID, all decimal digits
 * (including the empty string) is rejected, anything else is a function
 * name hashed with mp_guid_of_name.  Returns NULL on success, else the
 * reason. */
const char *mp_yaml_guid(const char *s, size_t n, uint64_t *out);

/* The scalars LLVM treats as an empty sequence: null, Null, NULL, ~. */
int mp_yaml_is_null_word(const char *s, size_t n);

/* How LLVM's YAML output quotes a string scalar (yaml_quote.c): 0 plain,
 * 1 single quotes, 2 double quotes with escapes. */
int mp_yaml_quoting(const char *s, size_t n);
/* The scalar as LLVM writes it, quoted and escaped as needed. */
void mp_yaml_put_string(const char *s, size_t n, mp_buf *out);

#endif
