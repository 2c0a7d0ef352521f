/* hc_options.c - libmemprof-hotcold's options, from MEMPROF_HOTCOLD_OPTIONS
 * ("name=value" separated by ':' ',' or whitespace; booleans 0/1,
 * false/true or no/yes: include/internal/opt_string.h, as the runtime's
 * MEMPROF_OPTIONS), read
 * once, early (a constructor) or at the first hinted allocation, whichever
 * comes first.  Parsing allocates nothing: it may run inside malloc.  An
 * unknown name or bad value is reported on stderr and ignored; help=1
 * lists the options. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hc_internal.h"
#include "include/internal/opt_string.h"

hc_options hc_opt = {
    .cold_arena = 1,
    .cold_decay_ms = 1000,
    .idle_ms = 1000,
    .advise = 1,
    .stats = 0,
    .cold_reserve_mb = 65536,
    .site_lifetimes = 0,
    .sites = 0,
    .stats_path = "",
    .site_file = "",
};

typedef struct opt_desc {
  const char *name;
  int *ival;     /* integer and boolean options */
  int min, max;  /* accepted range */
  char *sval;    /* string options */
  size_t cap;
  const char *help;
} opt_desc;

static const opt_desc opts[] = {
    {"cold_arena", &hc_opt.cold_arena, 0, 1, NULL, 0,
     "1: allocations hinted cold go to the cold arena; 0: every hint is ignored"},
    {"cold_decay_ms", &hc_opt.cold_decay_ms, -1, 1 << 30, NULL, 0,
     "the cold arena's dirty page decay time (-1: never purge)"},
    {"idle_ms", &hc_opt.idle_ms, 0, 1 << 30, NULL, 0,
     "after this long without cold allocations or frees, release the cold "
     "arena's unused pages (0: never, no thread)"},
    {"advise", &hc_opt.advise, 0, 1, NULL, 0,
     "1: also advise the cold arena's pages MADV_COLD when it is idle"},
    {"stats", &hc_opt.stats, 0, 1, NULL, 0,
     "1: print allocation statistics per hint at exit (stderr)"},
    {"stats_path", NULL, 0, 0, hc_opt.stats_path, sizeof hc_opt.stats_path,
     "write the statistics to PATH.<pid> instead of stderr (implies stats=1)"},
    {"cold_reserve_mb", &hc_opt.cold_reserve_mb, 64, 1 << 24, NULL, 0,
     "address space reserved for the cold arena, in MiB"},
    {"site_file", NULL, 0, 0, hc_opt.site_file, sizeof hc_opt.site_file,
     "write allocations and bytes per hinted call site to PATH.<pid> at exit"},
    {"site_lifetimes", &hc_opt.site_lifetimes, 0, 1, NULL, 0,
     "1: with site_file, also the lifetimes of each site's blocks"},
};
#define NOPTS (sizeof(opts) / sizeof(opts[0]))

int hc_write_all(int fd, const char *buf, size_t len) {
  while (len) {
    ssize_t w = write(fd, buf, len);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return -1;
    buf += w;
    len -= (size_t)w;
  }
  return 0;
}

size_t hc_utoa(char *buf, unsigned long long v) {
  char tmp[21];
  size_t n = 0;
  do {
    tmp[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v);
  for (size_t i = 0; i < n; i++)
    buf[i] = tmp[n - 1 - i];
  return n;
}

static void say(const char *a, size_t an, const char *b) {
  static const char pre[] = "memprof-hotcold: ";
  hc_write_all(2, pre, sizeof pre - 1);
  hc_write_all(2, a, an);
  hc_write_all(2, b, strlen(b));
  hc_write_all(2, "\n", 1);
}

/* A boolean (range 0..1) also takes true/yes and false/no.  Numbers are
 * checked against each option's range, which is far inside this bound. */
static int parse_int(const char *v, size_t n, int boolean, long long *out) {
  int b;
  if (boolean && mpf_opt_bool(v, n, &b)) {
    *out = b;
    return 0;
  }
  return mpf_opt_int(v, n, 1LL << 40, out) ? 0 : -1;
}

static void list_options(void) {
  static const char head[] = "options, as MEMPROF_HOTCOLD_OPTIONS=name=value:...";
  say(head, sizeof head - 1, "");
  for (size_t i = 0; i < NOPTS; i++) {
    hc_write_all(2, "  ", 2);
    hc_write_all(2, opts[i].name, strlen(opts[i].name));
    hc_write_all(2, ": ", 2);
    hc_write_all(2, opts[i].help, strlen(opts[i].help));
    hc_write_all(2, "\n", 1);
  }
}

static void set_one(const char *name, size_t nn, const char *val, size_t vn) {
  if (mpf_opt_is(name, nn, "help")) {
    long long on;
    if (parse_int(val, vn, 1, &on) == 0 && on)
      list_options();
    return;
  }
  for (size_t i = 0; i < NOPTS; i++) {
    const opt_desc *o = &opts[i];
    if (!mpf_opt_is(name, nn, o->name))
      continue;
    if (o->sval) {
      if (vn >= o->cap) {
        say(name, nn, ": value too long, ignored");
        return;
      }
      memcpy(o->sval, val, vn);
      o->sval[vn] = 0;
      return;
    }
    long long x;
    int boolean = o->min == 0 && o->max == 1;
    if (parse_int(val, vn, boolean, &x) || x < o->min || x > o->max) {
      say(name, nn, ": bad value, ignored");
      return;
    }
    *o->ival = (int)x;
    return;
  }
  say(name, nn, ": unknown option, ignored (help=1 lists them)");
}

static void parse(const char *s) {
  mpf_opt_pair p;
  while (mpf_opt_next(&s, &p))
    if (p.name_len)
      set_one(p.name, p.name_len, p.val, p.val_len);
}

static int options_state; /* 0: not read, 1: being read, 2: read */

void hc_options_init(void) {
  if (HC_LIKELY(__atomic_load_n(&options_state, __ATOMIC_ACQUIRE) == 2))
    return;
  int expect = 0;
  if (!__atomic_compare_exchange_n(&options_state, &expect, 1, 0,
                                   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return; /* another thread reads them; defaults meanwhile */
  const char *env = getenv("MEMPROF_HOTCOLD_OPTIONS");
  if (env)
    parse(env);
  if (hc_opt.stats_path[0])
    hc_opt.stats = 1;
  hc_opt.sites = hc_opt.site_file[0] != 0;
  if (!hc_opt.sites)
    hc_opt.site_lifetimes = 0;
  __atomic_store_n(&options_state, 2, __ATOMIC_RELEASE);
}

__attribute__((constructor(101))) static void hc_options_ctor(void) {
  hc_options_init();
}
