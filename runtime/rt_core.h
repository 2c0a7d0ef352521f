/* rt_core.h - declarations shared by the files of the profiling core
 * (shadow, heap, stacks, MIB table, dump, flags, output, lifecycle).
 * The contract with the public entry points is rt_internal.h; this header
 * is internal to the core. */
#ifndef MEMPROF_RT_CORE_H
#define MEMPROF_RT_CORE_H

#include "memprof_format.h"
#include "rt_internal.h"
#include "rt_lock.h"
#include "rt_sys.h"

/* Set on the thread dumping from a deadly-signal handler: every runtime
 * lock is then only try-locked (the crashed code may hold it). */
RT_HIDDEN extern __thread int rt_nonblocking __attribute__((tls_model("initial-exec")));

/* Runtime locks this thread holds or is taking, stripes of the MIB table
 * aside (rt_mibtable.c counts those).  malloc and free may run in a signal
 * handler that interrupted its own thread inside the runtime; deadlock is
 * ruled out by three rules: code that holds a lock never blocks on a MIB
 * stripe; a handler never takes a lock its own thread holds (each lock's
 * owner knows: the heap's busy flag and class bits (rt_heap_priv.h), rt_ialloc.c,
 * rt_large.c); and a thread that holds a lock only tries the heap's
 * central locks (rt_heap_central.c's lock_central): two handlers, each waiting for
 * the class lock the other's interrupted code held, deadlocked.  The
 * ialloc and large-block locks still block; a cycle through them needs a
 * handler's large malloc or histogram while another thread's handler
 * waits on the lock this one's code holds. */
RT_HIDDEN extern __thread int rt_locks_held __attribute__((tls_model("initial-exec")));
/* Nonzero while handlers' MIBs wait on the parked list (rt_mibtable.c):
 * they are merged by the next thread that holds no lock any more. */
RT_HIDDEN extern uint64_t rt_mib_parked;
RT_HIDDEN void rt_mib_merge_parked(void);
static inline void rt_locks_enter(void) {
  rt_locks_held++;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
}
static inline void rt_locks_leave(void) {
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  if (!--rt_locks_held && RT_UNLIKELY(__atomic_load_n(&rt_mib_parked, __ATOMIC_RELAXED) != 0))
    rt_mib_merge_parked();
}

/* A leaf lock (its holder waits for no other lock): taken unless this
 * thread holds it already (*held: a signal handler that interrupted its
 * holder), and only try-locked while dying from a signal.  0 if not taken:
 * the caller does without. */
static inline int rt_leaf_lock(rt_mutex *m, int *held) {
  if (*held || (rt_nonblocking && !rt_mutex_trylock(m)))
    return 0;
  rt_locks_enter();
  *held = 1;
  if (!rt_nonblocking)
    rt_mutex_lock(m);
  return 1;
}

static inline void rt_leaf_unlock(rt_mutex *m, int *held) {
  rt_mutex_unlock(m);
  *held = 0;
  rt_locks_leave();
}

/* ---- flags (rt_flags.c; the list is rt_flags.inc) ----------------------- */
#define RT_FLAG_TYPE_BOOL int
#define RT_FLAG_TYPE_INT int
#define RT_FLAG_TYPE_STR const char * /* NULL = unset */
typedef struct rt_flags_t {
#define RT_FLAG(kind, name, def, desc) RT_FLAG_TYPE_##kind name;
#include "rt_flags.inc"
#undef RT_FLAG
} rt_flags_t;
RT_HIDDEN extern rt_flags_t rt_flags;
RT_HIDDEN void rt_flags_init(void);
/* Whether this copy is the process's malloc (rt_interpose.c). */
RT_HIDDEN int rt_serves_malloc(void);
RT_HIDDEN void rt_flags_set_log_path(const char *path);

/* ---- shadow (rt_shadow.c) ----------------------------------------------- */
RT_HIDDEN void rt_shadow_init(void);
static inline int rt_hist_mode(void) {
  return *(volatile char *)&__memprof_histogram != 0;
}
/* 64-byte cells covering the block [p, p+size) (none for size 0).  A
 * block owns these cells alone (rt_heap.c), whether or not p is 64-aligned. */
static inline uint64_t rt_block_cells(uintptr_t p, uint64_t size) {
  if (!size)
    return 0;
  return (((p + size + 63) & ~(uintptr_t)63) - (p & ~(uintptr_t)63)) / 64;
}
/* Shadow bytes of those cells: the same range in both modes
 * ([B + (p & ~63)/8, + 8 per cell)). */
RT_HIDDEN void rt_shadow_clear_block(uintptr_t p, uint64_t size);
/* The same, with blocks of one or two cells (most of them) cleared inline:
 * a call cost the allocation path more than the stores. */
static inline void rt_shadow_clear(uintptr_t p, uint64_t size) {
  uintptr_t base = __memprof_shadow_memory_dynamic_address;
  uint64_t n = rt_block_cells(p, size);
  if (RT_LIKELY(base) && RT_LIKELY(n - 1 < 2)) {
    uint64_t *c = (uint64_t *)(base + ((p & ~(uintptr_t)63) >> 3));
    __atomic_store_n(&c[0], 0, __ATOMIC_RELAXED);
    if (n == 2)
      __atomic_store_n(&c[1], 0, __ATOMIC_RELAXED);
    return;
  }
  rt_shadow_clear_block(p, size);
}
/* Give the shadow pages of a dying block back to the kernel. */
RT_HIDDEN void rt_shadow_release_block(uintptr_t p, uint64_t size);
/* Faults in the shadow of [p, p+size), already cleared, in one call. */
RT_HIDDEN void rt_shadow_populate(uintptr_t p, uint64_t size);
/* Whether any of `probes` cells spread over [p, p+len) has a count (in
 * either mode): the program has reached that range.  No TLS: the ticker
 * calls it. */
RT_HIDDEN int rt_shadow_touched(uintptr_t p, uint64_t len, int probes);
/* Access count of a block in default mode: the sum of its cells (inline:
 * the free path takes it for every block). */
static inline uint64_t rt_shadow_sum(uintptr_t p, uint64_t size) {
  uintptr_t base = __memprof_shadow_memory_dynamic_address;
  if (!base)
    return 0;
  const uint64_t *c = (const uint64_t *)(base + ((p & ~(uintptr_t)63) >> 3));
  uint64_t n = rt_block_cells(p, size);
  if (RT_LIKELY(n == 1))
    return c[0];
  uint64_t sum = 0;
  for (uint64_t i = 0; i < n; i++)
    sum += c[i];
  return sum;
}
/* Access count of a block; in histogram mode also fills hist[ceil(size/8)]. */
RT_HIDDEN uint64_t rt_shadow_count(uintptr_t p, uint64_t size, int hist_mode,
                                   uint64_t *hist);

/* ---- heap (rt_heap.c) --------------------------------------------------- */
typedef struct rt_block {
  uintptr_t p;
  uint64_t size;
  /* stack: a ref (see rt_stack_intern), or RT_UNSAMPLED (rt_sample.h) for
   * a block sampling left unrecorded: no stack, time or cpu, no entry */
  uint32_t stack, alloc_ts, alloc_cpu;
} rt_block;
/* Calls cb for every live user block, unsampled ones included (the caller
 * holds the MIB locks, so no block changes state underneath). */
RT_HIDDEN void rt_heap_for_each_live(void (*cb)(const rt_block *, void *),
                                     void *ctx);
/* Register the calling new thread's cache (rt_thread.c's trampoline). */
RT_HIDDEN void rt_heap_thread_start(void);
RT_HIDDEN void rt_heap_fork_prepare(void);
RT_HIDDEN void rt_heap_fork_parent(void);
RT_HIDDEN void rt_heap_fork_child(void);
/* The ticker's share of populating (see rt_heap_populate.c): called at every tick. */
RT_HIDDEN void rt_heap_prefault(void);
typedef struct rt_heap_stats {
  uint64_t allocated, freed, frees, mallocs, bytes_live, heap_mapped, large_mapped;
} rt_heap_stats;
RT_HIDDEN void rt_heap_get_stats(rt_heap_stats *s);
/* 1 if p is the start of a live block of ours (size 0 included). */
RT_HIDDEN int rt_heap_owns(const void *p);
/* With sampling, hands unrecorded blocks to the C library's allocator from
 * here on (rt_heap_libc.c); called once the loader may be asked. */
RT_HIDDEN void rt_heap_libc_install(void);
/* Start of the live block containing p, or NULL. */
RT_HIDDEN const void *rt_heap_block_begin(const void *p);

/* Large blocks (rt_large.c), used by rt_heap.c. */
RT_HIDDEN uintptr_t rt_large_alloc(uint64_t size, size_t align, uint32_t stack,
                                   uint32_t ts, uint32_t cpu);
/* The live large block starting at p: fills *b, returns its state word. */
RT_HIDDEN uint32_t *rt_large_find(uintptr_t p, rt_block *b);
RT_HIDDEN void rt_large_release(uintptr_t p); /* after its death is claimed */
RT_HIDDEN void rt_large_follow(void); /* on the ticker thread, each tick */
RT_HIDDEN uintptr_t rt_large_begin(uintptr_t p);
RT_HIDDEN void rt_large_for_each_live(void (*cb)(const rt_block *, void *), void *ctx);
RT_HIDDEN uint64_t rt_large_mapped(void);
/* Large blocks mapped and unmapped so far (each is one mapping), and the
 * bytes unmapped. */
RT_HIDDEN void rt_large_map_counts(uint64_t *maps, uint64_t *unmaps, uint64_t *unmapped);
RT_HIDDEN void rt_large_fork_prepare(void);
RT_HIDDEN void rt_large_fork_parent(void);
RT_HIDDEN void rt_large_fork_child(void);

/* A block is live while RT_LIVE_BIT is set in its state word; the one
 * caller that clears it (free or fork/dump bookkeeping) owns the death. */
#define RT_LIVE_BIT 0x80000000u
static inline int rt_claim_live(uint32_t *state) {
  return (__atomic_fetch_and(state, ~RT_LIVE_BIT, __ATOMIC_ACQ_REL) & RT_LIVE_BIT) != 0;
}

/* Runtime-internal memory (histograms, MIB entries, thread starts): never
 * profiled, never enumerated.  The caller passes the size back to free. */
RT_HIDDEN void *rt_ialloc(size_t n);
RT_HIDDEN void rt_ifree(void *p, size_t n);
/* Zeroed, 16-aligned, at most 64 KiB, never freed (NULL on failure). */
RT_HIDDEN void *rt_ialloc_perm(size_t n);
RT_HIDDEN void rt_ialloc_perm_init(void); /* by init: reserve the region */
/* A permanent block as a nonzero u32 ("ref"), and back: blocks are
 * RT_PERM_ALIGN-aligned offsets into one region (set up by init). */
#define RT_PERM_ALIGN 16
RT_HIDDEN extern char *rt_perm_base;
static inline uint32_t rt_perm_ref(const void *p) {
  return (uint32_t)(((const char *)p - rt_perm_base) / RT_PERM_ALIGN);
}
static inline void *rt_perm_at(uint32_t ref) {
  return rt_perm_base + (uint64_t)ref * RT_PERM_ALIGN;
}
RT_HIDDEN void rt_ialloc_fork_prepare(void);
RT_HIDDEN void rt_ialloc_fork_parent(void);
RT_HIDDEN void rt_ialloc_fork_child(void);

/* Sanitizer malloc/free hooks (rt_abi.c).  rt_hooks_maybe is 1 until init
 * has seen that the program defines no hook, and again once one is
 * installed. */
RT_HIDDEN extern int rt_hooks_maybe;
RT_HIDDEN void rt_hooks_init(void);
RT_HIDDEN void rt_run_malloc_hooks(const void *p, size_t n);
RT_HIDDEN void rt_run_free_hooks(const void *p);
static inline void rt_malloc_hooks(const void *p, size_t n) {
  if (RT_UNLIKELY(__atomic_load_n(&rt_hooks_maybe, __ATOMIC_RELAXED)))
    rt_run_malloc_hooks(p, n);
}
static inline void rt_free_hooks(const void *p) {
  if (RT_UNLIKELY(__atomic_load_n(&rt_hooks_maybe, __ATOMIC_RELAXED)))
    rt_run_free_hooks(p);
}

/* ---- stacks (rt_stack.c, rt_thread.c) ----------------------------------- */
#define RT_MAX_STACK 256
RT_HIDDEN void rt_stack_init(void); /* by init: no lazy setup under signals */
RT_HIDDEN uint32_t rt_stack_capture(rt_caller c); /* the stack's id */
/* The same in two steps, so that the allocator can do its own work while
 * the depot bucket (prefetched by the first step) comes from memory. */
#define RT_MAX_ENC (RT_MAX_STACK * 12) /* rt_stack.c's encoding at worst */
typedef struct rt_captured {
  uint64_t hash;
  uint32_t n, len;
  uint8_t enc[RT_MAX_ENC];
} rt_captured;
RT_HIDDEN uint32_t rt_stack_unwind(rt_caller c, rt_captured *cap);
/* A ref to the stack's depot node: what blocks keep (0: no stack).  It
 * gives the context's MIB entry without a load (rt_stack_entry). */
RT_HIDDEN uint32_t rt_stack_intern(const rt_captured *cap);
RT_HIDDEN uint32_t rt_stack_id(uint32_t ref);
/* The PCs of stack `id` into pcs[RT_MAX_STACK]; returns how many (0 if
 * unknown).  rt_stack_depth gives the count alone. */
RT_HIDDEN uint32_t rt_stack_get(uint32_t id, uintptr_t *pcs);
RT_HIDDEN uint32_t rt_stack_depth(uint32_t id);
RT_HIDDEN uint32_t rt_stack_max_id(void);
RT_HIDDEN void rt_stack_fork_prepare(void);
RT_HIDDEN void rt_stack_fork_parent(void);
RT_HIDDEN void rt_stack_fork_child(void);
/* Highest stack address of the calling thread (0 = unknown). */
RT_HIDDEN uintptr_t rt_thread_stack_top(void);
/* Same, also giving the lowest address frames may have. */
typedef struct rt_stack_bounds_t {
  int state; /* 0 = not looked up yet, 1 = known (top), 2 = unknown */
  uintptr_t top, bottom;
} rt_stack_bounds_t;
RT_HIDDEN extern __thread rt_stack_bounds_t rt_stack_bounds
    __attribute__((tls_model("initial-exec")));
RT_HIDDEN uintptr_t rt_thread_stack_bounds_slow(uintptr_t *bottom);
static inline uintptr_t rt_thread_stack_bounds(uintptr_t *bottom) {
  if (RT_LIKELY(rt_stack_bounds.state == 1)) {
    *bottom = rt_stack_bounds.bottom;
    return rt_stack_bounds.top;
  }
  return rt_thread_stack_bounds_slow(bottom);
}

/* ---- MIB table (rt_mibtable.c) ------------------------------------------ */
/* At free: builds the block's MIB and merges it, clearing RT_LIVE_BIT in
 * *live under the table lock.  Returns 0 if the block was not live (double free). */
RT_HIDDEN int rt_mib_on_free(const rt_block *b, uint32_t *live, uint64_t stamp);
RT_HIDDEN void rt_mib_lock_all(void);
RT_HIDDEN int rt_mib_trylock_all(void);
RT_HIDDEN void rt_mib_unlock_all(void);
RT_HIDDEN void rt_mib_reset_locks(void);
/* A context's live heap for the timeline (rt_timeline.c): now, and at the
 * last declared peak when epoch is the current peak epoch. */
typedef struct rt_timeline_ctx {
  uint64_t bytes, blocks;
  uint64_t peak_bytes, peak_blocks;
  uint64_t epoch;
} rt_timeline_ctx;
typedef struct rt_mib_entry {
  mp_mib mib;
  uint64_t *hist; /* rt_ialloc'd, AccessHistogramSize entries */
  uint32_t present;
  uint32_t est; /* sampling: ref of the weighted totals (rt_mibtable.c), 0 = none */
  rt_timeline_ctx tl; /* last: beside the depot node's head, read at intern */
} rt_mib_entry;
/* The entry of a stack ref, kept with its depot node (ref 0: stacks that
 * could not be captured or stored). */
RT_HIDDEN extern rt_mib_entry rt_no_stack_entry;
static inline rt_mib_entry *rt_stack_entry(uint32_t ref) {
  return ref ? (rt_mib_entry *)rt_perm_at(ref) : &rt_no_stack_entry;
}
/* The same by stack id; NULL for an id that names no stack. */
RT_HIDDEN rt_mib_entry *rt_stack_entry_of_id(uint32_t id);
static inline void rt_prefetch_entry(const rt_mib_entry *e) {
  const char *p = (const char *)e;
  __builtin_prefetch(p, 1);
  __builtin_prefetch(p + 64, 1);
  __builtin_prefetch(p + sizeof(*e) - 1, 1);
}
/* Iterate the present entries in id order (locks held). */
RT_HIDDEN void rt_mib_for_each(void (*cb)(uint32_t id, const rt_mib_entry *, void *),
                               void *ctx);
RT_HIDDEN void rt_mib_clear(void); /* locks held */
RT_HIDDEN void rt_mib_add_all_live(void); /* locks held */
/* Recording gate: on after init, off after the exit dump. */
RT_HIDDEN extern int rt_recording;
/* Whether instrumented code called __memprof_init (rt_init.c). */
RT_HIDDEN extern int rt_instrumented;

/* ---- timeline (rt_timeline.c) ------------------------------------------- */
/* Live heap per context, the peak and the censuses of timeline=1 or
 * peak_snapshot=1; rt_timeline_on is 0 otherwise and the hooks cost one load. */
RT_HIDDEN extern int rt_timeline_on;
RT_HIDDEN void rt_timeline_init(void); /* after the flags */
/* A block of `size` bytes of stack ref `stack` allocated (is_free 0) or
 * freed; stamp is rt_stamp()'s, ms its rt_stamp_ms (0: not read yet). */
RT_HIDDEN void rt_timeline_event(int is_free, uint64_t size, uint32_t stack, uint64_t stamp,
                                 uint32_t ms);
static inline void rt_timeline_count(int is_free, uint64_t size, uint32_t stack,
                                     uint64_t stamp, uint32_t ms) {
  if (RT_UNLIKELY(__atomic_load_n(&rt_timeline_on, __ATOMIC_RELAXED)))
    rt_timeline_event(is_free, size, stack, stamp, ms);
}
/* Writes "<raw path>.timeline" for the raw profile at raw_path, which has
 * raw_bytes bytes now. */
RT_HIDDEN void rt_timeline_write(const char *raw_path, uint64_t raw_bytes);
RT_HIDDEN void rt_timeline_fork_child(void);

/* ---- dump, output, text (rt_dump.c, rt_output.c, rt_text.c) -------------- */
/* Write one profile now.  `from_signal`: only trylock, never block. */
RT_HIDDEN int rt_dump(int from_signal);
RT_HIDDEN void rt_dump_fork_prepare(void);
RT_HIDDEN void rt_dump_fork_parent(void);
RT_HIDDEN void rt_dump_fork_child(void);
RT_HIDDEN void rt_output_init(void);
RT_HIDDEN int rt_output_write(const void *buf, size_t n);
RT_HIDDEN void rt_output_reset(void);
RT_HIDDEN const char *rt_output_path(void);
/* When profiles go to a file: its path into path[cap] and its size now;
 * 0 (nothing written) when they go to a stream or no file is open. */
RT_HIDDEN int rt_output_file(char *path, size_t cap, uint64_t *size);
/* A profile could not be written where asked: the exit status becomes 1
 * if the program's is 0 (rt_output.c); the check runs after the exit dump. */
RT_HIDDEN void rt_output_note_failure(void);
RT_HIDDEN void rt_output_install_exit(void);
RT_HIDDEN void rt_output_exit_check(void);
RT_HIDDEN void rt_output_fork_child(void);
RT_HIDDEN void rt_output_fork_prepare(void);
RT_HIDDEN void rt_output_fork_parent(void);
/* The text profile in two steps: the MIB part while the table is locked
 * (noting the stack ids it lists), then the stacks once the table is
 * unlocked, since naming frames takes the dynamic loader's lock and a
 * thread inside dlopen may be waiting for the table (to record a free). */
typedef struct rt_text {
  rt_buf b;
  uint32_t *ids; /* mmap'd */
  size_t n, cap;
} rt_text;
/* `note`: what the raw profile's note would say (sampled, not
 * instrumented), or NULL; the text says it in a line of its own before
 * the MIBs, which profiles recorded in full with instrumentation (all
 * LLVM's runtime writes) never have. */
RT_HIDDEN void rt_text_mibs(rt_text *t, int terse, const mp_raw_note *note); /* table locked */
RT_HIDDEN void rt_text_stacks(rt_text *t);          /* table unlocked */
RT_HIDDEN void rt_text_free(rt_text *t);
/* Function name of pc (NULL if unknown) and its module/offset (rt_symtab.c). */
RT_HIDDEN const char *rt_symbolize(uintptr_t pc, const char **module_name,
                                   uintptr_t *offset);
RT_HIDDEN void rt_symtab_fork_prepare(void);
RT_HIDDEN void rt_symtab_fork_parent(void);
RT_HIDDEN void rt_symtab_fork_child(void);
RT_HIDDEN void rt_print_stats(void);      /* on stderr, LLVM's lines */
RT_HIDDEN void rt_print_exit_stats(void); /* atexit=1: the same, headed */
/* The process's memory map, LLVM's format, on stderr or the profile's output. */
RT_HIDDEN void rt_print_module_map(int to_stderr);

/* Stacks as LLVM prints them (rt_frames.c): "Stack for id N:" and the
 * frames of each of ids[0..n); or the frames of pcs[0..k), with `where`
 * (if not NULL) given the first call site as "file:line:col in function". */
RT_HIDDEN void rt_frames_print_ids(rt_buf *b, const uint32_t *ids, size_t n);
RT_HIDDEN void rt_frames_print_pcs(rt_buf *b, const uintptr_t *pcs, uint32_t k,
                                   rt_buf *where);
/* An llvm-symbolizer process (rt_llvmsym.c): start (0 if there is none to
 * run), queue up to 64 queries, read their answers (each ends with an empty
 * line; 0 if the process failed, which then stops it), free. */
typedef struct rt_llvmsym {
  int fd, pid;
  size_t pending;
  rt_buf out;
} rt_llvmsym;
RT_HIDDEN int rt_llvmsym_start(rt_llvmsym *s);
RT_HIDDEN void rt_llvmsym_query(rt_llvmsym *s, const char *module, uintptr_t offset);
RT_HIDDEN int rt_llvmsym_answers(rt_llvmsym *s, rt_buf *in);
RT_HIDDEN void rt_llvmsym_stop(rt_llvmsym *s);
RT_HIDDEN void rt_llvmsym_free(rt_llvmsym *s);

/* ---- lifecycle (rt_lifecycle.c, rt_signal.c) ----------------------------- */
RT_HIDDEN void rt_lifecycle_install(void);
RT_HIDDEN void rt_signals_install(void);
RT_HIDDEN extern int rt_exit_dumped;

#endif
