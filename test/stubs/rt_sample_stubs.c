/* rt_sample_stubs.c - what runtime/record/rt_sample.c uses from the rest of the
 * runtime, so that the sampling draws and weights can be compiled alone
 * into test/unit/runtime/test_rt_sample.c: the options, the thread id, the
 * timeline's switch (off) and the diagnostics (dropped). */
#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_sys.h"

rt_flags_t rt_flags;

int rt_gettid(void) { return 4242; }

void rt_report(const char *fmt, ...) { (void)fmt; }
