/* varfile.h - reading our own varint files (the .timeline and .roots
 * files beside a raw profile): a cursor over the file's bytes whose
 * errors name the file, its kind and the offset of what was wrong.
 *
 * Errors: functions return 0 on success and -1 with the message in the
 * reader's mp_err (common/error.h). */
#ifndef MEMPROF_COMMON_VARFILE_H
#define MEMPROF_COMMON_VARFILE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

typedef struct mp_varfile {
  const char *name;   /* the file, as messages name it */
  const char *kind;   /* "timeline", "roots file" */
  const uint8_t *p;
  size_t len, at;     /* at: offset of the next byte */
  mp_err *err;
} mp_varfile;

/* "NAME: KIND at offset 0xAT: <message>". */
int mp_varfile_fail(mp_varfile *r, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* One LEB128 varint into *v; `what` names the field in messages. */
int mp_varfile_uv(mp_varfile *r, const char *what, uint64_t *v);
/* *sum += v, refused when it overflows; `what` names the sum. */
int mp_varfile_add(mp_varfile *r, size_t at, const char *what, uint64_t *sum,
                   uint64_t v);

#endif
