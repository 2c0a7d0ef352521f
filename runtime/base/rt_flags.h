/* rt_flags.h - the runtime's options (rt_flags.c; the list is
 * rt_flags.inc, documented in docs/runtime-options.md). */
#ifndef MEMPROF_RT_FLAGS_H
#define MEMPROF_RT_FLAGS_H

#include "rt_internal.h"

#define RT_FLAG_TYPE_BOOL int
#define RT_FLAG_TYPE_INT int
#define RT_FLAG_TYPE_STR const char * /* NULL = unset */
typedef struct rt_flags_t {
#define RT_FLAG(kind, name, def, desc) RT_FLAG_TYPE_##kind name;
#include "rt_flags.inc"
#undef RT_FLAG
} rt_flags_t;
RT_HIDDEN extern rt_flags_t rt_flags;
RT_HIDDEN void rt_flags_init(void);
RT_HIDDEN void rt_flags_set_log_path(const char *path);

#endif
