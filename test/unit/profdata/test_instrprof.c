/* test_instrprof.c - the instrumentation-profile readers on real files:
 * progs/instrprof_prog.c built with clang-22 and with clang-19
 * -fprofile-generate and run; the raw file it writes read with
 * mp_read_instr_raw (instrprof_raw.c), and the indexed file
 * llvm-profdata-22 merge makes of it read with mp_read_indexed (the
 * function table: instrprof_index.c).  Both must hold exactly the
 * functions, structural hashes and counters llvm-profdata-22 merge --text
 * prints for the raw file, and a weight multiplies every counter.  The
 * MD5 of each name (common/guid.c's mp_md5_low) finds its item in
 * llvm-profdata's function table, which LLVM keyed by its own.  Every
 * truncation of the raw file, and truncations of the indexed one, are
 * refused with a message.
 *
 * The files are made when the test runs (paths from MEMPROF_SOURCE_DIR):
 * the readers are checked against the raw format each installed compiler
 * writes today, which a checked-in file would stop doing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/guid.h"
#include "common/io.h"
#include "profdata/indexed/indexed.h"
#include "profdata/instrprof/instrprof.h"
#include "profdata/llvm/odhash.h"
#include "test/unit/check.h"
#include "test/unit/shell.h"

/* One function of llvm-profdata's text output. */
typedef struct want_fn {
  char name[256];
  uint64_t hash;
  uint32_t n;
  uint64_t counts[64];
} want_fn;

/* llvm-profdata merge --text: blocks separated by blank lines; in each,
 * the lines that are not comments ('#') or flags (':') are the name, the
 * hash, the counter count and the counters, then value data (ignored). */
static size_t parse_text(const char *text, want_fn *w, size_t cap) {
  size_t n = 0;
  int field = 0; /* in the current block: 0 name, 1 hash, 2 count, 3+ */
  for (const char *l = text; *l;) {
    const char *e = strchr(l, '\n');
    size_t len = e ? (size_t)(e - l) : strlen(l);
    if (len == 0) {
      field = 0;
    } else if (l[0] != '#' && l[0] != ':') {
      if (field == 0 && n < cap) {
        memset(&w[n], 0, sizeof w[n]);
        snprintf(w[n].name, sizeof w[n].name, "%.*s", (int)len, l);
        n++;
      } else if (n && field == 1) {
        w[n - 1].hash = strtoull(l, NULL, 10);
      } else if (n && field == 2) {
        w[n - 1].n = (uint32_t)strtoul(l, NULL, 10);
      } else if (n && field >= 3 && (uint32_t)(field - 3) < w[n - 1].n &&
                 field - 3 < 64) {
        w[n - 1].counts[field - 3] = strtoull(l, NULL, 10);
      }
      field++;
    }
    l = e ? e + 1 : l + len;
  }
  return n;
}

/* `ip` holds exactly the functions of `w`, each with one record of its
 * hash and its counters times `weight`. */
static void check_instr(const mp_instr *ip, const want_fn *w, size_t n_want,
                        uint64_t weight, const char *what) {
  CHECK(ip && ip->n_funcs == n_want && ip->n_recs == n_want,
        "%s: %zu functions, %zu records, want %zu", what,
        ip ? ip->n_funcs : 0, ip ? ip->n_recs : 0, n_want);
  if (!ip) return;
  CHECK(ip->variant & MP_IVAR_IR, "%s: not an IR-level profile", what);
  for (size_t i = 0; i < n_want; i++) {
    const mp_ifunc *f = NULL;
    for (size_t k = 0; k < ip->n_funcs && !f; k++)
      if (ip->funcs[k].name_len == strlen(w[i].name) &&
          !memcmp(mp_ifunc_name(ip, &ip->funcs[k]), w[i].name,
                  ip->funcs[k].name_len))
        f = &ip->funcs[k];
    CHECK(f, "%s: no function %s", what, w[i].name);
    if (!f) continue;
    const mp_irecord *r = &ip->recs[f->first];
    CHECK(f->first == f->last && r->hash == w[i].hash && r->n_counts == w[i].n,
          "%s: %s: hash %#llx with %u counters, want %#llx with %u", what,
          w[i].name, (unsigned long long)r->hash, r->n_counts,
          (unsigned long long)w[i].hash, w[i].n);
    for (uint32_t c = 0; c < r->n_counts && c < w[i].n; c++)
      CHECK(r->counts[c] == w[i].counts[c] * weight,
            "%s: %s: counter %u is %llu, want %llu", what, w[i].name, c,
            (unsigned long long)r->counts[c],
            (unsigned long long)(w[i].counts[c] * weight));
  }
}

/* LLVM keys the indexed function table (header word 4) by its MD5Hash of
 * the name: mp_md5_low (common/guid.c) of each name must find its item. */
static void check_name_hashes(const mp_file *x, const want_fn *w,
                              size_t n_want, const char *cc) {
  mp_odh t;
  mp_err err;
  if (x->size < 40 ||
      mp_odh_open(&t, x->data, x->size, mp_rd64(x->data + 32), 0, 1,
                  "function table", &err)) {
    CHECK(0, "%s: function table: %s", cc, x->size < 40 ? "" : err.msg);
    return;
  }
  for (size_t i = 0; i < n_want; i++) {
    size_t len = strlen(w[i].name);
    mp_odh_item it;
    int rc = mp_odh_lookup(&t, mp_md5_low(w[i].name, len), &it, &err);
    CHECK(rc == 1 && it.key_len == len &&
              !memcmp(x->data + it.key_off, w[i].name, len),
          "%s: MD5 of %s does not find it in the function table (%d)", cc,
          w[i].name, rc);
  }
}

static int read_raw(const mp_file *f, size_t len, uint64_t weight,
                    mp_instr **out, mp_err *err) {
  mp_instr *ip = mp_instr_new();
  int rc = mp_read_instr_raw(ip, "test", f->data, len, weight, err);
  if (out && rc == 0)
    *out = ip;
  else
    mp_instr_free(ip);
  return rc;
}

static void test_compiler(const char *dir, const char *cc) {
  const char *src = getenv("MEMPROF_SOURCE_DIR");
  char raw[160], text[160], indexed[160];
  snprintf(raw, sizeof raw, "%s/%s.profraw", dir, cc);
  snprintf(text, sizeof text, "%s/%s.proftext", dir, cc);
  snprintf(indexed, sizeof indexed, "%s/%s.profdata", dir, cc);
  if (shell("%s -O1 -fprofile-generate %s/test/unit/progs/instrprof_prog.c "
            "-o %s/%s", cc, src ? src : ".", dir, cc) ||
      shell("LLVM_PROFILE_FILE=%s %s/%s", raw, dir, cc) ||
      shell("llvm-profdata-22 merge --text %s -o %s", raw, text) ||
      shell("llvm-profdata-22 merge %s -o %s", raw, indexed)) {
    CHECK(0, "%s: cannot make the profiles", cc);
    return;
  }
  mp_file t, r, x;
  mp_err err;
  if (mp_file_open(&t, text, &err) || mp_file_open(&r, raw, &err) ||
      mp_file_open(&x, indexed, &err)) {
    CHECK(0, "%s", err.msg);
    return;
  }
  char *txt = mp_xstrndup((const char *)t.data, t.size);
  want_fn w[16];
  size_t n_want = parse_text(txt, w, 16);
  CHECK(n_want == 4, "%s: llvm-profdata-22 shows %zu functions", cc, n_want);

  mp_instr *ip = NULL;
  CHECK(read_raw(&r, r.size, 1, &ip, &err) == 0, "%s raw: %s", cc, err.msg);
  check_instr(ip, w, n_want, 1, cc);
  mp_instr_free(ip);
  ip = NULL;
  CHECK(read_raw(&r, r.size, 3, &ip, &err) == 0, "%s raw: %s", cc, err.msg);
  check_instr(ip, w, n_want, 3, cc);
  mp_instr_free(ip);

  mp_profile *p = mp_profile_new();
  CHECK(mp_read_indexed(p, x.data, x.size, &err) == 0, "%s indexed: %s", cc,
        err.msg);
  check_instr(p->instr, w, n_want, 1, indexed);
  mp_profile_free(p);
  check_name_hashes(&x, w, n_want, cc);

  /* damaged: every truncation of the raw file, and of the indexed file
   * at every 8 bytes, is refused with a message */
  size_t accepted = 0;
  for (size_t cut = 0; cut < r.size; cut++) {
    err.msg[0] = 0;
    if (read_raw(&r, cut, 1, NULL, &err) == 0 || !err.msg[0]) accepted++;
  }
  CHECK(accepted == 0, "%s: %zu truncations of the raw file read", cc,
        accepted);
  err.msg[0] = 0;
  read_raw(&r, r.size - 1, 1, NULL, &err);
  CHECK(strstr(err.msg, "does not fit in the"),
        "%s: one byte short: \"%s\"", cc, err.msg);
  accepted = 0;
  for (size_t cut = 0; cut < x.size; cut += 8) {
    err.msg[0] = 0;
    p = mp_profile_new();
    if (mp_read_indexed(p, x.data, cut, &err) == 0 || !err.msg[0]) accepted++;
    mp_profile_free(p);
  }
  CHECK(accepted == 0, "%s: %zu truncations of the indexed file read", cc,
        accepted);
  free(txt);
  mp_file_close(&t);
  mp_file_close(&r);
  mp_file_close(&x);
}

int main(void) {
  char dir[64];
  if (!scratch_dir(dir, "instrprof")) {
    CHECK(0, "no scratch folder");
    return check_result();
  }
  test_compiler(dir, "clang-22");
  test_compiler(dir, "clang-19");
  scratch_remove(dir);
  return check_result();
}
