/* rt_output.h - where profiles go (rt_output.c): the file or stream,
 * the exit-status check. */
#ifndef MEMPROF_RT_OUTPUT_H
#define MEMPROF_RT_OUTPUT_H

#include "runtime/base/rt_internal.h"

RT_HIDDEN void rt_output_init(void);
RT_HIDDEN int rt_output_write(const void *buf, size_t n);
RT_HIDDEN void rt_output_reset(void);
RT_HIDDEN const char *rt_output_path(void);
/* When profiles go to a file: its path into path[cap] and its size now;
 * 0 (nothing written) when they go to a stream or no file is open. */
RT_HIDDEN int rt_output_file(char *path, size_t cap, uint64_t *size);
RT_HIDDEN void rt_output_install_exit(void);
RT_HIDDEN void rt_output_exit_check(void);
RT_HIDDEN void rt_output_fork_child(void);
RT_HIDDEN void rt_output_fork_prepare(void);
RT_HIDDEN void rt_output_fork_parent(void);
/* Set once the exit dump ran (or a fatal error or signal wrote it). */
RT_HIDDEN extern int rt_exit_dumped;

#endif
