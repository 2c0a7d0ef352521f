/* yaml_io.h - LLVM's memprof YAML (HeapProfileRecords), read with libyaml
 * and written in the form `llvm-profdata-22 merge` reads back.
 */
#ifndef PROFDATA_YAML_IO_H
#define PROFDATA_YAML_IO_H

#include <stddef.h>

#include "common/error.h"
#include "common/io.h"
#include "profdata/model/model.h"

/* LLVM recognises YAML only when the file begins with "---". */
int mp_is_yaml(const void *data, size_t len);

int mp_read_yaml(mp_profile *p, const void *data, size_t len, mp_err *err);

/* Write `p` as YAML.  With `symbolized`, frames that carry symbol info get a
 * trailing comment "# name file:line:column". */
void mp_write_yaml(const mp_profile *p, int symbolized, mp_buf *out);

#endif
