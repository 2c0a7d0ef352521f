/* rt_text.h - the text profile and the statistics (rt_text.c). */
#ifndef MEMPROF_RT_TEXT_H
#define MEMPROF_RT_TEXT_H

#include "include/internal/memprof_format.h"
#include "runtime/base/rt_sys.h"

/* The text profile in two steps: the MIB part while the table is locked
 * (noting the stack ids it lists), then the stacks once the table is
 * unlocked, since naming frames takes the dynamic loader's lock and a
 * thread inside dlopen may be waiting for the table (to record a free). */
typedef struct rt_text {
  rt_buf b;
  uint32_t *ids; /* mmap'd */
  size_t n, cap;
} rt_text;
/* `note`: what the raw profile's note would say (sampled, not
 * instrumented), or NULL; the text says it in a line of its own before
 * the MIBs, which profiles recorded in full with instrumentation (all
 * LLVM's runtime writes) never have. */
RT_HIDDEN void rt_text_mibs(rt_text *t, int terse, const mpf_raw_note *note); /* table locked */
RT_HIDDEN void rt_text_stacks(rt_text *t);          /* table unlocked */
RT_HIDDEN void rt_text_free(rt_text *t);
RT_HIDDEN void rt_print_stats(void);      /* on stderr, LLVM's lines */
RT_HIDDEN void rt_print_exit_stats(void); /* atexit=1: the same, headed */
/* The process's memory map, LLVM's format, on stderr or the profile's output. */
RT_HIDDEN void rt_print_module_map(int to_stderr);

#endif
