/* report_facts.c - the words every output uses for how the profile was
 * recorded: sampled (counts are estimates) and not instrumented (no access
 * counts), and which programs it comes from.  The facts come from the
 * inputs (mp_profile.intervals and .uninstrumented: the runtime's note in
 * raw profiles, our symbolized section in indexed ones; .programs: the
 * note's first path, kept by merge in the same section); each format
 * puts these sentences where its readers look (report_text.c,
 * report_html.c, report_pprof.c, report_speedscope.c, report_dhat.c;
 * stderr for the others and `show`).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

const char *rpt_sampled_note(const mp_profile *p, char *buf, size_t n) {
  const mp_intervals *s = &p->intervals;
  if (!mp_max_interval(p)) return NULL;
  if (s->n == 1) {
    snprintf(buf, n, "Sampled every %" PRIu64 " bytes on average: counts, "
                     "sizes and lifetimes are estimates", s->v[0]);
    return buf;
  }
  /* inputs recorded differently: name every interval */
  size_t at = (size_t)snprintf(buf, n, "Sampled every ");
  int exact = s->v[0] == 0;
  for (uint32_t i = exact; i < s->n && at < n; i++)
    at += (size_t)snprintf(buf + at, n - at, "%s%" PRIu64,
                           i == (uint32_t)exact ? "" : i + 1 == s->n ? " or " : ", ",
                           s->v[i]);
  if (at < n)
    snprintf(buf + at, n - at, " bytes on average (the merged inputs differ%s): "
                               "counts, sizes and lifetimes are estimates",
             exact ? "; some recorded every allocation" : "");
  return buf;
}

const char *rpt_uninstrumented_note(const mp_profile *p) {
  return p->uninstrumented ? "Not instrumented (preloaded): no access counts; "
                             "no hot/cold verdicts"
                           : NULL;
}

void rpt_json_notes(const mp_profile *p, mp_buf *out, const char *open,
                    const char *close) {
  char note[RPT_NOTE_SIZE];
  const char *n[2] = {rpt_sampled_note(p, note, sizeof note),
                      rpt_uninstrumented_note(p)};
  for (int i = 0, k = 0; i < 2; i++) {
    if (!n[i]) continue;
    mp_buf_printf(out, "%s", k++ ? "; " : open);
    rpt_json_str(out, n[i]);
  }
  if (n[0] || n[1]) mp_buf_printf(out, "%s", close);
}

/* Most inputs first, ties by path: the same order whether the inputs
 * were raw profiles or a merge of them. */
static int by_inputs(const void *a, const void *b) {
  const mp_program *x = *(const mp_program *const *)a, *y = *(const mp_program *const *)b;
  if (x->inputs != y->inputs) return x->inputs < y->inputs ? 1 : -1;
  return strcmp(x->path, y->path);
}

size_t rpt_programs(const mp_profile *p, mp_buf *out, int json) {
  size_t n = p->n_programs;
  if (!n) return 0;
  const mp_program **v = mp_xmalloc(n * sizeof *v);
  for (size_t i = 0; i < n; i++) v[i] = &p->programs[i];
  qsort(v, n, sizeof *v, by_inputs);
  for (size_t i = 0; i < n && i < RPT_PROGRAMS_NAMED; i++) {
    if (i) mp_buf_printf(out, ", ");
    if (json)
      rpt_json_str(out, v[i]->path);
    else
      mp_buf_printf(out, "%s", v[i]->path);
    if (v[i]->inputs > 1) mp_buf_printf(out, " (%" PRIu32 " profiles)", v[i]->inputs);
  }
  if (n > RPT_PROGRAMS_NAMED) mp_buf_printf(out, ", and %zu more", n - RPT_PROGRAMS_NAMED);
  free(v);
  return n;
}
