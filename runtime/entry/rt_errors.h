/* rt_errors.h - allocation failures reported as LLVM's runtime reports
 * them (rt_errors.c). */
#ifndef MEMPROF_RT_ERRORS_H
#define MEMPROF_RT_ERRORS_H

#include "runtime/base/rt_internal.h"

/* Fatal allocation errors (rt_errors.c): a report on stderr as LLVM's
 * runtime prints it (kind: its SUMMARY name; hint: suggest
 * allocator_may_return_null=1), the profile written, exit status 1. */
RT_HIDDEN __attribute__((noreturn, format(printf, 4, 5))) void
rt_die_alloc(rt_caller c, const char *kind, int hint, const char *fmt, ...);
/* An entry point whose rt_alloc failed: returns if the program accepts
 * NULL (allocator_may_return_null=1), else reports a size over
 * RT_MAX_ALLOC_SIZE or running out of memory and exits. */
RT_HIDDEN void rt_alloc_failed(size_t n, rt_caller c);
RT_HIDDEN int rt_may_return_null(void);

#endif
