/* hcsites.c - reading libmemprof-hotcold's call-site file (hcsites.h;
 * docs/hotcold.md, "The call-site file"): lines of space-separated
 * key=value words in a fixed order, numbers in decimal.  Everything is
 * checked before the file is used: the first line's name and version,
 * each line's keys, the declared numbers of modules and sites, the total
 * line against the sum of the sites, each site's lifetimes against its
 * counts, and the end line (a file cut short has none).
 */
#include "hcsites.h"

#include <stdlib.h>
#include <string.h>

#include "common/io.h"

static const char MAGIC[] = "memprof-hotcold-sites";

typedef struct rd {
  const char *name;
  const char *p, *end; /* the rest of the file */
  const char *l, *le;  /* the current line (without its newline) */
  size_t line;
  mp_err *err;
} rd;

static int fail(rd *r, const char *what) {
  return mp_fail(r->err, "%s: line %zu: %s", r->name, r->line, what);
}

/* The next line; -1 at the end of the file or before a missing newline. */
static int next_line(rd *r, const char *expected) {
  r->line++;
  if (r->p == r->end)
    return mp_fail(r->err, "%s: line %zu: end of file where %s was expected "
                   "(truncated file?)", r->name, r->line, expected);
  const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
  if (!nl)
    return mp_fail(r->err, "%s: line %zu: no newline at the end of the file "
                   "(truncated file?)", r->name, r->line);
  r->l = r->p;
  r->le = nl;
  r->p = nl + 1;
  return 0;
}

/* The word "key" (first on the line) or " key", then "=". */
static int key(rd *r, const char *k) {
  size_t n = strlen(k);
  if (r->l < r->le && r->l[0] == ' ')
    r->l++;
  if ((size_t)(r->le - r->l) <= n || memcmp(r->l, k, n) || r->l[n] != '=')
    return mp_fail(r->err, "%s: line %zu: expected %s=", r->name, r->line, k);
  r->l += n + 1;
  return 0;
}

static int num(rd *r, const char *k, uint64_t *v) {
  if (key(r, k))
    return -1;
  uint64_t x = 0;
  const char *s = r->l;
  while (r->l < r->le && *r->l >= '0' && *r->l <= '9') {
    unsigned d = (unsigned)(*r->l++ - '0');
    if (x > (UINT64_MAX - d) / 10)
      return mp_fail(r->err, "%s: line %zu: %s is too large", r->name, r->line, k);
    x = x * 10 + d;
  }
  if (r->l == s || (r->l < r->le && *r->l != ' '))
    return mp_fail(r->err, "%s: line %zu: %s is not a number", r->name, r->line, k);
  *v = x;
  return 0;
}

static int line_end(rd *r) {
  return r->l == r->le ? 0 : fail(r, "unexpected text at the end of the line");
}

static int header(rd *r, mp_hcs *h, uint64_t *n_mod, uint64_t *n_sites) {
  size_t m = sizeof MAGIC - 1;
  if (next_line(r, "the first line"))
    return -1;
  if ((size_t)(r->le - r->l) < m || memcmp(r->l, MAGIC, m) ||
      (r->l + m < r->le && r->l[m] != ' '))
    return mp_fail(r->err, "%s: not a libmemprof-hotcold call-site file (it "
                   "does not begin with \"%s\")", r->name, MAGIC);
  r->l += m;
  uint64_t version, lt;
  if (num(r, "version", &version) || line_end(r))
    return -1;
  if (version != MP_HCS_VERSION)
    return mp_fail(r->err, "%s: call-site file version %llu is not supported "
                   "(this tool reads version %d)", r->name,
                   (unsigned long long)version, MP_HCS_VERSION);
  if (next_line(r, "the header line") || num(r, "pid", &h->pid) ||
      num(r, "lifetimes", &lt) || num(r, "modules", n_mod) ||
      num(r, "sites", n_sites) || num(r, "dropped_allocs", &h->dropped_allocs) ||
      num(r, "dropped_bytes", &h->dropped_bytes) || line_end(r))
    return -1;
  if (lt > 1)
    return fail(r, "lifetimes is neither 0 nor 1");
  h->lifetimes = (int)lt;
  /* a line per module and per site: no count beyond the bytes left */
  if (*n_mod > (uint64_t)(r->end - r->p) || *n_sites > (uint64_t)(r->end - r->p))
    return fail(r, "more modules or sites than the file has lines (truncated file?)");
  return 0;
}

static int hexval(char c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int module_line(rd *r, size_t i, mp_hcs_module *m) {
  uint64_t idx;
  if (next_line(r, "a module line") || num(r, "module", &idx))
    return -1;
  if (idx != i)
    return fail(r, "modules are not numbered 0, 1, ... in order");
  if (key(r, "build_id"))
    return -1;
  const char *sp = memchr(r->l, ' ', (size_t)(r->le - r->l));
  if (!sp)
    return fail(r, "expected path= after the build id");
  size_t n = (size_t)(sp - r->l);
  if (!(n == 1 && r->l[0] == '-')) {
    if (n % 2 || n / 2 > sizeof m->build_id || n == 0)
      return fail(r, "the build id is not an even number of hex digits (at most 128)");
    for (size_t k = 0; k < n; k += 2) {
      int a = hexval(r->l[k]), b = hexval(r->l[k + 1]);
      if (a < 0 || b < 0)
        return fail(r, "the build id is not hex digits");
      m->build_id[k / 2] = (uint8_t)(a << 4 | b);
    }
    m->build_id_len = n / 2;
  }
  r->l = sp;
  if (key(r, "path"))
    return -1;
  m->path = mp_xstrndup(r->l, (size_t)(r->le - r->l));
  return 0;
}

/* A site's lifetimes: each measured block at most once, and the total
 * between count x shortest and count x longest. */
static int check_lifetimes(rd *r, const mp_hcs_site *s) {
  uint64_t allocs = s->cold_allocs + s->other_allocs, n = s->freed + s->live;
  if (n < s->freed || n > allocs)
    return fail(r, "counts do not add up: freed + live exceed the site's allocations");
  if (!n)
    return s->lt_total_ns || s->lt_min_ns || s->lt_max_ns
               ? fail(r, "counts do not add up: lifetimes without blocks measured")
               : 0;
  unsigned __int128 lo = (unsigned __int128)s->lt_min_ns * n,
                    hi = (unsigned __int128)s->lt_max_ns * n;
  if (s->lt_min_ns > s->lt_max_ns || s->lt_total_ns < lo || s->lt_total_ns > hi)
    return fail(r, "counts do not add up: the lifetimes' total is not between "
                "count x minimum and count x maximum");
  return 0;
}

static int site_line(rd *r, const mp_hcs *h, size_t i, mp_hcs_site *s) {
  uint64_t idx, mod, hint;
  if (next_line(r, "a site line") || num(r, "site", &idx) ||
      num(r, "module", &mod) || num(r, "address", &s->address) ||
      num(r, "hint", &hint) || num(r, "cold_allocs", &s->cold_allocs) ||
      num(r, "cold_bytes", &s->cold_bytes) ||
      num(r, "other_allocs", &s->other_allocs) ||
      num(r, "other_bytes", &s->other_bytes))
    return -1;
  if (h->lifetimes &&
      (num(r, "freed", &s->freed) || num(r, "live", &s->live) ||
       num(r, "lifetime_total_ns", &s->lt_total_ns) ||
       num(r, "lifetime_min_ns", &s->lt_min_ns) ||
       num(r, "lifetime_max_ns", &s->lt_max_ns)))
    return -1;
  if (line_end(r))
    return -1;
  if (idx != i)
    return fail(r, "sites are not numbered 0, 1, ... in order");
  if (mod >= h->n_modules)
    return fail(r, "the site's module is not in the file");
  if (hint > 255)
    return fail(r, "the hint is not 0-255");
  if (s->cold_allocs + s->other_allocs < s->cold_allocs)
    return fail(r, "counts do not add up: allocations overflow");
  s->module = (uint32_t)mod;
  s->hint = (unsigned)hint;
  return h->lifetimes ? check_lifetimes(r, s) : 0;
}

static int totals(rd *r, const mp_hcs *h) {
  static const char *const keys[4] = {"cold_allocs", "cold_bytes", "other_allocs",
                                      "other_bytes"};
  uint64_t sum[4] = {0}, v;
  for (size_t i = 0; i < h->n_sites; i++) {
    const mp_hcs_site *s = &h->sites[i];
    sum[0] += s->cold_allocs, sum[1] += s->cold_bytes;
    sum[2] += s->other_allocs, sum[3] += s->other_bytes;
  }
  if (next_line(r, "the total line"))
    return -1;
  if ((size_t)(r->le - r->l) < 5 || memcmp(r->l, "total", 5))
    return fail(r, "expected the total line (more sites than the header says?)");
  r->l += 5;
  for (int k = 0; k < 4; k++) {
    if (num(r, keys[k], &v))
      return -1;
    if (v != sum[k])
      return mp_fail(r->err, "%s: line %zu: counts do not add up: the sites' "
                     "%s sum to %llu, the total line says %llu", r->name, r->line,
                     keys[k], (unsigned long long)sum[k], (unsigned long long)v);
  }
  if (line_end(r) || next_line(r, "the end line"))
    return -1;
  if (r->le - r->l != 3 || memcmp(r->l, "end", 3))
    return fail(r, "expected the end line");
  return r->p == r->end ? 0 : fail(r, "text after the end line");
}

int mp_hcs_parse(const char *name, const char *text, size_t len, mp_hcs *h,
                 mp_err *err) {
  memset(h, 0, sizeof *h);
  rd r = {name, text, text + len, NULL, NULL, 0, err};
  uint64_t n_mod, n_sites;
  if (header(&r, h, &n_mod, &n_sites))
    goto bad;
  h->modules = mp_xcalloc(n_mod + 1, sizeof *h->modules);
  for (; h->n_modules < n_mod; h->n_modules++)
    if (module_line(&r, h->n_modules, &h->modules[h->n_modules]))
      goto bad;
  h->sites = mp_xcalloc(n_sites + 1, sizeof *h->sites);
  for (; h->n_sites < n_sites; h->n_sites++)
    if (site_line(&r, h, h->n_sites, &h->sites[h->n_sites]))
      goto bad;
  if (totals(&r, h))
    goto bad;
  return 0;
bad:
  mp_hcs_free(h);
  return -1;
}

int mp_hcs_read(const char *path, mp_hcs *out, mp_err *err) {
  mp_file f;
  memset(out, 0, sizeof *out);
  if (mp_file_open(&f, path, err)) {
    mp_err_prefix(err, path);
    return -1;
  }
  int rc = mp_hcs_parse(path, (const char *)f.data, f.size, out, err);
  mp_file_close(&f);
  return rc;
}

void mp_hcs_free(mp_hcs *h) {
  for (size_t i = 0; i < h->n_modules; i++)
    free(h->modules[i].path);
  free(h->modules);
  free(h->sites);
  memset(h, 0, sizeof *h);
}
