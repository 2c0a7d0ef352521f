/* rt_llvmsym.h - an llvm-symbolizer process (rt_llvmsym.c). */
#ifndef MEMPROF_RT_LLVMSYM_H
#define MEMPROF_RT_LLVMSYM_H

#include "runtime/base/rt_sys.h"

/* An llvm-symbolizer process (rt_llvmsym.c): start (0 if there is none to
 * run), queue up to 64 queries, read their answers (each ends with an empty
 * line; 0 if the process failed, which then stops it), free. */
typedef struct rt_llvmsym {
  int fd, pid;
  size_t pending;
  rt_buf out;
} rt_llvmsym;
RT_HIDDEN int rt_llvmsym_start(rt_llvmsym *s);
RT_HIDDEN void rt_llvmsym_query(rt_llvmsym *s, const char *module, uintptr_t offset);
RT_HIDDEN int rt_llvmsym_answers(rt_llvmsym *s, rt_buf *in);
RT_HIDDEN void rt_llvmsym_stop(rt_llvmsym *s);
RT_HIDDEN void rt_llvmsym_free(rt_llvmsym *s);

#endif
