/* check_leaf.c - the raw reader's leaf probe (profdata/raw/raw.h,
 * mp_raw_leaf_probe): whether the call a context's leaf PC returns from
 * calls a function that is not an allocation function.
 *
 * A profiled allocation's leaf PC is the return address of the call that
 * reached the allocator.  When that call is of some other function, the
 * allocation was made inside that function, which reached operator new
 * (or malloc) by a tail jump: its frame never was on the stack.
 * libstdc++'s basic_string::_M_create is such a function (`jmp
 * operator new`), called from every program that builds a long string,
 * as is any wrapper compiled to `jmp _Znwm`.  clang matches the profile
 * to calls of operator new, so it gives such a context nothing at the
 * call where its leaf frame is: the report counts it as a call clang
 * cannot match, as it counts an allocation inside a library.
 *
 * The call before the address is decoded with capstone (check_disasm.c's
 * chk_call_before) in the binary's own bytes, its target named by the
 * binary's symbols or PLT entries, and judged by chk_alloc_kind, the rule
 * `check` uses for the optimized binary's calls.  Each binary is opened
 * once, when a leaf of it is first asked about.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "check_priv.h"

typedef struct leaf_module {
  const msym_module *m;
  chk_elf elf;
  chk_caller *caller; /* NULL: the binary could not be read */
} leaf_module;

struct chk_leaf_probe {
  leaf_module *mods;
  size_t n_mods, cap_mods;
};

chk_leaf_probe *chk_leaf_probe_new(void) {
  return mp_xcalloc(1, sizeof(chk_leaf_probe));
}

void chk_leaf_probe_free(chk_leaf_probe *p) {
  if (!p) return;
  for (size_t i = 0; i < p->n_mods; i++) {
    chk_caller_close(p->mods[i].caller);
    if (p->mods[i].elf.priv) chk_elf_close(&p->mods[i].elf);
  }
  free(p->mods);
  free(p);
}

static leaf_module *module_of(chk_leaf_probe *p, const msym_module *m) {
  for (size_t i = 0; i < p->n_mods; i++)
    if (p->mods[i].m == m) return &p->mods[i];
  MP_VEC_RESERVE(p->mods, p->cap_mods, p->n_mods + 1);
  leaf_module *x = &p->mods[p->n_mods++];
  memset(x, 0, sizeof *x);
  x->m = m;
  mp_err err;
  if (chk_elf_open(m->path, &x->elf, &err) == 0)
    x->caller = chk_caller_open(&x->elf, &err);
  return x;
}

/* `vaddr` is the leaf PC as the runtime records it: the return address
 * minus one. */
int chk_leaf_calls_other(void *ctx, const msym_module *m, uint64_t vaddr) {
  leaf_module *x = module_of(ctx, m);
  chk_call call;
  if (!x->caller || !chk_call_before(x->caller, vaddr + 1, &call)) return 0;
  return call.callee && call.kind == CHK_OTHER;
}
