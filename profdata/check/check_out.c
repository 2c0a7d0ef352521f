/* check_out.c - `check`'s result as text (people) or JSON
 * (docs/memprof-profdata.md, "check"): a summary, every context with its
 * verdict, the hints that reached it and why none cold did, and every
 * hinted call with its frames and the contexts it serves (and, with
 * --hotcold-sites, what a run served there: check_sites.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_priv.h"

typedef struct chk_sum {
  uint64_t hinted, by_class[5]; /* cold, notcold, ambiguous, hot, unknown */
  uint64_t unexplained;         /* hinted calls no context matches */
  uint64_t off_path;            /* of those, the ones on a helper's
                                   path no context reached */
  uint64_t cold_ctx, cold_bytes, cold_hinted_ctx, cold_hinted_bytes;
  uint64_t missed_ctx[CHK_R_NUM], missed_bytes[CHK_R_NUM];
} chk_sum;

static int value_class(int v) {
  return v == CHK_NO_VALUE ? 4 : v < 128 ? 0 : v < 222 ? 1 : v < 254 ? 2 : 3;
}

static const char *const CLASS[5] = {"cold", "notcold", "ambiguous", "hot",
                                     "unknown"};

const char *chk_hint_class(int value) { return CLASS[value_class(value)]; }

static void summarize(const chk *c, chk_sum *s) {
  memset(s, 0, sizeof *s);
  for (size_t i = 0; i < c->n_sites; i++) {
    const chk_site *x = &c->sites[i];
    if (x->call->kind != CHK_HINTED) continue;
    s->hinted++;
    s->by_class[value_class(x->call->value)]++;
    if (x->helper_frames) s->off_path++;
    else if (!x->n_ctx) s->unexplained++;
  }
  for (size_t i = 0; i < c->r->n_ctx; i++) {
    const rpt_ctx *rc = &c->r->ctx[i];
    if (rc->verdict != RPT_COLD) continue;
    uint64_t b = rc->mib->TotalSize;
    s->cold_ctx++;
    s->cold_bytes += b;
    if (c->ctx[i].cold_hint) {
      s->cold_hinted_ctx++;
      s->cold_hinted_bytes += b;
    } else {
      s->missed_ctx[c->ctx[i].reason]++;
      s->missed_bytes[c->ctx[i].reason] += b;
    }
  }
}

/* ---- text ------------------------------------------------------------------ */

static void text_summary(const chk *c, const chk_sum *s, mp_buf *o) {
  char h[32], h2[32];
  mp_buf_printf(o, "memprof-profdata check: %zu contexts against %s\n",
                c->r->n_ctx, c->binary);
  mp_buf_printf(o, "  hinted calls     %" PRIu64, s->hinted);
  for (int k = 0; k < 5; k++)
    if (s->by_class[k])
      mp_buf_printf(o, " %s=%" PRIu64, CLASS[k], s->by_class[k]);
  mp_buf_printf(o, "\n  cold contexts    %" PRIu64 " (%s): %" PRIu64
                " reached a cold hint (%s), %" PRIu64 " did not\n",
                s->cold_ctx, rpt_human_bytes(s->cold_bytes, h, sizeof h),
                s->cold_hinted_ctx,
                rpt_human_bytes(s->cold_hinted_bytes, h2, sizeof h2),
                s->cold_ctx - s->cold_hinted_ctx);
  for (unsigned r = 1; r < CHK_R_NUM; r++)
    if (s->missed_ctx[r])
      mp_buf_printf(o, "    %-20s %" PRIu64 " context%s, %" PRIu64 " bytes\n",
                    chk_reason_code(r), s->missed_ctx[r],
                    s->missed_ctx[r] == 1 ? "" : "s", s->missed_bytes[r]);
  mp_buf_printf(o, "  unexplained      %" PRIu64
                " hinted call%s no context of the profile reaches\n",
                s->unexplained, s->unexplained == 1 ? "" : "s");
  if (s->off_path)
    mp_buf_printf(o, "  off the paths    %" PRIu64 " hinted call%s on paths no "
                  "context reached, with a helper's hint (listed apart)\n",
                  s->off_path, s->off_path == 1 ? "" : "s");
  if (c->run) chk_text_run_summary(c, o);
  if (c->no_frames)
    mp_buf_printf(o, "  no debug info    %zu allocation call%s without "
                  "frames (build with -gmlt -fdebug-info-for-profiling)\n",
                  c->no_frames, c->no_frames == 1 ? "" : "s");
}

static void text_context(chk *c, size_t i, mp_buf *o) {
  const rpt_ctx *rc = &c->r->ctx[i];
  const chk_ctx *x = &c->ctx[i];
  char h[32], why[1200];
  mp_buf_printf(o, "\n#%zu %s (call %s) %s in %" PRIu64 " allocation%s\n",
                i, rpt_verdict_name(rc->verdict),
                rpt_verdict_name(c->r->sites[rc->site].attr),
                rpt_human_bytes(rc->mib->TotalSize, h, sizeof h),
                (uint64_t)rc->mib->AllocCount,
                rc->mib->AllocCount == 1 ? "" : "s");
  rpt_print_stack(c->r, o, rc->stack, "    ");
  for (size_t j = 0; j < x->n_sites; j++) {
    const chk_call *k = c->sites[x->sites[j]].call;
    mp_buf_printf(o, "  hint 0x%" PRIx64 " %s %d (%s)\n", k->addr, k->callee,
                  k->value, CLASS[value_class(k->value)]);
  }
  if (x->reason)
    mp_buf_printf(o, "  why: %s: %s\n", chk_reason_code(x->reason),
                  chk_reason_text(c, i, why, sizeof why));
}

static void text_call(const chk *c, const chk_site *s, mp_buf *o) {
  mp_buf_printf(o, "\n0x%" PRIx64 " %s %d (%s), ", s->call->addr,
                s->call->callee, s->call->value, CLASS[value_class(s->call->value)]);
  if (s->helper_frames) {
    char *helper = rpt_demangle(s->frames[s->helper_frames - 1].name);
    mp_buf_printf(o, "inherited from %s: its %s context #%u\n", helper,
                  rpt_verdict_name(c->r->ctx[s->helper_ctx].verdict), s->helper_ctx);
    free(helper);
  } else {
    mp_buf_printf(o, "%u context%s\n", s->n_ctx, s->n_ctx == 1 ? "" : "s");
  }
  for (size_t k = 0; k < s->n; k++) {
    char *name = rpt_demangle(s->frames[k].name);
    mp_buf_printf(o, "    %s %s:%u:%u\n", name,
                  s->frames[k].file ? s->frames[k].file : "?",
                  s->frames[k].line, s->frames[k].column);
    free(name);
  }
  if (c->run) chk_text_run(c, s, o);
}

void chk_write_text(chk *c, mp_buf *o) {
  chk_sum s;
  summarize(c, &s);
  text_summary(c, &s, o);
  mp_buf_printf(o, "\nContexts, by bytes:\n");
  uint32_t *order = rpt_order(c->r, RPT_BYTES);
  for (size_t i = 0; i < c->r->n_ctx; i++) text_context(c, order[i], o);
  free(order);
  mp_buf_printf(o, "\nHinted calls:\n");
  for (size_t i = 0; i < c->n_sites; i++)
    if (c->sites[i].call->kind == CHK_HINTED && !c->sites[i].helper_frames)
      text_call(c, &c->sites[i], o);
  if (!s.off_path) return;
  mp_buf_printf(o, "\nHinted calls on paths no context reached (a helper's "
                "hint, inlined or cloned into them):\n");
  for (size_t i = 0; i < c->n_sites; i++)
    if (c->sites[i].helper_frames) text_call(c, &c->sites[i], o);
}

/* ---- JSON ------------------------------------------------------------------- */

static void json_key_str(mp_buf *o, const char *key, const char *v) {
  mp_buf_printf(o, "\"%s\":\"", key);
  rpt_json_str(o, v ? v : "");
  mp_buf_put(o, "\"", 1);
}

static void json_summary(const chk *c, const chk_sum *s, mp_buf *o) {
  mp_buf_printf(o, "\"summary\":{\"hinted_calls\":%" PRIu64, s->hinted);
  for (int k = 0; k < 5; k++)
    mp_buf_printf(o, ",\"hinted_%s\":%" PRIu64, CLASS[k], s->by_class[k]);
  mp_buf_printf(o, ",\"unexplained_calls\":%" PRIu64 ",\"off_path_calls\":%" PRIu64
                ",\"cold_contexts\":%" PRIu64
                ",\"cold_bytes\":%" PRIu64 ",\"cold_hinted_contexts\":%" PRIu64
                ",\"cold_hinted_bytes\":%" PRIu64 ",\"cold_missed\":{",
                s->unexplained, s->off_path, s->cold_ctx, s->cold_bytes,
                s->cold_hinted_ctx,
                s->cold_hinted_bytes);
  int first = 1;
  for (unsigned r = 1; r < CHK_R_NUM; r++) {
    if (!s->missed_ctx[r]) continue;
    mp_buf_printf(o, "%s\"%s\":{\"contexts\":%" PRIu64 ",\"bytes\":%" PRIu64 "}",
                  first ? "" : ",", chk_reason_code(r), s->missed_ctx[r],
                  s->missed_bytes[r]);
    first = 0;
  }
  mp_buf_put(o, "}", 1);
  if (c->run) chk_json_run_summary(c, o);
  mp_buf_put(o, "}", 1);
}

static void json_context(chk *c, size_t i, mp_buf *o) {
  const rpt_ctx *rc = &c->r->ctx[i];
  const chk_ctx *x = &c->ctx[i];
  mp_buf_printf(o, "{\"index\":%zu,", i);
  json_key_str(o, "verdict", rpt_verdict_name(rc->verdict));
  mp_buf_put(o, ",", 1);
  json_key_str(o, "call", rpt_verdict_name(c->r->sites[rc->site].attr));
  mp_buf_printf(o, ",\"bytes\":%" PRIu64 ",\"allocs\":%" PRIu64 ",\"frames\":[",
                (uint64_t)rc->mib->TotalSize, (uint64_t)rc->mib->AllocCount);
  const uint32_t *f = mp_stack_frames(c->r->p, rc->stack);
  for (uint32_t k = 0; k < c->r->p->stacks[rc->stack].len; k++) {
    mp_buf_printf(o, "%s{", k ? "," : "");
    json_key_str(o, "function", rpt_frame_name(c->r, f[k]));
    mp_buf_put(o, ",", 1);
    json_key_str(o, "file", rpt_frame_file(c->r, f[k]));
    mp_buf_printf(o, ",\"line\":%u,\"column\":%u,\"line_offset\":%u}",
                  rpt_frame_line(c->r, f[k]), rpt_frame_column(c->r, f[k]),
                  c->r->p->frames[f[k]].line_offset);
  }
  mp_buf_printf(o, "],\"hints\":[");
  for (size_t j = 0; j < x->n_sites; j++) {
    const chk_call *k = c->sites[x->sites[j]].call;
    mp_buf_printf(o, "%s{\"address\":%" PRIu64 ",\"value\":%d}", j ? "," : "",
                  k->addr, k->value);
  }
  mp_buf_put(o, "]", 1);
  if (x->reason) {
    char why[1200];
    mp_buf_put(o, ",", 1);
    json_key_str(o, "reason", chk_reason_code(x->reason));
    mp_buf_put(o, ",", 1);
    json_key_str(o, "why", chk_reason_text(c, i, why, sizeof why));
  }
  mp_buf_put(o, "}", 1);
}

static void json_call(const chk *c, size_t i, mp_buf *o) {
  const chk_site *s = &c->sites[i];
  const chk_sym *fn = chk_elf_func_at(&c->elf, s->call->addr);
  mp_buf_printf(o, "{\"address\":%" PRIu64 ",\"value\":%d,", s->call->addr,
                s->call->value);
  json_key_str(o, "callee", s->call->callee);
  mp_buf_put(o, ",", 1);
  json_key_str(o, "symbol", fn ? fn->name : NULL);
  mp_buf_printf(o, ",\"frames\":[");
  for (size_t k = 0; k < s->n; k++) {
    mp_buf_printf(o, "%s{", k ? "," : "");
    json_key_str(o, "function", s->frames[k].name);
    mp_buf_put(o, ",", 1);
    json_key_str(o, "file", s->frames[k].file);
    mp_buf_printf(o, ",\"line\":%u,\"column\":%u,\"line_offset\":%u}",
                  s->frames[k].line, s->frames[k].column, s->locs[k].line_offset);
  }
  mp_buf_printf(o, "],\"contexts\":[");
  int first = 1;
  for (size_t k = 0; k < c->r->n_ctx; k++)
    for (size_t j = 0; j < c->ctx[k].n_sites; j++)
      if (c->ctx[k].sites[j] == i) {
        mp_buf_printf(o, "%s%zu", first ? "" : ",", k);
        first = 0;
      }
  mp_buf_put(o, "]", 1);
  if (s->helper_frames) {
    mp_buf_printf(o, ",\"off_path\":{");
    json_key_str(o, "helper", s->frames[s->helper_frames - 1].name);
    mp_buf_printf(o, ",\"helper_frames\":%u,\"context\":%u,", s->helper_frames,
                  s->helper_ctx);
    json_key_str(o, "verdict", rpt_verdict_name(c->r->ctx[s->helper_ctx].verdict));
    mp_buf_put(o, "}", 1);
  }
  if (c->run) chk_json_run(c, s, o);
  mp_buf_put(o, "}", 1);
}

void chk_write_json(chk *c, mp_buf *o) {
  chk_sum s;
  summarize(c, &s);
  mp_buf_printf(o, "{\"binary\":\"");
  rpt_json_str(o, c->binary);
  mp_buf_printf(o, "\",");
  json_summary(c, &s, o);
  mp_buf_printf(o, ",\n\"contexts\":[");
  for (size_t i = 0; i < c->r->n_ctx; i++) {
    mp_buf_printf(o, "%s\n", i ? "," : "");
    json_context(c, i, o);
  }
  mp_buf_printf(o, "],\n\"calls\":[");
  int first = 1;
  for (size_t i = 0; i < c->n_sites; i++) {
    if (c->sites[i].call->kind != CHK_HINTED) continue;
    mp_buf_printf(o, "%s\n", first ? "" : ",");
    json_call(c, i, o);
    first = 0;
  }
  mp_buf_printf(o, "]}\n");
}
