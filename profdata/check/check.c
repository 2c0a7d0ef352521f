/* check.c - `memprof-profdata check` from start to end (check.h): read and
 * disassemble the binary, symbolize its allocation calls, match them to
 * the report's contexts, write the result.
 */
#include <stdlib.h>
#include <string.h>

#include "check_priv.h"

static void chk_free(chk *c) {
  for (size_t i = 0; i < c->n_sites; i++) free(c->sites[i].locs);
  if (c->ctx)
    for (size_t i = 0; i < c->r->n_ctx; i++) free(c->ctx[i].sites);
  for (size_t i = 0; c->edge_locs && i < c->calls.n_edge; i++)
    free(c->edge_locs[i]);
  free(c->edge_locs);
  free(c->edge_n);
  free(c->edge_keys);
  free(c->edge_targets);
  free(c->site_keys);
  free(c->sites);
  free(c->ctx);
  free(c->guids);
  chk_calls_free(&c->calls);
  chk_elf_close(&c->elf);
  if (c->sym) msym_free(c->sym);
}

int chk_run(rpt *r, const char *binary, const chk_run_file *run, chk_format f,
            mp_buf *out, mp_err *err) {
  chk c;
  memset(&c, 0, sizeof c);
  c.r = r;
  c.binary = binary;
  c.run = run;
  int rc = -1;
  if (chk_elf_open(binary, &c.elf, err) != 0) goto done;
  if (chk_disasm(&c.elf, &c.calls, err) != 0) goto done;
  c.sym = msym_new();
  if (msym_add_binary(c.sym, binary, err) != 0) goto done;
  if (chk_match(&c, err) != 0) goto done;
  if (run) chk_join_run(&c);
  if (f == CHK_JSON)
    chk_write_json(&c, out);
  else
    chk_write_text(&c, out);
  rc = 0;
done:
  chk_free(&c);
  return rc;
}
