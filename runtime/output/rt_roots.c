/* rt_roots.c - the roots census (roots=1): the live heap scanned
 * conservatively from its roots, as LeakSanitizer does.  Any 8-byte
 * aligned word that points into a live block, at its start or inside it,
 * keeps the block, and reached blocks are scanned in turn.
 *
 * A census: the modules' writable segments and symbols are listed and the
 * thread-TLS lookup done before anything else (both may take the loader's
 * lock); then the other threads are stopped (rt_roots_stop.c,
 * roots_stop_threads: each where it holds no runtime lock, so that the
 * census never waits for a stopped thread); then, with the MIB table's
 * locks held (frees wait, so no block is given back while it is read),
 * the live blocks are listed (rt_roots_mark.c), the roots found in this
 * order: the named roots, the modules' data (rt_roots_modules.c), the
 * threads (rt_roots_threads.c), the blocks marked; the threads are let
 * go, and the census encoded for the file (rt_roots_file.c).  Censuses
 * are taken one at a time, never from a signal handler that interrupted
 * the runtime or a census.
 *
 * With roots_stop_threads=0, allocations other threads make during a
 * census are not seen, and their registers are not read:
 * docs/roots-format.md says what that means for the figures. */
#include "rt_roots.h"
#include "rt_roots_priv.h"
#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_ialloc.h"
#include "runtime/base/rt_libc.h"
#include "runtime/base/rt_lock.h"
#include "runtime/base/rt_state.h"
#include "runtime/base/rt_sys.h"
#include "runtime/heap/rt_live_high.h"
#include "runtime/record/rt_mibtable.h"
#include "runtime/record/rt_sample.h"
#include "runtime/record/rt_stack.h"
#include "runtime/record/rt_threads.h"

#define MAX_NAMED 1024
#define NAMED_LEN 128

int rt_roots_at_exit;
static rt_mutex census_mu = RT_MUTEX_INIT;
static __thread int in_census __attribute__((tls_model("initial-exec")));

static uint64_t at_high(void *just_allocated, uint64_t live);

void rt_roots_init(void) {
  if (!rt_flags.roots)
    return;
  if (rt_sample_interval && rt_flags.unsampled_to_libc) {
    rt_report("WARNING: roots=1 is ignored with sample_interval and unsampled_to_libc=1: "
              "the C library serves the unrecorded blocks and the scan cannot see them "
              "(add unsampled_to_libc=0, or leave sampling off)");
    rt_flags.roots = 0;
    return;
  }
  uintptr_t bottom = 0, top = rt_thread_stack_bounds(&bottom);
  if (top && rt_gettid() == rt_getpid())
    rt_threads_enter(bottom, top);
  rr_stop_init();
  rt_heap_watch_high((uint64_t)rt_flags.roots_peak_step_kb << 10, at_high);
}

/* ---- named roots ----------------------------------------------------------- */

typedef struct named_root {
  const void *ptr;
  char name[NAMED_LEN];
} named_root;

static named_root named[MAX_NAMED];
static int n_named;
static rt_mutex named_mu = RT_MUTEX_INIT;

/* Counted as a runtime lock: a thread that holds it is not stopped (the
 * census takes it while the others are stopped). */
static void named_lock(void) {
  rt_locks_enter();
  rt_mutex_lock(&named_mu);
}

static void named_unlock(void) {
  rt_mutex_unlock(&named_mu);
  rt_locks_leave();
}

void rt_roots_add_named(const char *name, const void *ptr) {
  if (!rt_flags.roots || !ptr)
    return;
  named_lock();
  int i = 0;
  while (i < n_named && named[i].ptr != ptr)
    i++;
  if (i == n_named && n_named < MAX_NAMED)
    n_named++;
  if (i < n_named) {
    size_t k = name ? rt_strnlen(name, NAMED_LEN - 1) : 0;
    named[i].ptr = ptr;
    rt_memcpy(named[i].name, name ? name : "", k);
    named[i].name[k] = 0;
  } else {
    rt_report("WARNING: more than %d named roots: %s is left out", MAX_NAMED,
              name ? name : "(null)");
  }
  named_unlock();
}

void rt_roots_remove_named(const void *ptr) {
  if (!rt_flags.roots)
    return;
  named_lock();
  for (int i = 0; i < n_named; i++)
    if (named[i].ptr == ptr) {
      named[i] = named[--n_named];
      break;
    }
  named_unlock();
}

static void named_scan(rr_census *c) {
  named_lock();
  for (int i = 0; i < n_named; i++) {
    int64_t j = rr_find(c, (uintptr_t)named[i].ptr);
    if (j < 0)
      continue;
    rr_root_begin(c, RR_NAMED, 0, 0, 0, rr_str(c, named[i].name, rt_strlen(named[i].name)));
    rr_target(c, j);
    c->blk[j].flags |= RR_TARGET;
    rr_root_end(c);
  }
  named_unlock();
}

/* ---- the census ---------------------------------------------------------- */

/* Returns the census's live bytes, 0 when it is left out. */
static uint64_t take(int kind, const rt_roots_from *from) {
  rr_threads_prepare();
  rr_modules *ms = rr_modules_list();
  rr_census c = {0};
  uint64_t seen = 0;
  int ok = 0;
  rr_stop_stats st;
  in_census = 1;
  rr_str(&c, "", 0); /* offset 0: no name */
  rr_stop_world(&st);
  rt_mib_lock_all();
  if (rr_blocks_collect(&c) == 0) {
    int64_t held[RT_EXITED_MAX];
    int n_held = rr_exited_dtvs(&c, held, RT_EXITED_MAX);
    named_scan(&c);
    rr_modules_scan(&c, ms, held, n_held);
    rr_threads_scan(&c, from->regs, 7, from->frame);
    ok = !c.failed && !c.roots.failed && !c.targets.failed && rr_mark(&c) == 0;
  }
  rr_release_world(&st);
  if (ok)
    seen = rt_roots_keep(&c, kind) ? 0 : c.heap_bytes;
  else
    rt_report("ERROR: the roots census ran out of memory: it is left out");
  rt_mib_unlock_all();
  rr_bands_free(&c);
  in_census = 0;
  rr_blocks_free(&c);
  rr_vec_free(&c.roots, sizeof(rr_root));
  rr_vec_free(&c.targets, sizeof(uint32_t));
  rr_vec_free(&c.strs, 1);
  rr_vec_free(&c.modules, sizeof(uint64_t));
  rr_modules_free(ms);
  return seen;
}

__thread rt_roots_from rt_roots_entry;

void rt_roots_census(int kind) {
  if (!rt_flags.roots || !rt_inited)
    return;
  rt_roots_from from = rt_roots_entry;
  rt_roots_entry.frame = 0;
  if (!from.frame) /* no entry point said: from here */
    from.frame = (uintptr_t)__builtin_frame_address(0);
  if (in_census || rt_mib_thread_locked()) {
    rt_report("WARNING: a roots census asked for by a signal handler that interrupted "
              "the runtime is left out");
    return;
  }
  rt_mutex_lock(&census_mu);
  take(kind, &from);
  rt_mutex_unlock(&census_mu);
}

/* The heap's watcher (roots_peak_step_kb): a census from the allocation
 * that took the live heap past its last high by the step.  Its stack is
 * scanned from here up (the allocation path's frames hold what the
 * program kept in callee-saved registers), the new block counts as held
 * by the thread (the return value), and nothing is done when this thread
 * holds a runtime lock (a signal handler's allocation) or another census
 * runs: the next allocation asks again. */
static uint64_t at_high(void *just_allocated, uint64_t live) {
  if (!rt_inited || in_census || rt_mib_thread_locked() || !rt_mutex_trylock(&census_mu))
    return 0;
  rt_roots_from from;
  RT_ROOTS_SAVE(&from);
  from.regs[6] = (uintptr_t)just_allocated;
  uint64_t seen = take(RT_ROOTS_AT_HIGH, &from);
  rt_mutex_unlock(&census_mu);
  return seen ? seen : live; /* out of memory: not again at once */
}

/* The child's only thread is the one that forked: a census another
 * thread was taking is not the child's. */
void rt_roots_fork_child(void) {
  rt_mutex_reset(&census_mu);
  rt_mutex_reset(&named_mu);
  rr_stop_fork_child();
}
