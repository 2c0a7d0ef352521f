/* rt_flags.c - runtime options: __memprof_default_options() first, then
 * MEMPROF_OPTIONS (later wins).  Separators ':' ',' and whitespace; booleans
 * 0/1/true/false; an unknown option or bad value is warned about once on
 * stderr and ignored.  String values are copied into static storage. */
#include <stdlib.h>

#include "rt_core.h"

rt_flags_t rt_flags = {
    .dump_at_exit = 1,
    .malloc_context_size = 30,
    .raw_version = 5,
    .handle_segv = 1,
    .handle_sigbus = 1,
    .handle_sigfpe = 1,
    .handle_sigill = 1,
};

MP_EXPORT const char *__memprof_default_options(void);

enum kind { BOOL, INT, STR };
typedef struct flag_desc {
  const char *name;
  enum kind kind;
  void *ptr;
  const char *help;
} flag_desc;

static char log_path_buf[4096], log_suffix_buf[256];

static const flag_desc flags[] = {
    {"log_path", STR, &rt_flags.log_path,
     "Write profiles and reports to <log_path>.<pid> (stdout/stderr special)"},
    {"log_exe_name", BOOL, &rt_flags.log_exe_name,
     "Insert the executable name into the output file name"},
    {"log_suffix", STR, &rt_flags.log_suffix, "Suffix appended to the output file name"},
    {"print_text", BOOL, &rt_flags.print_text, "Write a text profile instead of raw"},
    {"print_terse", BOOL, &rt_flags.print_terse, "Terse text profile (one line per MIB)"},
    {"dump_at_exit", BOOL, &rt_flags.dump_at_exit, "Write a profile at exit"},
    {"malloc_context_size", INT, &rt_flags.malloc_context_size,
     "Maximum number of frames in an allocation stack"},
    {"raw_version", INT, &rt_flags.raw_version, "Raw profile version to write (3, 4 or 5)"},
    {"atexit", BOOL, &rt_flags.atexit, "Print allocator statistics at exit"},
    {"exact_clock", BOOL, &rt_flags.exact_clock,
     "Read the clock at every allocation and free (no ticker thread)"},
    {"verbosity", INT, &rt_flags.verbosity, "Verbosity level"},
    {"help", BOOL, &rt_flags.help, "Print the flag descriptions"},
    {"allocator_may_return_null", BOOL, &rt_flags.allocator_may_return_null,
     "Return NULL instead of dying when an allocation fails"},
    {"handle_abort", BOOL, &rt_flags.handle_abort, "Dump the profile on SIGABRT"},
    {"handle_segv", BOOL, &rt_flags.handle_segv, "Dump the profile on SIGSEGV"},
    {"handle_sigbus", BOOL, &rt_flags.handle_sigbus, "Dump the profile on SIGBUS"},
    {"handle_sigfpe", BOOL, &rt_flags.handle_sigfpe, "Dump the profile on SIGFPE"},
    {"handle_sigill", BOOL, &rt_flags.handle_sigill, "Dump the profile on SIGILL"},
};
#define NFLAGS (sizeof(flags) / sizeof(flags[0]))

static int is_sep(char c) {
  return c == ':' || c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int str_eq(const char *a, size_t an, const char *b) {
  size_t i = 0;
  for (; i < an && b[i]; i++)
    if (a[i] != b[i])
      return 0;
  return i == an && !b[i];
}

/* Values past INT_MAX are refused (the flag keeps its value). */
static int parse_int(const char *v, size_t n, int *out) {
  int neg = 0;
  long long val = 0;
  size_t i = 0;
  if (i < n && v[i] == '-')
    neg = 1, i++;
  if (i == n)
    return 0;
  for (; i < n; i++) {
    if (v[i] < '0' || v[i] > '9')
      return 0;
    val = val * 10 + (v[i] - '0');
    if (val > 0x7fffffff)
      return 0;
  }
  *out = (int)(neg ? -val : val);
  return 1;
}

static int parse_bool(const char *v, size_t n, int *out) {
  if (str_eq(v, n, "1") || str_eq(v, n, "true") || str_eq(v, n, "yes"))
    return *out = 1, 1;
  if (str_eq(v, n, "0") || str_eq(v, n, "false") || str_eq(v, n, "no"))
    return *out = 0, 1;
  return 0;
}

static void set_str(const flag_desc *f, const char *v, size_t n) {
  char *buf = f->ptr == &rt_flags.log_path ? log_path_buf : log_suffix_buf;
  size_t cap = f->ptr == &rt_flags.log_path ? sizeof log_path_buf : sizeof log_suffix_buf;
  if (n >= cap) {
    if (f->ptr == &rt_flags.log_path) {
      char head[9];
      rt_memcpy(head, v, 8);
      head[8] = 0;
      /* Losing the whole profile over its name helps nobody: say so and
       * fall back to the default file. */
      rt_report("ERROR: Path is too long: %s... (writing the default profile file)",
                head);
      rt_flags.log_path = NULL;
    } else {
      rt_report("WARNING: value of %s is too long, ignored", f->name);
    }
    return;
  }
  rt_memcpy(buf, v, n);
  buf[n] = 0;
  *(const char **)f->ptr = n ? buf : NULL;
}

static void apply(const char *name, size_t nn, const char *v, size_t vn) {
  for (size_t i = 0; i < NFLAGS; i++) {
    const flag_desc *f = &flags[i];
    if (!str_eq(name, nn, f->name))
      continue;
    int ok = 1, x;
    if (f->kind == STR)
      set_str(f, v, vn);
    else if (f->kind == BOOL && (ok = parse_bool(v, vn, &x)))
      *(int *)f->ptr = x;
    else if (f->kind == INT && (ok = parse_int(v, vn, &x)))
      *(int *)f->ptr = x;
    if (!ok)
      rt_report("WARNING: invalid value for option '%s', ignored", f->name);
    return;
  }
  char tmp[128];
  size_t k = nn < sizeof tmp - 1 ? nn : sizeof tmp - 1;
  rt_memcpy(tmp, name, k);
  tmp[k] = 0;
  rt_report("WARNING: unknown option '%s' ignored", tmp);
}

static void parse(const char *s) {
  if (!s)
    return;
  while (*s) {
    while (*s && is_sep(*s))
      s++;
    if (!*s)
      break;
    const char *name = s;
    while (*s && !is_sep(*s) && *s != '=')
      s++;
    size_t nn = (size_t)(s - name);
    const char *v = "";
    size_t vn = 0;
    if (*s == '=') {
      v = ++s;
      while (*s && !is_sep(*s))
        s++;
      vn = (size_t)(s - v);
    }
    apply(name, nn, v, vn);
  }
}

static void print_help(void) {
  rt_printf_fd(2, "Available flags for MemProfiler:\n");
  for (size_t i = 0; i < NFLAGS; i++)
    rt_printf_fd(2, "\t%s\n\t\t- %s\n", flags[i].name, flags[i].help);
}

/* getenv fails in .preinit_array: libc sets environ in its own
 * initializer, which runs later.  The kernel's copy is the same then. */
static const char *get_options_env(void) {
  extern char **__environ;
  static const char key[] = "MEMPROF_OPTIONS=";
  if (__environ)
    return getenv("MEMPROF_OPTIONS");
  static char buf[65536];
  int fd = rt_open("/proc/self/environ", 0 /* O_RDONLY */, 0);
  if (fd < 0)
    return NULL;
  long n = 0, r;
  while (n < (long)sizeof buf - 1 &&
         (r = rt_syscall(0 /* read */, fd, buf + n, sizeof buf - 1 - n)) > 0)
    n += r;
  rt_close(fd);
  buf[n] = 0;
  for (long i = 0; i < n; i += (long)rt_strlen(buf + i) + 1)
    if (!rt_memcmp(buf + i, key, sizeof key - 1))
      return buf + i + sizeof key - 1;
  return NULL;
}

void rt_flags_init(void) {
  parse(__memprof_default_options());
  parse(get_options_env());
  if (rt_flags.raw_version < 3 || rt_flags.raw_version > 5) {
    rt_report("WARNING: raw_version=%d is not supported (3, 4 or 5), using 5",
              rt_flags.raw_version);
    rt_flags.raw_version = 5;
  }
  if (rt_flags.help)
    print_help();
}

void rt_flags_set_log_path(const char *path) {
  if (!path) {
    rt_flags.log_path = NULL;
    return;
  }
  set_str(&flags[0], path, rt_strlen(path));
}
