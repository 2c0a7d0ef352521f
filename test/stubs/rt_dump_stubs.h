/* rt_dump_stubs.h - the stubs runtime/output/rt_dump.c is linked with in tests
 * (rt_dump_stubs.c): a fixed MIB table, stack depot and module list stand
 * in for the runtime's, and the bytes the dump writes are captured. */
#ifndef TEST_RT_DUMP_STUBS_H
#define TEST_RT_DUMP_STUBS_H

#include <link.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_libc.h"
#include "runtime/base/rt_state.h"
#include "runtime/base/rt_sys.h"
#include "runtime/heap/rt_heap.h"
#include "runtime/output/rt_dump.h"
#include "runtime/output/rt_output.h"
#include "runtime/output/rt_text.h"
#include "runtime/record/rt_mibtable.h"
#include "runtime/record/rt_sample.h"
#include "runtime/record/rt_stack.h"
#include "runtime/record/rt_timeline.h"

/* The table rt_mib_for_each walks: n entries in the order given (the
 * runtime's is ascending ids), each with its stack's PCs (return
 * addresses, as the depot keeps them) for rt_stack_get. */
typedef struct rt_stub_entry {
  uint32_t id;
  rt_mib_entry e;
  const uintptr_t *pcs;
  uint32_t depth;
} rt_stub_entry;
extern const rt_stub_entry *rt_stub_entries;
extern size_t rt_stub_n_entries;

/* The modules dl_iterate_phdr reports, in order. */
extern const struct dl_phdr_info *rt_stub_modules;
extern size_t rt_stub_n_modules;

/* Everything rt_output_write was given, back to back. */
extern unsigned char *rt_stub_out;
extern size_t rt_stub_out_len;
extern size_t rt_stub_writes; /* rt_output_write calls */
extern int rt_stub_write_fails; /* rt_output_write returns -1 while set */

/* How often the dump called into the table (lock, add the live blocks,
 * clear, unlock), and the reports it gave. */
extern size_t rt_stub_locks, rt_stub_unlocks, rt_stub_add_live, rt_stub_clears;
extern size_t rt_stub_reports;

#endif
