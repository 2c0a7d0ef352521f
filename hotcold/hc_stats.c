/* hc_stats.c - allocation statistics per hint (stats=1 or stats_path):
 * how many hinted allocations and bytes each hint value got and how many
 * of them the cold arena served, the unhinted allocations, and jemalloc's
 * own counters of the cold arena.  Written at exit (after the program's
 * static destructors) or on request; docs/hotcold.md gives the format.
 *
 * Counting costs relaxed atomic adds and happens only with stats on; bytes
 * are the sizes the program asked for. */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "hc_internal.h"

typedef struct hint_count {
  unsigned long allocs, bytes, cold_allocs, cold_bytes;
} hint_count;

static hint_count hints[256];
static unsigned long plain_allocs, plain_bytes;

void hc_count_hint(unsigned hint, size_t n, int cold) {
  hint_count *c = &hints[hint & 0xff];
  __atomic_fetch_add(&c->allocs, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&c->bytes, n, __ATOMIC_RELAXED);
  if (cold) {
    __atomic_fetch_add(&c->cold_allocs, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&c->cold_bytes, n, __ATOMIC_RELAXED);
  }
}

void hc_count_plain(size_t n) {
  __atomic_fetch_add(&plain_allocs, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&plain_bytes, n, __ATOMIC_RELAXED);
}

/* The classes are named after clang's default hint values (cold 1,
 * notcold 128, ambiguous 222, hot 254); only "cold" changes placement. */
enum { CLS_COLD, CLS_NOTCOLD, CLS_AMBIGUOUS, CLS_HOT, NCLS };
static const char *const class_names[NCLS] = {"cold", "notcold", "ambiguous", "hot"};

static int class_of(unsigned h) {
  return h < HC_COLD_LIMIT ? CLS_COLD : h < 222 ? CLS_NOTCOLD : h < 254 ? CLS_AMBIGUOUS : CLS_HOT;
}

/* ---- one output line, "memprof-hotcold: k=v k=v ..." --------------------- */

typedef struct line {
  char buf[512];
  size_t len;
} line;

static void put(line *l, const char *s) {
  size_t n = strlen(s);
  if (l->len + n < sizeof l->buf) {
    memcpy(l->buf + l->len, s, n);
    l->len += n;
  }
}

static void put_num(line *l, const char *key, unsigned long long v) {
  char num[24];
  size_t n = hc_utoa(num, v);
  num[n] = 0;
  put(l, " ");
  put(l, key);
  put(l, "=");
  put(l, num);
}

static void start(line *l) {
  l->len = 0;
  put(l, "memprof-hotcold:");
}

static int finish(line *l, int fd) {
  put(l, "\n");
  return hc_write_all(fd, l->buf, l->len);
}

/* ---- jemalloc's counters of the cold arena -------------------------------- */

static unsigned long long arena_stat(int ind, const char *name, int is_u64) {
  size_t mib[8], miblen = 8;
  if (mphc_mallctlnametomib(name, mib, &miblen))
    return 0;
  mib[2] = (size_t)ind;
  uint64_t v64 = 0;
  size_t vsz = 0, sz = is_u64 ? sizeof v64 : sizeof vsz;
  if (mphc_mallctlbymib(mib, miblen, is_u64 ? (void *)&v64 : (void *)&vsz, &sz, NULL, 0))
    return 0;
  return is_u64 ? v64 : vsz;
}

static int write_arena(int fd) {
  line l;
  start(&l);
  int ind = hc_cold_index();
  put(&l, " cold_arena");
  put(&l, !hc_opt.cold_arena ? " state=off" : ind >= 0 ? " state=on"
          : hc_cold_len ? " state=unavailable" : " state=unused");
  if (ind >= 0) {
    uint64_t epoch = 1;
    size_t esz = sizeof epoch;
    mphc_mallctl("epoch", &epoch, &esz, &epoch, sizeof epoch);
    put_num(&l, "index", (unsigned)ind);
    put_num(&l, "reserved_bytes", hc_cold_len);
    put_num(&l, "used_bytes", hc_cold_used());
    put_num(&l, "allocs", arena_stat(ind, "stats.arenas.0.small.nmalloc", 1) +
                              arena_stat(ind, "stats.arenas.0.large.nmalloc", 1));
    put_num(&l, "frees", arena_stat(ind, "stats.arenas.0.small.ndalloc", 1) +
                             arena_stat(ind, "stats.arenas.0.large.ndalloc", 1));
    put_num(&l, "live_bytes", arena_stat(ind, "stats.arenas.0.small.allocated", 0) +
                                  arena_stat(ind, "stats.arenas.0.large.allocated", 0));
    put_num(&l, "resident_bytes", arena_stat(ind, "stats.arenas.0.resident", 0));
    put_num(&l, "idle_rounds", hc_idle_rounds());
  }
  return finish(&l, fd);
}

HC_EXPORT int memprof_hotcold_write_stats(int fd) {
  int rc = 0;
  line l;
  start(&l);
  put_num(&l, "pid", (unsigned long long)getpid());
  rc |= finish(&l, fd);
  unsigned long cls_allocs[NCLS] = {0}, cls_bytes[NCLS] = {0};
  for (unsigned h = 0; h < 256; h++) {
    hint_count c;
    c.allocs = __atomic_load_n(&hints[h].allocs, __ATOMIC_RELAXED);
    if (!c.allocs)
      continue;
    c.bytes = __atomic_load_n(&hints[h].bytes, __ATOMIC_RELAXED);
    c.cold_allocs = __atomic_load_n(&hints[h].cold_allocs, __ATOMIC_RELAXED);
    c.cold_bytes = __atomic_load_n(&hints[h].cold_bytes, __ATOMIC_RELAXED);
    cls_allocs[class_of(h)] += c.allocs;
    cls_bytes[class_of(h)] += c.bytes;
    start(&l);
    put_num(&l, "hint", h);
    put(&l, " class=");
    put(&l, class_names[class_of(h)]);
    put_num(&l, "allocs", c.allocs);
    put_num(&l, "bytes", c.bytes);
    put_num(&l, "cold_arena_allocs", c.cold_allocs);
    put_num(&l, "cold_arena_bytes", c.cold_bytes);
    rc |= finish(&l, fd);
  }
  for (int k = 0; k < NCLS; k++) {
    start(&l);
    put(&l, " class=");
    put(&l, class_names[k]);
    put_num(&l, "allocs", cls_allocs[k]);
    put_num(&l, "bytes", cls_bytes[k]);
    rc |= finish(&l, fd);
  }
  start(&l);
  put(&l, " class=unhinted");
  put_num(&l, "allocs", __atomic_load_n(&plain_allocs, __ATOMIC_RELAXED));
  put_num(&l, "bytes", __atomic_load_n(&plain_bytes, __ATOMIC_RELAXED));
  rc |= finish(&l, fd);
  rc |= write_arena(fd);
  return rc ? -1 : 0;
}

/* stats_path=P writes P.<pid>, so the processes of a fork keep theirs. */
static int open_stats_file(void) {
  char path[sizeof hc_opt.stats_path + 24];
  size_t n = strlen(hc_opt.stats_path);
  memcpy(path, hc_opt.stats_path, n);
  path[n++] = '.';
  n += hc_utoa(path + n, (unsigned long long)getpid());
  path[n] = 0;
  return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

__attribute__((destructor)) static void hc_stats_at_exit(void) {
  if (!hc_opt.stats)
    return;
  if (!hc_opt.stats_path[0]) {
    memprof_hotcold_write_stats(2);
    return;
  }
  int fd = open_stats_file();
  if (fd < 0) {
    static const char msg[] = "memprof-hotcold: cannot open stats_path\n";
    hc_write_all(2, msg, sizeof msg - 1);
    return;
  }
  memprof_hotcold_write_stats(fd);
  close(fd);
}
