/* rt_flags.c - runtime options: __memprof_default_options() first, then
 * MEMPROF_OPTIONS (later wins).  Separators ':' ',' and whitespace; booleans
 * 0/1/true/false/yes/no (the string's syntax: include/internal/opt_string.h); an
 * unknown option, a bad value or an integer outside its flag's RT_RANGE is
 * warned about once on stderr, with the value, and ignored.  String values
 * are copied into static storage. */
#include <stdlib.h>

#include "include/internal/opt_string.h"
#include "rt_flags.h"
#include "rt_libc.h"
#include "rt_state.h"
#include "rt_sys.h"

rt_flags_t rt_flags = {
#define RT_FLAG(kind, name, def, desc) .name = def,
#include "rt_flags.inc"
#undef RT_FLAG
};

/* Weak: the program may define its own (clang emits the string for
 * -memprof-runtime-default-options). */
RT_EXPORT __attribute__((weak)) char __memprof_default_options_str[1] = "";
RT_EXPORT __attribute__((weak)) const char *__memprof_default_options(void) {
  return __memprof_default_options_str;
}

enum kind { BOOL, INT, STR };
typedef struct flag_desc {
  const char *name;
  enum kind kind;
  void *ptr;
  char *buf; /* a STR flag's storage (value copied in), else NULL */
  size_t cap;
  const char *help;
} flag_desc;

/* Storage for string values: a path's worth each. */
#define RT_FLAG_BUF_BOOL 1
#define RT_FLAG_BUF_INT 1
#define RT_FLAG_BUF_STR 4096
#define RT_FLAG(kind, name, def, desc) static char buf_##name[RT_FLAG_BUF_##kind];
#include "rt_flags.inc"
#undef RT_FLAG

static const flag_desc flags[] = {
#define RT_FLAG(kind, name, def, desc)                                          \
  {#name, kind, &rt_flags.name, kind == STR ? buf_##name : NULL, sizeof buf_##name, desc},
#include "rt_flags.inc"
#undef RT_FLAG
};
#define NFLAGS (sizeof(flags) / sizeof(flags[0]))

/* The values each INT flag takes (rt_flags.inc's RT_RANGE lines). */
typedef struct flag_range {
  const char *name;
  int lo, hi;
} flag_range;
static const flag_range ranges[] = {
#define RT_FLAG(kind, name, def, desc)
#define RT_RANGE(name, lo, hi) {#name, lo, hi},
#include "rt_flags.inc"
#undef RT_RANGE
#undef RT_FLAG
};

static const flag_range *range_of(const char *name) {
  for (size_t i = 0; i < sizeof ranges / sizeof ranges[0]; i++)
    if (mpf_opt_is(name, rt_strlen(name), ranges[i].name))
      return &ranges[i];
  return NULL;
}

/* The first bytes of a value as a C string, for a warning. */
static const char *quoted(const char *v, size_t n, char *buf, size_t cap) {
  size_t k = n < cap - 1 ? n : cap - 1;
  rt_memcpy(buf, v, k);
  buf[k] = 0;
  return buf;
}

/* Values past INT_MAX are refused (the flag keeps its value). */
static int parse_int(const char *v, size_t n, int *out) {
  long long x;
  if (!mpf_opt_int(v, n, 0x7fffffff, &x))
    return 0;
  *out = (int)x;
  return 1;
}

static void set_str(const flag_desc *f, const char *v, size_t n) {
  if (n >= f->cap) {
    if (f->ptr == &rt_flags.log_path) {
      char head[9];
      rt_memcpy(head, v, 8);
      head[8] = 0;
      /* Losing the whole profile over its name helps nobody: say so and
       * fall back to the default file. */
      rt_report("ERROR: Path is too long: %s... (writing the default profile file)",
                head);
      rt_flags.log_path = NULL;
      rt_output_note_failure();
    } else {
      rt_report("WARNING: value of %s is too long, ignored", f->name);
    }
    return;
  }
  rt_memcpy(f->buf, v, n);
  f->buf[n] = 0;
  *(const char **)f->ptr = n ? f->buf : NULL;
}

static const flag_desc *find_flag(const char *name, size_t nn) {
  for (size_t i = 0; i < NFLAGS; i++)
    if (mpf_opt_is(name, nn, flags[i].name))
      return &flags[i];
  return NULL;
}

static void apply(const char *name, size_t nn, const char *v, size_t vn) {
  const flag_desc *f = find_flag(name, nn);
  if (f) {
    int ok = 1, x;
    char val[64];
    if (f->kind == STR)
      set_str(f, v, vn);
    else if (f->kind == BOOL && (ok = mpf_opt_bool(v, vn, &x)))
      *(int *)f->ptr = x;
    else if (f->kind == INT && (ok = parse_int(v, vn, &x))) {
      const flag_range *r = range_of(f->name);
      if (r && (x < r->lo || x > r->hi))
        rt_report("WARNING: option '%s': %d is out of range (%d..%d), ignored",
                  f->name, x, r->lo, r->hi);
      else
        *(int *)f->ptr = x;
    }
    if (!ok)
      rt_report("WARNING: invalid value '%s' for option '%s', ignored",
                quoted(v, vn, val, sizeof val), f->name);
    return;
  }
  char tmp[128];
  size_t k = nn < sizeof tmp - 1 ? nn : sizeof tmp - 1;
  rt_memcpy(tmp, name, k);
  tmp[k] = 0;
  rt_report("WARNING: unknown option '%s' ignored", tmp);
}

static void parse(const char *s) {
  mpf_opt_pair p;
  if (s)
    while (mpf_opt_next(&s, &p))
      apply(p.name, p.name_len, p.val, p.val_len);
}

/* sanitizer_common's layout, with each option's value now. */
static void print_help(void) {
  rt_printf_fd(2, "Available flags for MemProfiler:\n");
  for (size_t i = 0; i < NFLAGS; i++) {
    const flag_desc *f = &flags[i];
    rt_printf_fd(2, "\t%s\n\t\t- %s (Current Value: ", f->name, f->help);
    if (f->kind == STR) {
      const char *v = *(const char **)f->ptr;
      rt_printf_fd(2, "%s)\n", v ? v : "");
    } else if (f->kind == BOOL) {
      rt_printf_fd(2, "%s)\n", *(int *)f->ptr ? "true" : "false");
    } else {
      rt_printf_fd(2, "%d)\n", *(int *)f->ptr);
    }
  }
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
  /* It ends a file name, whose every part the kernel limits to 255 bytes:
   * a longer one would cost the whole profile. */
  if (rt_flags.log_suffix && rt_strlen(rt_flags.log_suffix) > 200) {
    rt_report("WARNING: value of log_suffix is too long, ignored");
    rt_flags.log_suffix = NULL;
  }
  if (rt_flags.help)
    print_help();
}

void rt_flags_set_log_path(const char *path) {
  if (!path) {
    rt_flags.log_path = NULL;
    return;
  }
  set_str(find_flag("log_path", 8), path, rt_strlen(path));
}
