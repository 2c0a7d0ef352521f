/* rt_stack.c - allocation stacks: the frame-pointer unwinder and the stack
 * depot (PC list -> its node's ref, which blocks keep, and a u32 id
 * assigned sequentially from 1, which profiles use).
 *
 * The unwinder starts at the public entry point's frame (rt_caller.fp): its
 * return address is the first PC, so no runtime frame is ever recorded.  It
 * then follows saved frame pointers while they increase, are 8-aligned and
 * stay below the thread's stack top; with an unknown top only the first PC
 * is taken.  A saved frame pointer is the caller's only if the function of
 * the return address keeps a frame-pointer frame there: code built without
 * (glibc, libstdc++) leaves its caller's %rbp, and following it would skip
 * that caller.  So each return address is checked against the per-PC rule
 * cache (rt_unwind.h: one load and compare), and a frame without a frame
 * pointer is unwound by its module's tables until a frame-pointer frame
 * takes the walk back to the fast loop.  The depot is a chained hash table
 * read and written without locks (nodes are immutable once published; see
 * depot_put).
 *
 * Nodes keep their PCs delta-encoded: the zigzag difference to the
 * previous PC in one 32-bit word when it fits in 31 bits (frames of one
 * module), else a marker word and the 64-bit value.  Fixed-size words
 * rather than varints keep the encoder free of unpredictable branches.  A program with tens of thousands
 * of deep contexts touches the depot at every allocation: its size is page
 * faults and cache misses.  Lookups still compare the whole encoded stack,
 * so two stacks share an id only if they are equal.
 *
 * Each node also carries its context's MIB entry (rt_mibtable.c owns what
 * is in it), right before its header: a block freed soon after its
 * allocation finds the entry next to the lines the lookup just fetched
 * (and prefetched), and a dump reads each context's stack and MIB from one
 * place.  The entry's address follows from the node's without a load. */
#include "rt_mibtable.h"
#include "rt_stack.h"
#include "rt_unwind.h"
#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_ialloc.h"
#include "runtime/base/rt_libc.h"
#include "runtime/base/rt_lock.h"
#include "runtime/base/rt_sys.h"

#define NBUCKETS (1u << 17)
#define MAX_IDS (1u << 26)

/* Nodes and buckets link by ref (rt_ialloc.h): half the bytes of a pointer,
 * so the bucket array (at every allocation's lookup) fits twice as many
 * buckets per cache line and page. */
typedef struct depot_node {
  uint32_t next; /* ref of the next node of the bucket, 0 = end */
  uint32_t id;
  uint64_t hash;
  uint16_t n, len; /* PCs, encoded bytes */
  uint8_t enc[];
} depot_node; /* preceded by the context's rt_mib_entry */

_Static_assert(sizeof(rt_mib_entry) % 8 == 0, "nodes stay 8-aligned after their entry");

rt_mib_entry rt_no_stack_entry;

static inline depot_node *node_at(uint32_t ref) {
  return (depot_node *)(rt_stack_entry(ref) + 1);
}

static uint32_t *buckets; /* refs */
static uint32_t *by_id;   /* refs */
static uint32_t next_id = 1;
static rt_mutex init_mu = RT_MUTEX_INIT;
static int depot_ready;

static int depot_init(void) {
  rt_mutex_lock(&init_mu);
  if (!depot_ready) {
    buckets = rt_mmap_anon(NBUCKETS * sizeof(*buckets), 1);
    by_id = rt_mmap_anon((size_t)MAX_IDS * sizeof(*by_id), 1);
    if (buckets && by_id)
      __atomic_store_n(&depot_ready, 1, __ATOMIC_RELEASE);
  }
  rt_mutex_unlock(&init_mu);
  return depot_ready;
}

/* Called by init (single-threaded, before any handler can run): a lazy
 * first use could be interrupted by a signal whose handler allocates, and
 * would then wait for init_mu held by its own thread. */
void rt_stack_init(void) {
  if (!__atomic_load_n(&depot_ready, __ATOMIC_ACQUIRE))
    depot_init();
  rt_ialloc_perm_init();
}

typedef rt_captured captured;

typedef uint32_t __attribute__((aligned(1), may_alias)) unaligned_u32;
typedef uint64_t __attribute__((aligned(1), may_alias)) unaligned_u64;

/* The walk's running state, kept in registers: written through the
 * captured struct, every encoded store (a may_alias type) would force the
 * compiler to reload and re-store hash, n and len for each frame. */
typedef struct walk {
  uint64_t hash;
  uintptr_t prev;
  uint32_t n, len;
  uint8_t *enc;
} walk;

/* For the first PC the hash is a bijection of it (xor, odd multiply,
 * xorshift): rt_stack_intern's one-frame cache relies on that. */
static inline __attribute__((always_inline)) void add_pc(walk *w, uintptr_t pc) {
  uint64_t h = w->hash ^ pc;
  h *= 0xff51afd7ed558ccdULL;
  w->hash = h ^ (h >> 32);
  int64_t d = (int64_t)(pc - w->prev);
  uint64_t z = ((uint64_t)d << 1) ^ (uint64_t)(d >> 63);
  w->prev = pc;
  uint8_t *o = w->enc + w->len;
  if (RT_LIKELY(z < (1ULL << 31))) {
    *(unaligned_u32 *)o = (uint32_t)(z << 1);
    w->len += 4;
  } else {
    *(unaligned_u32 *)o = 1;
    *(unaligned_u64 *)(o + 4) = z;
    w->len += 12;
  }
  w->n++;
}

/* The runtime's functions that call into libc for the program
 * (RT_CALLS_LIBC): their return addresses are not recorded. */
extern const char __start_memprof_calls_libc[] __attribute__((weak, visibility("hidden")));
extern const char __stop_memprof_calls_libc[] __attribute__((weak, visibility("hidden")));

static inline __attribute__((always_inline)) void add_program_pc(walk *w, uintptr_t pc) {
  if (RT_UNLIKELY(pc - (uintptr_t)__start_memprof_calls_libc <
                  (uintptr_t)(__stop_memprof_calls_libc - __start_memprof_calls_libc)))
    return;
  add_pc(w, pc);
}

/* Whether the frame record at next, above the callee's at cur, can be the
 * caller's.  Not next + 16 > top: code built without frame pointers may
 * leave any value in %rbp, and that sum wraps for -16 and -8. */
static inline __attribute__((always_inline)) int fp_record_ok(uintptr_t cur, uintptr_t next,
                                                              uintptr_t top) {
  return next > cur && !(next & 7) && next <= top - 16;
}

/* Whether return address ra, whose function's %rbp is rbp, is in the
 * runtime's thread trampoline: the frame-pointer frame whose record is the
 * stack top.  Its return address is ours, not the program's.  A function
 * without a frame pointer that the trampoline called also has the top in
 * %rbp; without tables it cannot be told apart and is taken for it. */
static inline __attribute__((always_inline)) int is_trampoline(uintptr_t ra, uintptr_t rbp,
                                                               uintptr_t top, int tables) {
  return rbp == top && (!tables || rt_unwind_rule(ra).kind == RT_CFA_FP);
}

/* The last PC taken, the record address of its callee (so %rsp at the
 * call was cur + 16) and the function's %rbp there. */
typedef struct frame {
  uintptr_t pc, cur, next;
} frame;

enum { TF_NEXT, TF_FP, TF_END };

/* One frame by f->pc's rule r: TF_NEXT with its caller's return address
 * taken (f is then the caller's), TF_FP if it is a frame-pointer frame,
 * TF_END where the walk ends (the frame-pointer loop's ends included). */
static inline __attribute__((always_inline)) int table_frame(walk *w, frame *f, rt_cfa_rule r,
                                                             uintptr_t top) {
  uintptr_t ra;
  if (r.kind == RT_CFA_FP)
    return TF_FP;
  if (r.kind == RT_CFA_STOP || !rt_unwind_step(r, &f->cur, &f->next, &ra, top) ||
      ra < 4096 || is_trampoline(ra, f->next, top, 1))
    return TF_END;
  add_program_pc(w, ra);
  f->pc = ra;
  return TF_NEXT;
}

/* Frames from f->pc by the trace above it (rt_unwind.h) while the stack
 * matches it, up to its end. */
static inline __attribute__((always_inline)) int follow_trace(walk *w, frame *f,
                                                              const uint64_t *row, uint64_t e,
                                                              uint32_t max, uintptr_t top) {
  int res;
  uint32_t i = 1;
  while ((res = table_frame(w, f, rt_unwind_unpack(e), top)) == TF_NEXT && w->n < max &&
         i < RT_TRACE_LEN && rt_unwind_names(e = __atomic_load_n(&row[i++], __ATOMIC_RELAXED), f->pc))
    ;
  return res;
}

/* Frames from f->pc by the rule cache, their words kept as f->pc's trace. */
static inline __attribute__((always_inline)) int record_trace(walk *w, frame *f, uint64_t *row,
                                                              uint32_t max, uintptr_t top) {
  uint64_t seen[RT_TRACE_LEN], e;
  uint32_t k = 0;
  int res;
  do {
    e = rt_unwind_word(f->pc);
    if (e)
      seen[k++] = e;
    res = table_frame(w, f, rt_unwind_rule_of(e, f->pc), top);
  } while (res == TF_NEXT && e && w->n < max && k < RT_TRACE_LEN);
  /* A frame-pointer frame alone predicts nothing: its PC is in the rule
   * cache, which the fast loop reads. */
  for (uint32_t i = 0; (k > 1 || (k && res != TF_FP)) && i < RT_TRACE_LEN; i++)
    __atomic_store_n(&row[i], i < k ? seen[i] : 0, __ATOMIC_RELAXED);
  return res;
}

/* Unwinds from f by the tables' rules while they are not frame-pointer
 * frames (and, with upto_exe, while f's PC is outside the main
 * executable); 1 when the frame-pointer walk is to go on from f, 0 when
 * the walk ends.  Out of line and on copies, so that the fast loop keeps
 * its state in registers. */
static __attribute__((noinline)) int walk_tables(walk *wp, frame *fp, uint32_t max,
                                                 uintptr_t top, int upto_exe) {
  walk w = *wp;
  frame f = *fp;
  int res = TF_NEXT;
  if (upto_exe) {
    /* a few library frames a walk: the rule cache, without traces */
    while (res == TF_NEXT && w.n < max && !rt_unwind_in_exe(f.pc))
      res = table_frame(&w, &f, rt_unwind_rule_of(rt_unwind_word(f.pc), f.pc), top);
  } else {
    while (res == TF_NEXT && w.n < max) {
      uint64_t *row = rt_unwind_trace(f.pc);
      uint64_t e = __atomic_load_n(&row[0], __ATOMIC_RELAXED);
      if (rt_unwind_names(e, f.pc))
        res = follow_trace(&w, &f, row, e, max, top);
      else
        res = record_trace(&w, &f, row, max, top);
    }
  }
  *wp = w;
  *fp = f;
  return res != TF_END;
}

/* Follows the caller's frames from fp (see the file comment). */
static inline __attribute__((always_inline)) void walk_frames(walk *w, uintptr_t fp,
                                                             uint32_t max) {
  uintptr_t ret = ((uintptr_t *)fp)[1];
  if (ret < 4096)
    return;
  add_pc(w, ret);
  uintptr_t bottom = 0, top = rt_thread_stack_bounds(&bottom);
  if (!top || fp < bottom || fp >= top)
    return; /* not on the thread's own stack: only the caller is safe */
  uintptr_t cur = fp, next = ((uintptr_t *)fp)[0];
  int tables = __atomic_load_n(&rt_unwind_on, __ATOMIC_RELAXED);
  while (w->n < max) {
    /* unwind_tables=1: past the program's first frame, frame pointers */
    if (tables == 1 && rt_unwind_in_exe(ret))
      tables = 0;
    if (tables && !rt_unwind_fp_cached(ret)) {
      frame f = {ret, cur, next};
      walk copy = *w;
      int more = walk_tables(&copy, &f, max, top, tables == 1);
      *w = copy;
      if (!more)
        break;
      cur = f.cur;
      next = f.next;
      if (tables == 1)
        tables = 0; /* at the program's first frame: frame pointers on */
    }
    if (!fp_record_ok(cur, next, top))
      break;
    ret = ((uintptr_t *)next)[1];
    if (ret < 4096 || is_trampoline(ret, ((uintptr_t *)next)[0], top, tables))
      break;
    add_program_pc(w, ret);
    cur = next;
    next = ((uintptr_t *)cur)[0];
  }
}

/* Walk the caller's frames into c; returns how many PCs were taken. */
static uint32_t unwind(uintptr_t fp, captured *c, uint32_t max) {
  walk w = {0x9e3779b97f4a7c15ULL, 0, 0, 0, c->enc};
  if (max && fp)
    walk_frames(&w, fp, max);
  c->hash = w.hash;
  c->n = w.n;
  c->len = w.len;
  return w.n;
}

static uint32_t decode(const depot_node *node, uintptr_t *pcs) {
  const uint8_t *in = node->enc;
  uintptr_t prev = 0;
  for (uint32_t i = 0; i < node->n; i++) {
    uint32_t w = *(const unaligned_u32 *)in;
    uint64_t z = w >> 1;
    in += 4;
    if (w & 1) {
      z = *(const unaligned_u64 *)in;
      in += 8;
    }
    prev += (uintptr_t)((z >> 1) ^ -(z & 1));
    pcs[i] = prev;
  }
  return node->n;
}

/* Encoded stacks are a few dozen bytes, always a multiple of 4: comparing
 * words inline beats a call into libc's memcmp on every allocation. */
static inline int enc_equal(const uint8_t *a, const uint8_t *b, uint32_t len) {
  uint32_t i = 0;
  for (; i + 8 <= len; i += 8)
    if (*(const unaligned_u64 *)(a + i) != *(const unaligned_u64 *)(b + i))
      return 0;
  return i == len || *(const unaligned_u32 *)(a + i) == *(const unaligned_u32 *)(b + i);
}

/* The ref of c's node in the chain from ref, or 0. */
static uint32_t find(uint32_t ref, const captured *c) {
  for (const depot_node *node; ref; ref = node->next) {
    node = node_at(ref);
    if (node->hash == c->hash && node->n == c->n && node->len == c->len &&
        enc_equal(node->enc, c->enc, c->len))
      return ref;
  }
  return 0;
}

/* The ref of c's node.  Lock-free insertion: a new node is pushed with a
 * compare-and-swap on its bucket, and a failed swap rescans the chain
 * (someone may have inserted the same stack), so each stack still gets
 * exactly one published id.  No lock means a signal handler that allocates
 * can never wait for its own thread.  An id taken by a node that lost to
 * an equal one is skipped. */
static uint32_t depot_put(const captured *c) {
  if (!__atomic_load_n(&depot_ready, __ATOMIC_ACQUIRE) && !depot_init())
    return 0;
  uint32_t *b = &buckets[c->hash & (NBUCKETS - 1)];
  uint32_t head = __atomic_load_n(b, __ATOMIC_ACQUIRE);
  uint32_t hit = find(head, c);
  if (hit) {
    rt_prefetch_entry(rt_stack_entry(hit)); /* read at the block's free, often soon */
    return hit;
  }
  if (__atomic_load_n(&next_id, __ATOMIC_RELAXED) >= MAX_IDS)
    return 0;
  rt_mib_entry *e = rt_ialloc_perm(sizeof(*e) + sizeof(depot_node) + c->len);
  if (!e)
    return 0;
  depot_node *node = (depot_node *)(e + 1);
  uint32_t ref = rt_perm_ref(e);
  node->hash = c->hash;
  node->n = (uint16_t)c->n;
  node->len = (uint16_t)c->len;
  rt_memcpy(node->enc, c->enc, c->len);
  uint32_t id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
  if (id >= MAX_IDS)
    return 0;
  node->id = id;
  __atomic_store_n(&by_id[id], ref, __ATOMIC_RELEASE);
  for (;;) {
    node->next = head;
    if (__atomic_compare_exchange_n(b, &head, ref, 0, __ATOMIC_RELEASE,
                                    __ATOMIC_ACQUIRE))
      return ref;
    if ((hit = find(head, c)) != 0)
      return hit;
  }
}

uint32_t rt_stack_unwind(rt_caller c, rt_captured *cap) {
  int max = rt_flags.malloc_context_size;
  if (max > RT_MAX_STACK)
    max = RT_MAX_STACK;
  cap->n = 0;
  if (max <= 0 || !unwind(c.fp, cap, (uint32_t)max))
    return 0;
  /* One-frame stacks are mostly found in this thread's cache instead. */
  if (cap->n > 1 && __atomic_load_n(&depot_ready, __ATOMIC_ACQUIRE))
    __builtin_prefetch(&buckets[cap->hash & (NBUCKETS - 1)]);
  return cap->n;
}

/* Refs of this thread's recent one-frame stacks, by hash: code built
 * without frame pointers gives nothing deeper (jsoncpp, libstdc++), and
 * each allocation would then search the depot (its call, bucket and
 * byte compare were a fifth of malloc's instructions).  A slot is only a
 * hint, which a signal handler may overwrite at any point: a hit is
 * checked against the node, and one-PC stacks with equal hashes are equal
 * (see add_pc). */
#define ONE_FRAME_SLOTS 64
static __thread uint32_t one_frame_seen[ONE_FRAME_SLOTS];

uint32_t rt_stack_intern(const rt_captured *cap) {
  if (cap->n == 1) {
    uint32_t *seen = &one_frame_seen[cap->hash % ONE_FRAME_SLOTS];
    uint32_t ref = *seen;
    if (ref) {
      const depot_node *node = node_at(ref);
      if (node->hash == cap->hash && node->n == 1) {
        rt_prefetch_entry(rt_stack_entry(ref));
        return ref;
      }
    }
    ref = depot_put(cap);
    *seen = ref;
    return ref;
  }
  return cap->n ? depot_put(cap) : 0;
}

uint32_t rt_stack_capture(rt_caller c) {
  captured cap;
  rt_stack_unwind(c, &cap);
  return rt_stack_id(rt_stack_intern(&cap));
}

/* The ref of stack `id`, 0 if the depot never gave that id. */
static uint32_t ref_of_id(uint32_t id) {
  if (!id || !__atomic_load_n(&depot_ready, __ATOMIC_ACQUIRE) || id >= MAX_IDS)
    return 0;
  return __atomic_load_n(&by_id[id], __ATOMIC_ACQUIRE);
}

static const depot_node *lookup(uint32_t id) {
  uint32_t ref = ref_of_id(id);
  return ref ? node_at(ref) : NULL;
}

uint32_t rt_stack_get(uint32_t id, uintptr_t *pcs) {
  const depot_node *node = lookup(id);
  return node ? decode(node, pcs) : 0;
}

uint32_t rt_stack_id(uint32_t ref) {
  return ref ? node_at(ref)->id : 0;
}

rt_mib_entry *rt_stack_entry_of_id(uint32_t id) {
  if (!id)
    return &rt_no_stack_entry;
  uint32_t ref = ref_of_id(id);
  return ref ? rt_stack_entry(ref) : NULL;
}

uint32_t rt_stack_depth(uint32_t id) {
  const depot_node *node = lookup(id);
  return node ? node->n : 0;
}

uint32_t rt_stack_max_id(void) {
  return __atomic_load_n(&next_id, __ATOMIC_ACQUIRE) - 1;
}

void rt_stack_fork_prepare(void) { rt_mutex_lock(&init_mu); }
void rt_stack_fork_parent(void) { rt_mutex_unlock(&init_mu); }
void rt_stack_fork_child(void) { rt_mutex_reset(&init_mu); }
