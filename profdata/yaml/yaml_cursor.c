/* yaml_cursor.c - the YAML reader's cursor over libyaml's events: errors
 * with their position, entering sequences and mappings as LLVM's reader
 * accepts them (null = empty), keys checked against a list, and scalars
 * read as GUIDs, numbers and booleans by LLVM's rules (yaml_scalar.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "yaml_read_priv.h"
#include "yaml_scalar.h"

int yr_fail_at(yreader *r, yaml_mark_t m, const char *fmt, ...) {
  char what[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return mp_fail(r->err, "%zu:%zu: %s", m.line + 1, m.column + 1, what);
}

int yr_parser_error(yreader *r) {
  yaml_parser_t *ps = &r->parser;
  const char *problem = ps->problem ? ps->problem : "malformed YAML";
  if (ps->context)
    return yr_fail_at(r, ps->problem_mark, "%s (%s at %zu:%zu)", problem,
                   ps->context, ps->context_mark.line + 1,
                   ps->context_mark.column + 1);
  return yr_fail_at(r, ps->problem_mark, "%s", problem);
}

int yr_next(yreader *r) {
  if (r->has_ev) yaml_event_delete(&r->ev);
  r->has_ev = 0;
  if (!yaml_parser_parse(&r->parser, &r->ev)) return yr_parser_error(r);
  r->has_ev = 1;
  if (r->ev.type == YAML_ALIAS_EVENT)
    return yr_fail_at(r, r->ev.start_mark, "YAML aliases (*%s) are not supported",
                   (const char *)r->ev.data.alias.anchor);
  return 0;
}

yaml_mark_t yr_here(const yreader *r) { return r->ev.start_mark; }

const char *yr_scalar_text(const yreader *r) {
  return (const char *)r->ev.data.scalar.value;
}
size_t yr_scalar_len(const yreader *r) { return r->ev.data.scalar.length; }

/* An empty plain scalar: what "Key:" with no value parses to. */
int yr_is_empty_node(const yreader *r) {
  return r->ev.type == YAML_SCALAR_EVENT && yr_scalar_len(r) == 0 &&
         r->ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
}

const char *yr_kind_name(const yreader *r) {
  switch (r->ev.type) {
  case YAML_SCALAR_EVENT: return yr_is_empty_node(r) ? "nothing" : "a scalar";
  case YAML_SEQUENCE_START_EVENT: return "a sequence";
  case YAML_MAPPING_START_EVENT: return "a mapping";
  default: return "something else";
  }
}

/* Enter a sequence.  *empty is set when the value is null, which LLVM reads
 * as an empty sequence. */
int yr_begin_seq(yreader *r, const char *what, int *empty) {
  *empty = 0;
  if (r->ev.type == YAML_SEQUENCE_START_EVENT) return yr_next(r);
  if (r->ev.type == YAML_SCALAR_EVENT &&
      (yr_is_empty_node(r) || mp_yaml_is_null_word(yr_scalar_text(r), yr_scalar_len(r)))) {
    *empty = 1;
    return yr_next(r);
  }
  return yr_fail_at(r, yr_here(r), "%s must be a sequence, found %s", what,
                 yr_kind_name(r));
}

/* Enter a mapping.  With allow_empty, a missing value counts as an empty
 * mapping (only where LLVM requires no key inside). */
int yr_begin_map(yreader *r, const char *what, int allow_empty,
                     int *empty) {
  *empty = 0;
  if (r->ev.type == YAML_MAPPING_START_EVENT) return yr_next(r);
  if (allow_empty && yr_is_empty_node(r)) {
    *empty = 1;
    return yr_next(r);
  }
  return yr_fail_at(r, yr_here(r), "%s must be a mapping, found %s", what,
                 yr_kind_name(r));
}

/* Read one key of a mapping whose keys are `names`: *idx gets its index.
 * Unknown and repeated keys are errors.  Consumes the key. */
int yr_map_key(yreader *r, const char *what, const char *const *names,
                   size_t n_names, uint64_t *seen, size_t *idx) {
  if (r->ev.type != YAML_SCALAR_EVENT)
    return yr_fail_at(r, yr_here(r), "keys of %s must be scalars, found %s", what,
                   yr_kind_name(r));
  for (size_t i = 0; i < n_names; i++) {
    if (strlen(names[i]) != yr_scalar_len(r) ||
        memcmp(names[i], yr_scalar_text(r), yr_scalar_len(r)) != 0)
      continue;
    if (*seen >> i & 1)
      return yr_fail_at(r, yr_here(r), "duplicated key '%s' in %s", names[i], what);
    *seen |= 1ull << i;
    *idx = i;
    return yr_next(r);
  }
  return yr_fail_at(r, yr_here(r), "unknown key '%.64s' in %s", yr_scalar_text(r), what);
}

/* Check that every key in `names` selected by `required` was seen. */
int yr_check_required(yreader *r, yaml_mark_t m, const char *what,
                          const char *const *names, uint64_t required,
                          uint64_t seen) {
  for (size_t i = 0; i < 64; i++)
    if ((required & ~seen) >> i & 1)
      return yr_fail_at(r, m, "%s has no '%s'", what, names[i]);
  return 0;
}

int yr_expect_scalar(yreader *r, const char *what) {
  if (r->ev.type == YAML_SCALAR_EVENT) return 0;
  return yr_fail_at(r, yr_here(r), "%s must be a scalar, found %s", what,
                 yr_kind_name(r));
}

int yr_read_guid(yreader *r, const char *what, uint64_t *out) {
  if (yr_expect_scalar(r, what)) return -1;
  const char *why = mp_yaml_guid(yr_scalar_text(r), yr_scalar_len(r), out);
  if (why)
    return yr_fail_at(r, yr_here(r), "%s '%.64s': %s", what, yr_scalar_text(r), why);
  return yr_next(r);
}

int yr_read_uint(yreader *r, const char *what, uint64_t max,
                     uint64_t *out) {
  if (yr_expect_scalar(r, what)) return -1;
  if (mp_yaml_uint(yr_scalar_text(r), yr_scalar_len(r), out) != 0)
    return yr_fail_at(r, yr_here(r), "%s '%.64s' is not a valid unsigned number",
                   what, yr_scalar_text(r));
  if (*out > max)
    return yr_fail_at(r, yr_here(r), "%s %s is out of range (max %llu)", what,
                   yr_scalar_text(r), (unsigned long long)max);
  return yr_next(r);
}

int yr_read_bool(yreader *r, const char *what, int *out) {
  if (yr_expect_scalar(r, what)) return -1;
  if (mp_yaml_bool(yr_scalar_text(r), yr_scalar_len(r), out) != 0)
    return yr_fail_at(r, yr_here(r), "%s '%.64s' is not a boolean (true/false)",
                   what, yr_scalar_text(r));
  return yr_next(r);
}

int yr_read_site_list(yreader *r, const char *what,
                          int (*read_one)(yreader *)) {
  int empty;
  if (yr_begin_seq(r, what, &empty)) return -1;
  if (empty) return 0;
  while (r->ev.type != YAML_SEQUENCE_END_EVENT)
    if (read_one(r)) return -1;
  return yr_next(r);
}

