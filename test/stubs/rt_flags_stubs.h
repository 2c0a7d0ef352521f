/* rt_flags_stubs.h - the stubs runtime/base/rt_flags.c is linked with in tests
 * (rt_flags_stubs.c). */
#ifndef TEST_RT_FLAGS_STUBS_H
#define TEST_RT_FLAGS_STUBS_H

#include <stddef.h>

#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_libc.h"
#include "runtime/base/rt_state.h"
#include "runtime/base/rt_sys.h"

extern const char *rt_stub_default_options; /* __memprof_default_options() */
extern size_t rt_stub_reports;              /* rt_report calls so far */
extern char rt_stub_last_report[512];

#endif
