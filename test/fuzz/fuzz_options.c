/* fuzz_options.c - libFuzzer target for the runtime's option parser
 * (runtime/base/rt_flags.c, compiled in unchanged).
 *
 * rt_flags.c has no pure parse entry point, so the input is handed to
 * rt_flags_init() as the program's __memprof_default_options() string, with
 * MEMPROF_OPTIONS unset.  The runtime's syscall and report helpers are
 * stubbed (test/stubs/rt_flags_stubs.c): warnings are counted, not printed.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_flags_stubs.h"

static rt_flags_t defaults;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  unsetenv("MEMPROF_OPTIONS");
  defaults = rt_flags;
  return 0;
}

static void check(int ok, const char *what) {
  if (!ok) {
    fprintf(stderr, "fuzz invariant broken: %s\n", what);
    abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *opts = malloc(size + 1);
  memcpy(opts, data, size);
  opts[size] = 0;
  rt_stub_default_options = opts;
  rt_flags = defaults;
  rt_flags.help = 0;
  rt_flags_init();
  check(rt_flags.raw_version >= 3 && rt_flags.raw_version <= 5,
        "raw_version outside 3..5 after init");
  check(!rt_flags.log_path || strlen(rt_flags.log_path) < 4096,
        "log_path longer than its buffer");
  check(!rt_flags.log_suffix || strlen(rt_flags.log_suffix) < 256,
        "log_suffix longer than its buffer");
  /* Values are copied: the option string may go away after init. */
  check(!rt_flags.log_path ||
            !(rt_flags.log_path >= opts && rt_flags.log_path <= opts + size),
        "log_path points into the option string");
  free(opts);
  rt_stub_default_options = NULL;
  return 0;
}
