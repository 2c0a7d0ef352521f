/* test_hcsites.c - the call-site file's reader (profdata/hcsites/): a
 * well-formed file read back field by field, and every kind of damage
 * refused with the line and what is wrong: truncation anywhere, another
 * magic, another version, counts that do not add up (the total line, a
 * site's lifetimes), a module or site out of range, stray text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profdata/hcsites/hcsites.h"
#include "test/unit/check.h"

static const char GOOD[] =
    "memprof-hotcold-sites version=1\n"
    "pid=77 lifetimes=1 modules=2 sites=2 dropped_allocs=3 dropped_bytes=96\n"
    "module=0 build_id=0a1b path=/bin/my app\n"
    "module=1 build_id=- path=/lib/x.so\n"
    "site=0 module=0 address=4660 hint=1 cold_allocs=4 cold_bytes=4096 "
    "other_allocs=0 other_bytes=0 freed=3 live=1 lifetime_total_ns=100 "
    "lifetime_min_ns=10 lifetime_max_ns=40\n"
    "site=1 module=1 address=17 hint=128 cold_allocs=0 cold_bytes=0 "
    "other_allocs=2 other_bytes=64 freed=0 live=0 lifetime_total_ns=0 "
    "lifetime_min_ns=0 lifetime_max_ns=0\n"
    "total cold_allocs=4 cold_bytes=4096 other_allocs=2 other_bytes=64\n"
    "end\n";

static void good_file(void) {
  mp_hcs h;
  mp_err err;
  CHECK(mp_hcs_parse("good", GOOD, strlen(GOOD), &h, &err) == 0, "%s", err.msg);
  CHECK_EQ(h.pid, 77);
  CHECK_EQ(h.lifetimes, 1);
  CHECK_EQ(h.n_modules, 2);
  CHECK_EQ(h.n_sites, 2);
  CHECK_EQ(h.dropped_allocs, 3);
  CHECK_EQ(h.dropped_bytes, 96);
  if (h.n_modules == 2) {
    CHECK(!strcmp(h.modules[0].path, "/bin/my app"));
    CHECK_EQ(h.modules[0].build_id_len, 2);
    CHECK_EQ(h.modules[0].build_id[0], 0x0a);
    CHECK_EQ(h.modules[0].build_id[1], 0x1b);
    CHECK_EQ(h.modules[1].build_id_len, 0);
  }
  if (h.n_sites == 2) {
    const mp_hcs_site *s = &h.sites[0];
    CHECK_EQ(s->module, 0);
    CHECK_EQ(s->address, 4660);
    CHECK_EQ(s->hint, 1);
    CHECK_EQ(s->cold_allocs, 4);
    CHECK_EQ(s->cold_bytes, 4096);
    CHECK_EQ(s->freed, 3);
    CHECK_EQ(s->live, 1);
    CHECK_EQ(s->lt_total_ns, 100);
    CHECK_EQ(s->lt_min_ns, 10);
    CHECK_EQ(s->lt_max_ns, 40);
    CHECK_EQ(h.sites[1].other_bytes, 64);
    CHECK_EQ(h.sites[1].hint, 128);
  }
  mp_hcs_free(&h);
}

/* GOOD with the first `from` replaced by `to`; the reader's message must
 * contain `want`. */
static void refused(const char *from, const char *to, const char *want) {
  char text[sizeof GOOD + 256];
  const char *at = strstr(GOOD, from);
  CHECK(at != NULL, "%s not in the file", from);
  if (!at) return;
  size_t head = (size_t)(at - GOOD);
  snprintf(text, sizeof text, "%.*s%s%s", (int)head, GOOD, to, at + strlen(from));
  mp_hcs h;
  mp_err err;
  err.msg[0] = 0;
  int rc = mp_hcs_parse("bad", text, strlen(text), &h, &err);
  CHECK(rc == -1, "%s -> %s: accepted", from, to);
  CHECK(strstr(err.msg, want) != NULL, "%s -> %s: \"%s\" lacks \"%s\"", from, to,
        err.msg, want);
  CHECK(!strncmp(err.msg, "bad: ", 5), "%s", err.msg);
}

/* The first n bytes of GOOD: every cut is refused as truncated. */
static void truncated(void) {
  for (size_t n = 0; n < sizeof GOOD - 1; n++) {
    mp_hcs h;
    mp_err err;
    err.msg[0] = 0;
    int rc = mp_hcs_parse("cut", GOOD, n, &h, &err);
    CHECK(rc == -1, "cut at %zu accepted", n);
    /* a cut inside the first line may also read as another kind of file */
    CHECK(strstr(err.msg, "truncated") || (n < 32 && strstr(err.msg, "not a")),
          "cut at %zu: %s", n, err.msg);
  }
}

int main(void) {
  good_file();
  truncated();
  refused("memprof-hotcold-sites", "memprof-hotcold-sitez",
          "bad: not a libmemprof-hotcold call-site file");
  refused("version=1", "version=2",
          "call-site file version 2 is not supported (this tool reads version 1)");
  refused("total cold_allocs=4", "total cold_allocs=5",
          "line 7: counts do not add up: the sites' cold_allocs sum to 4, the "
          "total line says 5");
  refused("other_bytes=64\n", "other_bytes=65\n", "counts do not add up");
  refused("freed=3 live=1", "freed=4 live=1",
          "line 5: counts do not add up: freed + live exceed");
  refused("lifetime_total_ns=100", "lifetime_total_ns=170",
          "counts do not add up: the lifetimes' total");
  refused("lifetime_min_ns=0 lifetime_max_ns=0", "lifetime_min_ns=0 lifetime_max_ns=5",
          "lifetimes without blocks measured");
  refused("sites=2", "sites=3", "line 7: expected site=");
  refused("sites=2", "sites=1", "line 6: expected the total line");
  refused("modules=2", "modules=3", "line 5: expected module=");
  refused("site=1 module=1", "site=1 module=2", "the site's module is not in the file");
  refused("hint=128", "hint=256", "the hint is not 0-255");
  refused("address=4660", "address=46x0", "address is not a number");
  refused("address=4660", "address=99999999999999999999", "address is too large");
  refused("build_id=0a1b", "build_id=0a1", "even number of hex digits");
  refused("site=1 module=1", "site=2 module=1", "not numbered 0, 1, ...");
  refused("end\n", "end\nmore\n", "text after the end line");
  refused("end\n", "END\n", "expected the end line");
  refused("lifetimes=1", "lifetimes=2", "lifetimes is neither 0 nor 1");
  return check_result();
}
