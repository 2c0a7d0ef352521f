/* rt_dump_stubs.c - what runtime/output/rt_dump.c calls in the rest of the
 * runtime, stubbed so that the raw writer can be compiled alone into a test
 * (test/unit/runtime/test_rt_dump.c): the MIB table and the stack depot are arrays
 * the test fills, dl_iterate_phdr reports the test's modules (the test's
 * build renames the writer's calls of it to this definition, leaving
 * libc's alone), and the output is appended to a buffer. */
#define _GNU_SOURCE /* strchrnul, for the runtime's libc table */
#include "rt_dump_stubs.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

const rt_stub_entry *rt_stub_entries;
size_t rt_stub_n_entries;
const struct dl_phdr_info *rt_stub_modules;
size_t rt_stub_n_modules;
unsigned char *rt_stub_out;
size_t rt_stub_out_len, rt_stub_writes;
int rt_stub_write_fails;
size_t rt_stub_locks, rt_stub_unlocks, rt_stub_add_live, rt_stub_clears;
size_t rt_stub_reports;

int rt_inited = 1;
__thread int rt_nonblocking;
__thread int rt_locks_held;
uint64_t rt_mib_parked;
int rt_profile_failed;
rt_flags_t rt_flags = {
#define RT_FLAG(kind, name, def, desc) .name = def,
#include "runtime/base/rt_flags.inc"
#undef RT_FLAG
};

int dl_iterate_phdr(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data) {
  for (size_t i = 0; i < rt_stub_n_modules; i++) {
    struct dl_phdr_info info = rt_stub_modules[i];
    int r = cb(&info, sizeof info, data);
    if (r) return r;
  }
  return 0;
}

void rt_mib_for_each(void (*cb)(uint32_t id, const rt_mib_entry *, void *), void *ctx) {
  for (size_t i = 0; i < rt_stub_n_entries; i++)
    cb(rt_stub_entries[i].id, &rt_stub_entries[i].e, ctx);
}

static const rt_stub_entry *entry_of(uint32_t id) {
  for (size_t i = 0; i < rt_stub_n_entries; i++)
    if (rt_stub_entries[i].id == id) return &rt_stub_entries[i];
  return NULL;
}

uint32_t rt_stack_depth(uint32_t id) {
  const rt_stub_entry *e = entry_of(id);
  return e ? e->depth : 0;
}

uint32_t rt_stack_get(uint32_t id, uintptr_t *pcs) {
  const rt_stub_entry *e = entry_of(id);
  if (!e) return 0;
  memcpy(pcs, e->pcs, e->depth * sizeof *pcs);
  return e->depth;
}

int rt_output_write(const void *buf, size_t n) {
  rt_stub_writes++;
  if (rt_stub_write_fails) return -1;
  rt_stub_out = realloc(rt_stub_out, rt_stub_out_len + n);
  memcpy(rt_stub_out + rt_stub_out_len, buf, n);
  rt_stub_out_len += n;
  return 0;
}

void *rt_mmap_anon(size_t len, int noreserve) {
  (void)noreserve;
  void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

void rt_munmap(void *p, size_t len) { munmap(p, len); }

void rt_mib_lock_all(void) { rt_stub_locks++; }
int rt_mib_trylock_all(void) { return ++rt_stub_locks, 1; }
void rt_mib_unlock_all(void) { rt_stub_unlocks++; }
void rt_mib_add_all_live(rt_block_walk *walk) {
  (void)walk;
  rt_stub_add_live++;
}
void rt_heap_for_each_live(void (*cb)(const rt_block *, void *), void *ctx) {
  (void)cb;
  (void)ctx;
}
void rt_mib_clear(void) { rt_stub_clears++; }

void rt_report(const char *fmt, ...) {
  (void)fmt;
  rt_stub_reports++;
}

/* Text dumps are not what this stub serves. */
void rt_print_module_map(int to_stderr) { (void)to_stderr; }
void rt_text_mibs(rt_text *t, int terse, const mpf_raw_note *note) {
  (void)t;
  (void)terse;
  (void)note;
}
void rt_text_stacks(rt_text *t) { (void)t; }
void rt_text_free(rt_text *t) { (void)t; }

/* The dump's locks are never contended here. */
void rt_mutex_lock_slow(rt_mutex *m) { (void)m; abort(); }
int rt_futex(int *addr, int op, int val) {
  (void)addr;
  (void)op;
  (void)val;
  return 0;
}

/* The runtime's byte/string helpers call through this table (rt_internal.h);
 * here it points at libc's functions of the same names. */
rt_libc_fns rt_libc = {
#define RT_LIBC_FN(name, ret, args) .name = name,
#include "runtime/base/rt_libc_fns.inc"
#undef RT_LIBC_FN
};

/* No timeline here (timeline=0): the dump never writes one. */
int rt_timeline_on;
int rt_output_file(char *path, size_t cap, uint64_t *size) {
  (void)path;
  (void)cap;
  (void)size;
  abort();
}
void rt_timeline_write(const char *raw_path, uint64_t raw_bytes) {
  (void)raw_path;
  (void)raw_bytes;
  abort();
}

/* An instrumented program profiled without sampling: the dump writes no
 * note after the stacks. */
uint64_t rt_sample_interval;
int rt_instrumented = 1;

/* roots=1 is off in these tests: the census is never taken. */
int rt_roots_at_exit;
void rt_roots_census(int kind) { (void)kind; }
void rt_roots_write(const char *raw_path, uint64_t raw_bytes) {
  (void)raw_path;
  (void)raw_bytes;
}
