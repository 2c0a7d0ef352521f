/* rt_unwind.c - the rules of return addresses for the stack walk
 * (rt_unwind.h): a per-PC cache of packed rules, and their evaluation on a
 * miss, by the module's unwind tables (rt_cfi.c).
 *
 * A PC's module comes from glibc's _dl_find_object (2.35 on), the lookup
 * glibc made for unwinders: lock-free and async-signal-safe, and current
 * across dlopen and dlclose, libc's own loads (NSS, iconv) included.  So
 * the runtime keeps no module table that could go stale, and nothing on
 * the malloc path takes the loader's lock (dl_iterate_phdr would).  It is
 * looked up with dlsym when the lifecycle is installed; without it the
 * walk stays on frame pointers.
 *
 * _dl_find_object gives the module's mapping start and its PT_GNU_EH_FRAME
 * (.eh_frame_hdr).  The segment that holds it, which bounds every read of
 * the tables, comes from the program headers, read from the ELF header at
 * the mapping start (the first page of the first loaded segment).
 *
 * Caching: a rule depends only on the module's code, so it is kept, in the
 * rule cache and in traces, until a dlclose: this file's interceptor
 * empties both after the real one, since another module may be mapped
 * there next (it sees the program's calls when the runtime is preloaded,
 * and the executable's own when it is linked in).  The rules of PCs in no
 * module (code generated at run time) are not kept, since a module may be
 * loaded there later, nor are rules that do not pack into 17 bits (frames
 * over 16 KiB, unusual save slots): those are evaluated each time. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include "rt_unwind.h"
#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_libc.h"
#include "runtime/base/rt_state.h"
#include "runtime/base/rt_sys.h"

uint64_t rt_unwind_cache[1u << RT_UNWIND_SETS_LOG][2];
uint64_t rt_unwind_traces[1u << RT_TRACE_ROWS_LOG][RT_TRACE_LEN];
int rt_unwind_on;

/* glibc's struct dl_find_object on x86-64, spelled out so that the runtime
 * also builds against headers older than 2.35 (it finds the function at
 * run time). */
typedef struct found_object {
  unsigned long long flags;
  void *map_start, *map_end, *link_map;
  const uint8_t *eh_frame; /* PT_GNU_EH_FRAME, NULL if none */
  unsigned long long reserved[7];
} found_object;

#ifdef DLFO_EH_SEGMENT_TYPE
_Static_assert(sizeof(found_object) == sizeof(struct dl_find_object) &&
                   __builtin_offsetof(found_object, eh_frame) ==
                       __builtin_offsetof(struct dl_find_object, dlfo_eh_frame),
               "glibc's layout");
#endif

typedef int (*find_object_fn)(void *, found_object *);
static find_object_fn find_object;

static const rt_cfa_rule fp_rule = {RT_CFA_FP, RT_RBP_SAVED, 16, -16, -8};

/* The packed form (rt_unwind_unpack's inverse): kind in bits 0-1, the
 * %rbp slot in 2-5 (0 unchanged, 15 unknown, else saved at CFA - 8 * slot),
 * CFA offset / 8 in 6-16; the return address at CFA - 8.  -1 if r does
 * not fit. */
static int64_t pack(rt_cfa_rule r) {
  if (r.kind == RT_CFA_FP || r.kind == RT_CFA_STOP)
    return r.kind;
  if (r.ra_off != -8 || r.cfa_off < 0 || r.cfa_off % 8 || r.cfa_off / 8 >= 2048)
    return -1;
  uint32_t slot = 0;
  if (r.rbp == RT_RBP_UNDEF)
    slot = 15;
  else if (r.rbp == RT_RBP_SAVED) {
    if (r.rbp_off % 8 || r.rbp_off > -8 || r.rbp_off < -8 * 14)
      return -1;
    slot = (uint32_t)(-r.rbp_off / 8);
  }
  return r.kind | slot << 2 | (uint32_t)(r.cfa_off / 8) << 6;
}

/* pc's word for rule r, 0 if it does not pack. */
static uint64_t word_of(uintptr_t pc, rt_cfa_rule r) {
  int64_t v = pack(r);
  if (v < 0 || pc >= (1ULL << 47))
    return 0;
  return (uint64_t)pc << RT_UNWIND_RULE_BITS | (uint64_t)v;
}

static void flush(uint64_t *words, size_t n) {
  for (size_t i = 0; i < n; i++)
    __atomic_store_n(&words[i], 0, __ATOMIC_RELAXED);
}

/* The loaded segment of the module at `start` that holds `hdr`, from its
 * program headers; 0 if they cannot be read. */
static int segment_of(uintptr_t start, const uint8_t *hdr, rt_cfi_module *m) {
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)start;
  if (rt_memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
      eh->e_phentsize != sizeof(Elf64_Phdr) ||
      eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > RT_PAGE)
    return 0;
  const Elf64_Phdr *ph = (const Elf64_Phdr *)(start + eh->e_phoff);
  uintptr_t lowest = UINTPTR_MAX;
  for (int i = 0; i < eh->e_phnum; i++)
    if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr < lowest)
      lowest = ph[i].p_vaddr;
  uintptr_t bias = start - rt_round_down(lowest, RT_PAGE);
  for (int i = 0; i < eh->e_phnum; i++) {
    if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_R))
      continue;
    const uint8_t *lo = (const uint8_t *)(bias + ph[i].p_vaddr);
    if (hdr >= lo && (uint64_t)(hdr - lo) < ph[i].p_filesz) {
      *m = (rt_cfi_module){hdr, lo, lo + ph[i].p_filesz};
      return 1;
    }
  }
  return 0;
}

/* pc's rule, and whether it may be cached: not for a PC in no module. */
static rt_cfa_rule evaluate(uintptr_t pc, int *cacheable) {
  found_object fo;
  find_object_fn find = __atomic_load_n(&find_object, __ATOMIC_ACQUIRE);
  *cacheable = find && find((void *)(pc - 1), &fo) == 0;
  if (!*cacheable)
    return fp_rule;
  rt_cfi_module m;
  if (fo.eh_frame && segment_of((uintptr_t)fo.map_start, fo.eh_frame, &m))
    return rt_cfi_rule(&m, pc);
  return fp_rule;
}

uint64_t rt_unwind_word_slow(uintptr_t pc) {
  int cacheable;
  uint64_t e = word_of(pc, evaluate(pc, &cacheable));
  if (!e || !cacheable)
    return 0;
  /* The newest word first, the other one kept: readers in between see one
   * of them twice or miss, both harmless. */
  uint64_t *set = rt_unwind_set(pc);
  __atomic_store_n(&set[1], __atomic_load_n(&set[0], __ATOMIC_RELAXED), __ATOMIC_RELAXED);
  __atomic_store_n(&set[0], e, __ATOMIC_RELAXED);
  return e;
}

rt_cfa_rule rt_unwind_eval(uintptr_t pc) {
  int cacheable;
  return evaluate(pc, &cacheable);
}

uintptr_t rt_unwind_exe_lo, rt_unwind_exe_hi;

/* The main executable's loaded range: dl_iterate_phdr names it first. */
static int exe_range(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  (void)arg;
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD)
      continue;
    uintptr_t a = info->dlpi_addr + ph->p_vaddr;
    if (a < lo)
      lo = a;
    if (a + ph->p_memsz > hi)
      hi = a + ph->p_memsz;
  }
  if (lo < hi) {
    rt_unwind_exe_lo = lo;
    rt_unwind_exe_hi = hi;
  }
  return 1;
}

/* unwind_tables=-1 (the default): 2 until instrumented code starts. */
static void set_mode(int instrumented) {
  int mode = rt_flags.unwind_tables;
  if (mode < 0)
    mode = instrumented ? 1 : 2;
  int usable = __atomic_load_n(&find_object, __ATOMIC_ACQUIRE) != NULL;
  __atomic_store_n(&rt_unwind_on, usable ? (mode > 2 ? 2 : mode) : 0, __ATOMIC_RELEASE);
}

void rt_unwind_init(void) {
  find_object_fn f = (find_object_fn)dlsym(RTLD_DEFAULT, "_dl_find_object");
  __atomic_store_n(&find_object, f, __ATOMIC_RELEASE);
  dl_iterate_phdr(exe_range, NULL);
  set_mode(__atomic_load_n(&rt_instrumented, __ATOMIC_RELAXED));
}

void rt_unwind_instrumented(void) { set_mode(1); }

typedef int (*dlclose_fn)(void *);

RT_EXPORT int dlclose(void *handle) {
  static dlclose_fn real;
  dlclose_fn f = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
  if (!f) {
    f = (dlclose_fn)dlsym(RTLD_NEXT, "dlclose");
    if (!f)
      return -1;
    __atomic_store_n(&real, f, __ATOMIC_RELEASE);
  }
  int r = f(handle);
  flush(&rt_unwind_cache[0][0], sizeof rt_unwind_cache / sizeof(uint64_t));
  flush(&rt_unwind_traces[0][0], sizeof rt_unwind_traces / sizeof(uint64_t));
  return r;
}
