/* test_rt_flags.c - the runtime's option parser (runtime/base/rt_flags.c,
 * compiled in unchanged with test/stubs/rt_flags_stubs.c): defaults from
 * rt_flags.inc, the program's default options then MEMPROF_OPTIONS (later
 * wins), separators, booleans, integers, refused values and the
 * warnings they give. */
#include <stdlib.h>
#include <string.h>

#include "test/unit/check.h"
#include "rt_flags_stubs.h"

static rt_flags_t defaults;

/* rt_flags_init over fresh defaults; returns the warnings it gave. */
static size_t init(const char *program_default, const char *env) {
  rt_flags = defaults;
  rt_stub_default_options = program_default;
  if (env)
    setenv("MEMPROF_OPTIONS", env, 1);
  else
    unsetenv("MEMPROF_OPTIONS");
  size_t before = rt_stub_reports;
  rt_flags_init();
  return rt_stub_reports - before;
}

static void test_defaults(void) {
  CHECK(init(NULL, NULL) == 0, "defaults give warnings");
  CHECK(rt_flags.background_thread == 0, "a thread by default");
  CHECK(rt_flags.malloc_context_size == 30, "malloc_context_size %d", rt_flags.malloc_context_size);
  CHECK(rt_flags.raw_version == 5, "raw_version %d", rt_flags.raw_version);
  CHECK(rt_flags.dump_at_exit == 1 && rt_flags.populate_heap == 1, "on-by-default flags");
  CHECK(rt_flags.log_path == NULL && rt_flags.log_suffix == NULL, "strings unset");
}

static void test_values_and_separators(void) {
  size_t w = init(NULL, "log_path=/tmp/x:raw_version=4 exact_clock=true,"
                        "malloc_context_size=5\tprint_text=yes\nbackground_thread=1");
  CHECK(w == 0, "%zu warnings: %s", w, rt_stub_last_report);
  CHECK(rt_flags.log_path && strcmp(rt_flags.log_path, "/tmp/x") == 0, "log_path");
  CHECK(rt_flags.raw_version == 4, "raw_version %d", rt_flags.raw_version);
  CHECK(rt_flags.exact_clock == 1 && rt_flags.print_text == 1, "booleans");
  CHECK(rt_flags.malloc_context_size == 5, "malloc_context_size");
  CHECK(rt_flags.background_thread == 1, "background_thread");
  init(NULL, "print_text=1:print_text=false:exact_clock=no");
  CHECK(rt_flags.print_text == 0 && rt_flags.exact_clock == 0, "later value wins, false/no");
}

static void test_environment_after_program(void) {
  init("raw_version=3:atexit=1", "raw_version=4");
  CHECK(rt_flags.raw_version == 4, "MEMPROF_OPTIONS wins: %d", rt_flags.raw_version);
  CHECK(rt_flags.atexit == 1, "the program's default stays");
  init("raw_version=3", NULL);
  CHECK(rt_flags.raw_version == 3, "program default alone: %d", rt_flags.raw_version);
}

static void test_refused_values(void) {
  CHECK(init(NULL, "raw_version=9") == 1, "unsupported raw_version warns");
  CHECK(rt_flags.raw_version == 5, "raw_version falls back to 5: %d", rt_flags.raw_version);
  CHECK(init(NULL, "malloc_context_size=2147483648") == 1, "past INT_MAX warns");
  CHECK(rt_flags.malloc_context_size == 30, "refused int keeps its value");
  CHECK(init(NULL, "malloc_context_size=12x") == 1, "junk int warns");
  CHECK(init(NULL, "print_text=maybe") == 1, "bad boolean warns");
  CHECK(rt_flags.print_text == 0, "bad boolean keeps its value");
  CHECK(init(NULL, "no_such_option=1") == 1, "unknown option warns");
  CHECK(strstr(rt_stub_last_report, "no_such_option") != NULL, "names it: %s",
        rt_stub_last_report);
  CHECK(init(NULL, "unwind_tables=-1") == 0 && rt_flags.unwind_tables == -1,
        "negative ints parse");
  CHECK(init(NULL, "print_text=maybe") == 1 &&
            strstr(rt_stub_last_report, "'maybe'") &&
            strstr(rt_stub_last_report, "'print_text'"),
        "a bad value is echoed with its option: %s", rt_stub_last_report);
}

/* Integers outside their flag's RT_RANGE: refused, the option keeping its
 * value, with a warning naming the option, the value and the range. */
static void test_ranges(void) {
  static const struct {
    const char *env, *warning;
  } refused[] = {
      {"malloc_context_size=0", "option 'malloc_context_size': 0 is out of range (1..256)"},
      {"malloc_context_size=-3", "option 'malloc_context_size': -3 is out of range (1..256)"},
      {"malloc_context_size=257", "option 'malloc_context_size': 257 is out of range (1..256)"},
      {"timeline_top=9999", "option 'timeline_top': 9999 is out of range (1..256)"},
      {"timeline_top=0", "option 'timeline_top': 0 is out of range (1..256)"},
      {"raw_version=9", "option 'raw_version': 9 is out of range (3..5)"},
      {"unwind_tables=3", "option 'unwind_tables': 3 is out of range (-1..2)"},
      {"sample_interval=-1", "option 'sample_interval': -1 is out of range (0..2147483647)"},
      {"timeline_interval_ms=0", "option 'timeline_interval_ms': 0 is out of range (1..2147483647)"},
  };
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
    CHECK(init(NULL, refused[i].env) == 1, "%s warns", refused[i].env);
    CHECK(strstr(rt_stub_last_report, refused[i].warning) != NULL, "%s: %s",
          refused[i].env, rt_stub_last_report);
    CHECK(memcmp(&rt_flags, &defaults, sizeof rt_flags) == 0, "%s changed a flag",
          refused[i].env);
  }
  CHECK(init(NULL, "malloc_context_size=1:timeline_top=256:malloc_context_size=256") == 0 &&
            rt_flags.malloc_context_size == 256 && rt_flags.timeline_top == 256,
        "the ends of a range are accepted");
  CHECK(init(NULL, "sample_seed=-7") == 0 && rt_flags.sample_seed == -7,
        "any seed is accepted");
}

static void test_lengths(void) {
  char env[400] = "log_suffix=";
  memset(env + 11, 's', 200);
  CHECK(init(NULL, env) == 0 && rt_flags.log_suffix && strlen(rt_flags.log_suffix) == 200,
        "a 200-byte suffix is kept");
  env[11 + 200] = 's';
  CHECK(init(NULL, env) == 1 && rt_flags.log_suffix == NULL,
        "a 201-byte suffix is refused (it would end a file name over 255 bytes)");
  static char longpath[5000] = "log_path=";
  memset(longpath + 9, 'p', 4200);
  CHECK(init(NULL, longpath) == 1 && rt_flags.log_path == NULL,
        "a log_path longer than its buffer falls back to the default file");
}

int main(void) {
  unsetenv("MEMPROF_OPTIONS");
  defaults = rt_flags;
  test_defaults();
  test_values_and_separators();
  test_environment_after_program();
  test_refused_values();
  test_ranges();
  test_lengths();
  return check_result();
}
