/* rt_frames.c - stacks printed as LLVM's runtime prints them, for the text
 * profile and the error reports:
 *
 *     #0 0x0000004c2a10 in operator new[](unsigned long) (/path/prog+0xc2a10)
 *     #1 0x0000004c3b7e in main /src/prog.cc:12:14
 *
 * Frame #0 is the allocation function the stack's first call site calls:
 * the recorded stacks start at the program's call site (no runtime frame is
 * ever recorded), so it is read back from that call instruction (a direct
 * call, or one through a PLT stub or a GOT slot).  An inlined call site is
 * one line per inline frame, all with its address.  Names come from
 * llvm-symbolizer (rt_llvmsym.c); without one, the function from the ELF
 * symbol table and "(module+0xoffset)".  Every address is symbolized once,
 * however many stacks share it.  From a deadly-signal handler (the loader's
 * lock may be held) frames are bare addresses. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "rt_frames.h"
#include "rt_llvmsym.h"
#include "rt_symtab.h"
#include "runtime/base/rt_libc.h"
#include "runtime/base/rt_state.h"
#include "runtime/base/rt_sys.h"
#include "runtime/record/rt_stack.h"

#define BATCH 64

/* ---- frame #0: the callee of the first call site ----------------------- */

/* Reads memory that may not be mapped without faulting. */
static int safe_read(uintptr_t addr, void *out, size_t n) {
  struct iovec local = {out, n}, remote = {(void *)addr, n};
  return rt_syscall6(SYS_process_vm_readv, rt_getpid(), (long)&local, 1, (long)&remote, 1,
                     0) == (long)n;
}

static uintptr_t read_ptr(uintptr_t addr) {
  uintptr_t v;
  return safe_read(addr, &v, sizeof v) ? v : 0;
}

static int32_t disp32(const unsigned char *p) {
  return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                   (uint32_t)p[3] << 24);
}

/* Where a PLT stub jumps: the function its GOT slot holds (bound by now:
 * the call went through it), else t itself. */
static uintptr_t through_plt(uintptr_t t) {
  unsigned char c[11];
  if (!safe_read(t, c, sizeof c))
    return t;
  size_t at = 0;
  if (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa)
    at = 4; /* endbr64 */
  if (c[at] == 0xf2)
    at++; /* bnd */
  if (at + 6 <= sizeof c && c[at] == 0xff && c[at + 1] == 0x25)
    return read_ptr(t + at + 6 + disp32(c + at + 2));
  return t;
}

/* The function called by the call instruction that ends at `ret`; 0 for an
 * indirect call through a register or anything else. */
static uintptr_t callee_of(uintptr_t ret) {
  unsigned char c[6];
  if (!safe_read(ret - 6, c, 6))
    return 0;
  if (c[1] == 0xe8) /* call rel32 */
    return through_plt(ret + disp32(c + 2));
  if (c[0] == 0xff && c[1] == 0x15) /* call *disp32(%rip) */
    return read_ptr(ret + disp32(c + 2));
  return 0;
}

/* ---- the addresses of a set of stacks ----------------------------------- */

typedef struct frame_set {
  uintptr_t *addr; /* sorted, unique */
  uint32_t *off;   /* addr[i]'s lines are text[off[i], off[i+1]) */
  size_t n, cap;
  rt_buf text; /* per line: function '\t' location '\n' */
} frame_set;

static void sift(uintptr_t *a, size_t i, size_t n) {
  for (;;) {
    size_t big = i, l = 2 * i + 1, r = l + 1;
    if (l < n && a[l] > a[big])
      big = l;
    if (r < n && a[r] > a[big])
      big = r;
    if (big == i)
      return;
    uintptr_t t = a[i];
    a[i] = a[big];
    a[big] = t;
    i = big;
  }
}

/* Heapsort, then drop repeats: no allocation, no recursion. */
static void sort_unique(frame_set *s) {
  uintptr_t *a = s->addr;
  for (size_t i = s->n / 2; i-- > 0;)
    sift(a, i, s->n);
  for (size_t end = s->n; end > 1; end--) {
    uintptr_t t = a[0];
    a[0] = a[end - 1];
    a[end - 1] = t;
    sift(a, 0, end - 1);
  }
  size_t k = 0;
  for (size_t i = 0; i < s->n; i++)
    if (!k || a[i] != a[k - 1])
      a[k++] = a[i];
  s->n = k;
}

static size_t find(const frame_set *s, uintptr_t a) {
  size_t lo = 0, hi = s->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (s->addr[mid] < a)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* ---- naming ---------------------------------------------------------------- */

typedef struct module_of {
  const char *path;
  uintptr_t offset; /* from the module's load bias, as llvm-symbolizer wants */
} module_of;

static char exe_path[4096];

static int module_at(uintptr_t a, module_of *m) {
  Dl_info info;
  struct link_map *lm = NULL;
  if (!dladdr1((void *)a, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
    return 0;
  m->path = lm->l_name;
  if (!m->path || !m->path[0]) {
    if (!exe_path[0]) {
      long n = rt_syscall(SYS_readlink, "/proc/self/exe", exe_path, sizeof exe_path - 1);
      exe_path[n > 0 ? n : 0] = 0;
    }
    m->path = exe_path;
  }
  m->offset = a - lm->l_addr;
  return m->path[0] != 0;
}

static void put_module(rt_buf *b, const module_of *m) {
  char tmp[64];
  rt_buf_append(b, "(", 1);
  rt_buf_append(b, m->path, rt_strlen(m->path));
  rt_buf_append(b, tmp, rt_format(tmp, sizeof tmp, "+0x%lx)", (unsigned long)m->offset));
}

/* One inline frame of an llvm-symbolizer answer: "func\nfile:line:col\n". */
static void put_answer_frame(rt_buf *b, const char *fn, size_t fn_len, const char *loc,
                             size_t loc_len, const module_of *m) {
  if (!(fn_len == 2 && fn[0] == '?' && fn[1] == '?'))
    rt_buf_append(b, fn, fn_len);
  rt_buf_append(b, "\t", 1);
  /* file:line:col, each number dropped when 0, as LLVM prints them */
  size_t colon2 = loc_len, colon1 = loc_len;
  for (size_t i = loc_len; i-- > 0;)
    if (loc[i] == ':') {
      if (colon2 == loc_len)
        colon2 = i;
      else {
        colon1 = i;
        break;
      }
    }
  int known = colon1 < colon2 && !(colon1 == 2 && loc[0] == '?' && loc[1] == '?');
  if (!known) {
    put_module(b, m);
  } else {
    const char *line = loc + colon1 + 1, *col = loc + colon2 + 1;
    size_t line_len = colon2 - colon1 - 1, col_len = loc_len - colon2 - 1;
    rt_buf_append(b, loc, colon1);
    if (!(line_len == 1 && line[0] == '0')) {
      rt_buf_append(b, loc + colon1, 1 + line_len);
      if (!(col_len == 1 && col[0] == '0'))
        rt_buf_append(b, loc + colon2, 1 + col_len);
    }
  }
  rt_buf_append(b, "\n", 1);
}

/* Appends the lines of addr[first..first+k) from their answers. */
static void take_answers(frame_set *s, size_t first, size_t k, const int *asked,
                         const module_of *mods, const rt_buf *ans) {
  size_t pos = 0;
  for (size_t i = first; i < first + k; i++) {
    s->off[i] = (uint32_t)s->text.len;
    if (!asked[i - first])
      continue;
    for (;;) { /* pairs of lines up to an empty one */
      size_t fn = pos;
      while (pos < ans->len && ans->p[pos] != '\n')
        pos++;
      size_t fn_len = pos - fn;
      pos++;
      if (!fn_len || pos >= ans->len)
        break;
      size_t loc = pos;
      while (pos < ans->len && ans->p[pos] != '\n')
        pos++;
      put_answer_frame(&s->text, ans->p + fn, fn_len, ans->p + loc, pos - loc,
                       &mods[i - first]);
      pos++;
    }
  }
}

static void name_with_symtab(frame_set *s, size_t i) {
  s->off[i] = (uint32_t)s->text.len;
  module_of m;
  const char *mod;
  uintptr_t off;
  const char *fn = rt_symbolize(s->addr[i], &mod, &off);
  if (fn)
    rt_buf_append(&s->text, fn, rt_strlen(fn));
  rt_buf_append(&s->text, "\t", 1);
  if (module_at(s->addr[i], &m))
    put_module(&s->text, &m);
  rt_buf_append(&s->text, "\n", 1);
}

static void name_all(frame_set *s) {
  rt_llvmsym sym = {0};
  int live = rt_llvmsym_start(&sym);
  rt_buf ans = {0};
  module_of mods[BATCH];
  int asked[BATCH];
  for (size_t first = 0; first < s->n; first += BATCH) {
    size_t k = s->n - first < BATCH ? s->n - first : BATCH;
    ans.len = 0;
    for (size_t j = 0; live && j < k; j++) {
      asked[j] = module_at(s->addr[first + j], &mods[j]);
      if (asked[j])
        rt_llvmsym_query(&sym, mods[j].path, mods[j].offset);
    }
    if (live && rt_llvmsym_answers(&sym, &ans)) {
      take_answers(s, first, k, asked, mods, &ans);
      continue;
    }
    live = 0;
    for (size_t j = 0; j < k; j++)
      name_with_symtab(s, first + j);
  }
  s->off[s->n] = (uint32_t)s->text.len;
  rt_buf_free(&ans);
  rt_llvmsym_free(&sym);
}

/* ---- printing ------------------------------------------------------------------ */

/* "    #n 0xaddr in func location" for each inline frame of a; returns the
 * next frame number. */
static uint32_t put_frame(rt_buf *b, const frame_set *s, uint32_t n, uintptr_t a) {
  char head[64];
  size_t i = s->off ? find(s, a) : s->n;
  if (i == s->n || s->addr[i] != a || s->off[i] == s->off[i + 1]) {
    rt_buf_append(b, head, rt_format(head, sizeof head, "    #%u 0x%012lx\n", n, (unsigned long)a));
    return n + 1;
  }
  const char *p = s->text.p + s->off[i], *end = s->text.p + s->off[i + 1];
  while (p < end) {
    const char *tab = p, *nl;
    while (*tab != '\t')
      tab++;
    for (nl = tab; *nl != '\n'; nl++)
      ;
    rt_buf_append(b, head, rt_format(head, sizeof head, "    #%u 0x%012lx", n++, (unsigned long)a));
    if (tab > p) {
      rt_buf_append(b, " in ", 4);
      rt_buf_append(b, p, (size_t)(tab - p));
    }
    if (nl > tab + 1) {
      rt_buf_append(b, " ", 1);
      rt_buf_append(b, tab + 1, (size_t)(nl - tab - 1));
    }
    rt_buf_append(b, "\n", 1);
    p = nl + 1;
  }
  return n;
}

static void put_stack(rt_buf *b, const frame_set *s, const uintptr_t *pcs, uint32_t k) {
  uint32_t n = 0;
  uintptr_t callee = k && !rt_nonblocking ? callee_of(pcs[0]) : 0;
  if (callee)
    n = put_frame(b, s, n, callee);
  for (uint32_t i = 0; i < k; i++)
    n = put_frame(b, s, n, pcs[i] - 1); /* return address - 1: inside the call */
}

/* Gathers and names the frames of stacks ids[0..n) (or of pcs[0..k) when
 * ids is NULL); 0 if there is no memory for it. */
static int collect(frame_set *s, const uint32_t *ids, size_t n, const uintptr_t *pcs,
                   uint32_t k) {
  rt_memset(s, 0, sizeof *s);
  if (rt_nonblocking)
    return 1;
  size_t total = ids ? 0 : k + 1;
  for (size_t i = 0; ids && i < n; i++)
    total += rt_stack_depth(ids[i]) + 1;
  s->cap = rt_round_up((total + 1) * (sizeof(uintptr_t) + sizeof(uint32_t)), RT_PAGE);
  s->addr = rt_mmap_anon(s->cap, 0);
  if (!s->addr)
    return 0;
  s->off = (uint32_t *)(s->addr + total + 1);
  uintptr_t buf[RT_MAX_STACK];
  for (size_t i = 0; i < (ids ? n : 1); i++) {
    const uintptr_t *p = ids ? buf : pcs;
    uint32_t m = ids ? rt_stack_get(ids[i], buf) : k;
    uintptr_t callee = m ? callee_of(p[0]) : 0;
    if (callee)
      s->addr[s->n++] = callee;
    for (uint32_t j = 0; j < m; j++)
      s->addr[s->n++] = p[j] - 1;
  }
  sort_unique(s);
  name_all(s);
  return 1;
}

static void release(frame_set *s) {
  if (s->addr)
    rt_munmap(s->addr, s->cap);
  rt_buf_free(&s->text);
}

void rt_frames_print_ids(rt_buf *b, const uint32_t *ids, size_t n) {
  frame_set s;
  int named = collect(&s, ids, n, NULL, 0);
  uintptr_t pcs[RT_MAX_STACK];
  for (size_t i = 0; i < n; i++) {
    rt_buf_printf(b, "Stack for id %u:\n", ids[i]);
    uint32_t k = rt_stack_get(ids[i], pcs);
    put_stack(b, named ? &s : &(frame_set){0}, pcs, k);
    rt_buf_append(b, "\n", 1);
  }
  release(&s);
}

void rt_frames_print_pcs(rt_buf *b, const uintptr_t *pcs, uint32_t k, rt_buf *where) {
  frame_set s;
  int named = collect(&s, NULL, 0, pcs, k);
  put_stack(b, named ? &s : &(frame_set){0}, pcs, k);
  rt_buf_append(b, "\n", 1);
  /* The innermost frame of the first call site, as "location in function". */
  size_t i = named && k ? find(&s, pcs[0] - 1) : s.n;
  if (where && i < s.n && s.addr[i] == pcs[0] - 1) {
    const char *p = s.text.p + s.off[i], *tab = p, *nl;
    while (*tab != '\t')
      tab++;
    for (nl = tab; *nl != '\n'; nl++)
      ;
    rt_buf_append(where, tab + 1, (size_t)(nl - tab - 1));
    if (tab > p) {
      rt_buf_append(where, " in ", 4);
      rt_buf_append(where, p, (size_t)(tab - p));
    }
  }
  release(&s);
}
