/* hc_site_file.c - the call-site file (site_file=PATH): at exit, after
 * the program's static destructors, the counts of hc_sites.c go to
 * PATH.<pid>, written to PATH.<pid>.tmp and renamed, so a reader never
 * sees half a file.  Each site's return address is written as its
 * module (path and GNU build id) and its link-time address in that module
 * (the run's load bias taken off), which a PIE or shared library keeps
 * from run to run.  docs/hotcold.md, "The call-site file", gives the
 * format; memprof-profdata's profdata/hcsites/ reads it. */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hc_internal.h"
#include "include/internal/loaded_build_id.h"
#include "include/internal/memprof_format.h"

#define MAX_MODULES 512
#define MAX_ID 64

typedef struct module {
  uintptr_t lo, hi, bias; /* the PT_LOAD range, the load bias */
  const char *name;       /* the loader's; "" for the main program */
  uint8_t id[MAX_ID];
  size_t id_len;
  int out; /* its index in the file, -1 while no site uses it */
} module;

typedef struct module_list {
  module m[MAX_MODULES];
  size_t n;
} module_list;

static int add_module(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  module_list *l = data;
  if (l->n == MAX_MODULES)
    return 1;
  module *m = &l->m[l->n];
  m->lo = UINTPTR_MAX;
  m->hi = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD)
      continue;
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    if (lo < m->lo)
      m->lo = lo;
    if (lo + ph->p_memsz > m->hi)
      m->hi = lo + ph->p_memsz;
  }
  if (m->hi <= m->lo)
    return 0;
  m->bias = info->dlpi_addr;
  m->name = info->dlpi_name ? info->dlpi_name : "";
  m->id_len = mpf_loaded_build_id(info, m->id, MAX_ID);
  m->out = -1;
  l->n++;
  return 0;
}

/* The module holding the call that returns to ra, or NULL. */
static module *module_of(module_list *l, uintptr_t ra) {
  for (size_t i = 0; i < l->n; i++)
    if (ra - 1 >= l->m[i].lo && ra - 1 < l->m[i].hi)
      return &l->m[i];
  return NULL;
}

/* ---- the text, a line at a time ------------------------------------------ */

typedef struct out {
  int fd, failed;
  char buf[4096];
  size_t len;
} out;

static void flush(out *o) {
  if (o->len && hc_write_all(o->fd, o->buf, o->len) != 0)
    o->failed = 1;
  o->len = 0;
}

static void put_n(out *o, const char *s, size_t n) {
  while (n) {
    if (o->len == sizeof o->buf)
      flush(o);
    size_t k = sizeof o->buf - o->len < n ? sizeof o->buf - o->len : n;
    memcpy(o->buf + o->len, s, k);
    o->len += k;
    s += k;
    n -= k;
  }
}

static void put(out *o, const char *s) { put_n(o, s, strlen(s)); }

static void put_num(out *o, const char *key, unsigned long long v) {
  char num[24];
  put(o, key);
  put(o, "=");
  put_n(o, num, hc_utoa(num, v));
}

/* A path, with a newline (which would end the line) written as '?'. */
static void put_path(out *o, const char *s) {
  for (; *s; s++)
    put_n(o, *s == '\n' ? "?" : s, 1);
}

static void put_module(out *o, const module *m) {
  static const char hex[] = "0123456789abcdef";
  put_num(o, "module", (unsigned)m->out);
  put(o, " build_id=");
  for (size_t i = 0; i < m->id_len; i++) {
    put_n(o, &hex[m->id[i] >> 4], 1);
    put_n(o, &hex[m->id[i] & 15], 1);
  }
  if (!m->id_len)
    put(o, "-");
  put(o, " path=");
  if (m->name[0]) {
    put_path(o, m->name);
  } else {
    char exe[1024];
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[k > 0 ? k : 0] = 0;
    put_path(o, exe);
  }
  put(o, "\n");
}

static void put_site(out *o, size_t index, const hc_site *s, const module *m) {
  put_num(o, "site", index);
  put_num(o, " module", (unsigned)m->out);
  put_num(o, " address", (s->key >> 8) - m->bias);
  put_num(o, " hint", s->key & 0xff);
  put_num(o, " cold_allocs", s->cold_allocs);
  put_num(o, " cold_bytes", s->cold_bytes);
  put_num(o, " other_allocs", s->other_allocs);
  put_num(o, " other_bytes", s->other_bytes);
  if (hc_opt.site_lifetimes) {
    put_num(o, " freed", s->freed);
    put_num(o, " live", s->live);
    put_num(o, " lifetime_total_ns", s->lt_total_ns);
    put_num(o, " lifetime_min_ns", s->lt_min_inv ? ~s->lt_min_inv : 0);
    put_num(o, " lifetime_max_ns", s->lt_max_ns);
  }
  put(o, "\n");
}

/* ---- the file ---------------------------------------------------------------- */

static void write_sites(out *o, hc_site *sites, size_t n, unsigned long d_allocs,
                        unsigned long d_bytes) {
  static module_list mods; /* at exit, once: too big for the stack */
  mods.n = 0;
  dl_iterate_phdr(add_module, &mods);
  size_t n_sites = 0, n_out = 0;
  unsigned long tot[4] = {0};
  for (size_t i = 0; i < n; i++) {
    module *m = sites[i].key ? module_of(&mods, sites[i].key >> 8) : NULL;
    if (!m)
      continue; /* no site, or a module gone (dlclose) */
    if (m->out < 0)
      m->out = (int)n_out++;
    n_sites++;
  }
  put(o, "memprof-hotcold-sites version=1\n");
  put_num(o, "pid", (unsigned long long)getpid());
  put_num(o, " lifetimes", (unsigned)hc_opt.site_lifetimes);
  put_num(o, " modules", n_out);
  put_num(o, " sites", n_sites);
  put_num(o, " dropped_allocs", d_allocs);
  put_num(o, " dropped_bytes", d_bytes);
  put(o, "\n");
  for (size_t k = 0; k < n_out; k++)
    for (size_t j = 0; j < mods.n; j++)
      if (mods.m[j].out == (int)k)
        put_module(o, &mods.m[j]);
  size_t index = 0;
  for (size_t i = 0; i < n; i++) {
    module *m = sites[i].key ? module_of(&mods, sites[i].key >> 8) : NULL;
    if (!m)
      continue;
    put_site(o, index++, &sites[i], m);
    tot[0] += sites[i].cold_allocs, tot[1] += sites[i].cold_bytes;
    tot[2] += sites[i].other_allocs, tot[3] += sites[i].other_bytes;
  }
  put(o, "total");
  put_num(o, " cold_allocs", tot[0]);
  put_num(o, " cold_bytes", tot[1]);
  put_num(o, " other_allocs", tot[2]);
  put_num(o, " other_bytes", tot[3]);
  put(o, "\nend\n");
  flush(o);
}

static void say(const char *what) {
  static const char pre[] = "memprof-hotcold: site_file: ";
  hc_write_all(2, pre, sizeof pre - 1);
  hc_write_all(2, what, strlen(what));
  hc_write_all(2, "\n", 1);
}

__attribute__((destructor)) static void hc_site_file_at_exit(void) {
  if (!hc_opt.sites)
    return;
  char path[sizeof hc_opt.site_file + 32], tmp[sizeof path + 8];
  size_t len = strlen(hc_opt.site_file);
  memcpy(path, hc_opt.site_file, len);
  path[len++] = '.';
  len += hc_utoa(path + len, (unsigned long long)getpid());
  path[len] = 0;
  memcpy(tmp, path, len);
  memcpy(tmp + len, ".tmp", 5);
  static out o; /* a page of buffer: not on the stack of an exiting thread */
  o.fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (o.fd < 0) {
    say("cannot create the file");
    return;
  }
  size_t n;
  unsigned long d_allocs, d_bytes;
  hc_site *sites = hc_sites_final(&n, &d_allocs, &d_bytes);
  write_sites(&o, sites, n, d_allocs, d_bytes);
  if (close(o.fd) != 0 || o.failed || rename(tmp, path) != 0) {
    unlink(tmp);
    say("cannot write the file");
  }
}
