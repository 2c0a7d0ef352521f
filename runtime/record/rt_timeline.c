/* rt_timeline.c - the live heap over time (timeline=1) and live at the peak
 * and at exit (peak_snapshot=1, or timeline=1): what the `.timeline` file
 * beside the raw profile holds (docs/timeline-format.md).
 *
 * Every allocation and free adds its bytes and one block to its context
 * (the rt_timeline_ctx in the context's MIB entry, found from the block's stack
 * ref without a load) and to the process's totals; an allocation also
 * counts one in the process's allocation count, which each census
 * records as the allocations since the one before (allocations per
 * second over time).
 *
 * The peak, without copying every context at every new maximum: a free
 * that starts from a live total above the last declared peak declares a
 * new one by bumping the peak epoch (the live heap cannot have been larger
 * than just before its first decrease).  A context saves its live bytes
 * and blocks as its at-peak values the first time it changes in a new
 * epoch; a context unchanged since keeps them in its live counters.  So a
 * new peak costs one atomic increment, and a change one compare.  In one
 * thread this is exact.  With several threads the totals are one atomic
 * counter, so the peak itself is the true maximum of that counter, but a
 * context's saved values may include the changes other threads made
 * between the declaring free's decrement and its epoch increment, or
 * between another thread's epoch check and its own change: at most one
 * block per thread in flight.
 *
 * Censuses are taken on the allocation path, by the first allocation or
 * free after the interval elapsed: a heap that nobody changes needs no
 * new census, the path already holds the time, and no thread is started
 * (the optional background thread sleeps while the program is quiet, so
 * it could not keep a regular pace anyway).  A census reads every
 * context's counters (one pass over the stack ids), keeps the top ones by
 * live bytes and encodes them at once into an mmap'd buffer; a thread that
 * finds another taking one (or a signal handler inside one) goes on.  The
 * file's last census is taken when it is written.  When
 * the buffer has grown by timeline_max_kb the interval doubles, so a long
 * run stays small; and when a census took more than 1/CENSUS_SHARE of the
 * interval (it reads every context, so a program with tens of thousands of
 * them pays for it), so that censuses cost the program at most about that
 * share of its time.
 *
 * While the process has one thread (glibc's __libc_single_threaded), the
 * counters change by plain read-modify-write instructions: one instruction
 * cannot be split by a signal handler, and without other threads the lock
 * prefix only costs time. */
#define _GNU_SOURCE
#include <sys/single_threaded.h>
#include <time.h>

#include "rt_mibtable.h"
#include "rt_stack.h"
#include "rt_timeline.h"
#include "runtime/base/rt_clock.h"
#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_start_time.h"
#include "runtime/base/rt_state.h"
#include "runtime/base/rt_sys.h"

int rt_timeline_on;

#define TOP_MAX 256
#define CENSUS_SHARE 32
#define UV_MAX 10

/* The process's live heap and its peak. */
static struct {
  uint64_t bytes;
  uint64_t allocs; /* allocations counted (each before its context's blocks) */
  uint64_t peak;  /* live bytes at the last declared peak */
  uint64_t epoch; /* peaks declared */
  uint32_t reach_ms; /* the last time the live bytes went above `peak` */
  uint32_t peak_ms;  /* reach_ms of the declared peak */
} g __attribute__((aligned(64)));

/* Censuses. */
static struct {
  uint32_t next_ms; /* when the next one is due; read at every event */
  uint32_t interval;
  uint32_t interval0; /* as asked (the file's IntervalMs) */
  int busy;
  uint32_t top;
  uint32_t last_ms;
  uint64_t n;
  uint64_t allocs; /* g.allocs as the last census read it */
  size_t double_at; /* buf.len at which the interval doubles */
  rt_buf buf;       /* the census section after its count */
} cs __attribute__((aligned(64)));

void rt_timeline_init(void) {
  rt_timeline_on = rt_flags.timeline || rt_flags.peak_snapshot;
  if (!rt_flags.timeline)
    return;
  int iv = rt_flags.timeline_interval_ms, top = rt_flags.timeline_top;
  cs.interval = cs.interval0 = iv < 1 ? 1 : (uint32_t)iv;
  cs.top = top < 1 ? 1 : top > TOP_MAX ? TOP_MAX : (uint32_t)top;
  cs.double_at = rt_flags.timeline_max_kb < 1 ? 1024 : (size_t)rt_flags.timeline_max_kb * 1024;
  cs.next_ms = cs.interval;
}

/* ---- counting ------------------------------------------------------------- */

static inline void cnt_add(uint64_t *p, uint64_t v) {
  if (__libc_single_threaded)
    __asm__ volatile("addq %1, %0" : "+m"(*p) : "r"(v));
  else
    __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

/* *p += v; returns the value before. */
static inline uint64_t cnt_fetch_add(uint64_t *p, uint64_t v) {
  if (!__libc_single_threaded)
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
  __asm__ volatile("xaddq %0, %1" : "+r"(v), "+m"(*p));
  return v;
}

/* Before c changes: keep its values of the current peak epoch. */
static inline void touch(rt_timeline_ctx *c) {
  uint64_t e = __atomic_load_n(&g.epoch, __ATOMIC_ACQUIRE);
  uint64_t old = __atomic_load_n(&c->epoch, __ATOMIC_RELAXED);
  if (RT_UNLIKELY(old != e) &&
      __atomic_compare_exchange_n(&c->epoch, &old, e, 0, __ATOMIC_ACQ_REL,
                                  __ATOMIC_RELAXED)) {
    c->peak_bytes = __atomic_load_n(&c->bytes, __ATOMIC_RELAXED);
    c->peak_blocks = __atomic_load_n(&c->blocks, __ATOMIC_RELAXED);
  }
}

/* A free that starts from `before` live bytes. */
static inline void maybe_declare(uint64_t before) {
  uint64_t pk = __atomic_load_n(&g.peak, __ATOMIC_RELAXED);
  while (before > pk) {
    if (__atomic_compare_exchange_n(&g.peak, &pk, before, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_RELAXED)) {
      g.peak_ms = __atomic_load_n(&g.reach_ms, __ATOMIC_RELAXED);
      __atomic_fetch_add(&g.epoch, 1, __ATOMIC_RELEASE);
      return;
    }
  }
}

static void census(uint32_t ms);

void rt_timeline_event(int is_free, uint64_t size, uint32_t stack, uint64_t stamp,
                       uint32_t ms) {
  rt_timeline_ctx *c = &rt_stack_entry(stack)->tl;
  if (!is_free) {
    /* Counted before its context's blocks, so that a census, which reads
     * the blocks first, never sees more live blocks than allocations. */
    cnt_add(&g.allocs, 1);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    touch(c);
    cnt_add(&c->bytes, size);
    cnt_add(&c->blocks, 1);
    uint64_t now = cnt_fetch_add(&g.bytes, size) + size;
    if (now > __atomic_load_n(&g.peak, __ATOMIC_RELAXED))
      __atomic_store_n(&g.reach_ms, ms, __ATOMIC_RELAXED);
  } else {
    /* A block allocated before the counting started was never added. */
    if (RT_UNLIKELY(__atomic_load_n(&c->blocks, __ATOMIC_RELAXED) == 0))
      return;
    maybe_declare(cnt_fetch_add(&g.bytes, -size));
    touch(c);
    cnt_add(&c->bytes, -size);
    cnt_add(&c->blocks, (uint64_t)-1);
    if (!cs.interval)
      return;
    ms = rt_stamp_ms(stamp);
  }
  if (cs.interval && ms >= __atomic_load_n(&cs.next_ms, __ATOMIC_RELAXED))
    census(ms);
}

/* ---- encoding ------------------------------------------------------------- */

static size_t put_uv(uint8_t *o, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    o[n++] = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  o[n++] = (uint8_t)v;
  return n;
}

static void buf_uv(rt_buf *b, uint64_t v) {
  uint8_t o[UV_MAX];
  rt_buf_append(b, o, put_uv(o, v));
}

/* A context list (docs/timeline-format.md section 4), built in id order. */
typedef struct ctx_list {
  rt_buf b;
  uint64_t n, prev_id, bytes, blocks;
} ctx_list;

static void list_add(ctx_list *l, uint64_t id, uint64_t bytes, uint64_t blocks) {
  uint8_t o[3 * UV_MAX];
  size_t k = put_uv(o, id - l->prev_id);
  k += put_uv(o + k, bytes);
  k += put_uv(o + k, blocks);
  rt_buf_append(&l->b, o, k);
  l->n++;
  l->prev_id = id;
  l->bytes += bytes;
  l->blocks += blocks;
}

/* Appends l's count and entries to out and frees l's buffer. */
static void list_emit(rt_buf *out, ctx_list *l) {
  buf_uv(out, l->n);
  rt_buf_append(out, l->b.p, l->b.len);
  rt_buf_free(&l->b);
}

/* ---- censuses ------------------------------------------------------------- */

typedef struct top_ent {
  uint32_t id;
  uint64_t bytes, blocks;
} top_ent;

/* Into t[0..*n) (largest bytes first, at most cap entries). */
static void top_insert(top_ent *t, uint32_t *n, uint32_t cap, top_ent e) {
  if (*n == cap && e.bytes <= t[cap - 1].bytes)
    return;
  uint32_t i = *n < cap ? (*n)++ : cap - 1;
  for (; i > 0 && t[i - 1].bytes < e.bytes; i--)
    t[i] = t[i - 1];
  t[i] = e;
}

static void sort_by_id(top_ent *t, uint32_t n) {
  for (uint32_t i = 1; i < n; i++) {
    top_ent e = t[i];
    uint32_t j = i;
    for (; j > 0 && t[j - 1].id > e.id; j--)
      t[j] = t[j - 1];
    t[j] = e;
  }
}

static void census_take(uint32_t ms) {
  top_ent top[TOP_MAX];
  uint32_t nt = 0;
  uint64_t bytes = 0, blocks = 0, listed = 0;
  uint32_t max = rt_stack_max_id();
  for (uint32_t id = 0; id <= max; id++) {
    const rt_mib_entry *e = rt_stack_entry_of_id(id);
    if (!e)
      continue;
    top_ent t = {id, __atomic_load_n(&e->tl.bytes, __ATOMIC_RELAXED),
                 __atomic_load_n(&e->tl.blocks, __ATOMIC_RELAXED)};
    if (!t.blocks)
      continue;
    bytes += t.bytes;
    blocks += t.blocks;
    top_insert(top, &nt, cs.top, t);
  }
  sort_by_id(top, nt);
  ctx_list l = {0};
  for (uint32_t i = 0; i < nt; i++) {
    list_add(&l, top[i].id, top[i].bytes, top[i].blocks);
    listed += top[i].bytes;
  }
  if (ms < cs.last_ms)
    ms = cs.last_ms; /* a thread that read the clock before the last census */
  uint64_t allocs = __atomic_load_n(&g.allocs, __ATOMIC_ACQUIRE);
  uint8_t o[5 * UV_MAX];
  size_t k = put_uv(o, ms - cs.last_ms);
  k += put_uv(o + k, allocs - cs.allocs);
  cs.allocs = allocs;
  k += put_uv(o + k, bytes);
  k += put_uv(o + k, blocks);
  k += put_uv(o + k, bytes - listed);
  rt_buf_append(&cs.buf, o, k);
  list_emit(&cs.buf, &l);
  cs.last_ms = ms;
  cs.n++;
  if (cs.buf.len >= cs.double_at) {
    cs.double_at = cs.buf.len + (size_t)rt_flags.timeline_max_kb * 1024;
    cs.interval *= 2;
  }
}

static int census_trylock(void) {
  return !__atomic_exchange_n(&cs.busy, 1, __ATOMIC_ACQUIRE);
}
static void census_unlock(void) { __atomic_store_n(&cs.busy, 0, __ATOMIC_RELEASE); }

/* The thread's CPU time: a thread descheduled during a census (a loaded
 * machine) must not make the census look expensive. */
static uint64_t cpu_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static __attribute__((noinline)) void census(uint32_t ms) {
  if (!census_trylock())
    return;
  if (ms >= cs.next_ms) {
    uint64_t t0 = cpu_ns();
    census_take(ms);
    if ((cpu_ns() - t0) * CENSUS_SHARE > (uint64_t)cs.interval * 1000000u &&
        cs.interval < (1u << 30))
      cs.interval *= 2;
    __atomic_store_n(&cs.next_ms, ms + cs.interval, __ATOMIC_RELAXED);
  }
  census_unlock();
}

void rt_timeline_fork_child(void) { cs.busy = 0; }

/* ---- the file --------------------------------------------------------------- */

/* Exit and peak lists.  At the peak: the saved values of contexts changed
 * since the last declared peak, the live ones of the others; or the live
 * ones of all when the heap is larger now than at any declared peak. */
static void snapshot(ctx_list *at_exit, ctx_list *at_peak, int now_is_peak) {
  uint64_t e = __atomic_load_n(&g.epoch, __ATOMIC_ACQUIRE);
  uint32_t max = rt_stack_max_id();
  for (uint32_t id = 0; id <= max; id++) {
    const rt_mib_entry *m = rt_stack_entry_of_id(id);
    if (!m)
      continue;
    const rt_timeline_ctx *c = &m->tl;
    uint64_t b = __atomic_load_n(&c->bytes, __ATOMIC_RELAXED);
    uint64_t k = __atomic_load_n(&c->blocks, __ATOMIC_RELAXED);
    if (k)
      list_add(at_exit, id, b, k);
    if (!now_is_peak && __atomic_load_n(&c->epoch, __ATOMIC_ACQUIRE) == e)
      b = c->peak_bytes, k = c->peak_blocks;
    if (k)
      list_add(at_peak, id, b, k);
  }
}

static void encode(rt_buf *out, uint64_t raw_bytes, int with_census) {
  static const char magic[8] = {'M', 'P', 'T', 'L', 'I', 'N', 'E', '\n'};
  ctx_list ex = {0}, pk = {0};
  int now_is_peak = __atomic_load_n(&g.bytes, __ATOMIC_RELAXED) >
                    __atomic_load_n(&g.peak, __ATOMIC_RELAXED);
  snapshot(&ex, &pk, now_is_peak);
  if (ex.bytes > pk.bytes) { /* threads raced the snapshot: the peak is now */
    rt_buf_free(&ex.b), rt_buf_free(&pk.b);
    ex = (ctx_list){0}, pk = (ctx_list){0};
    snapshot(&ex, &pk, now_is_peak = 1);
  }
  uint32_t peak_ms = now_is_peak ? g.reach_ms : g.peak_ms;
  uint32_t end = rt_now_ms();
  if (end < cs.last_ms)
    end = cs.last_ms;
  if (with_census) /* the last census: the heap as the file is written */
    census_take(end);
  if (peak_ms > end)
    peak_ms = end;
  /* every block the lists count was counted here first (rt_timeline_event) */
  uint64_t allocs = with_census ? cs.allocs : __atomic_load_n(&g.allocs, __ATOMIC_ACQUIRE);
  int from;
  int64_t start = rt_start_ms(&from); /* signed: zigzag-coded */
  rt_buf_append(out, magic, sizeof magic);
  uint64_t head[] = {2, 0, (uint64_t)rt_getpid(), raw_bytes,
                     with_census ? cs.interval0 : 0, end,
                     with_census ? cs.top : 0, allocs,
                     (uint64_t)start << 1 ^ (uint64_t)(start >> 63), (uint64_t)from,
                     peak_ms, pk.bytes, pk.blocks};
  for (size_t i = 0; i < sizeof head / sizeof *head; i++)
    buf_uv(out, head[i]);
  list_emit(out, &pk);
  buf_uv(out, ex.bytes);
  buf_uv(out, ex.blocks);
  list_emit(out, &ex);
  buf_uv(out, with_census ? cs.n : 0);
  if (with_census)
    rt_buf_append(out, cs.buf.p, cs.buf.len);
}

void rt_timeline_write(const char *raw_path, uint64_t raw_bytes) {
  if (!rt_timeline_on)
    return;
  char path[4200];
  size_t n = rt_format(path, sizeof path, "%s.timeline", raw_path);
  if (n + 1 >= sizeof path)
    return;
  /* A census in progress finishes in a moment; a signal handler that
   * interrupted one writes the file without censuses. */
  int locked = 0;
  for (int i = 0; i < 1000 && !(locked = census_trylock()); i++)
    if (rt_nonblocking)
      break;
    else
      rt_sched_yield();
  rt_buf b = {0};
  encode(&b, raw_bytes, locked && rt_flags.timeline);
  if (locked)
    census_unlock();
  int r = b.failed ? -12 /* ENOMEM */ : rt_replace_file(path, b.p, b.len, NULL, 0);
  if (r < 0) {
    rt_report("ERROR: cannot write the timeline %s (errno %d)", path, -r);
    rt_output_note_failure();
  }
  rt_buf_free(&b);
}
