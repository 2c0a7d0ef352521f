/* torture.c - an allocator torture program, run by test_torture.py under
 * our runtime (linked in, or preloaded) and under plain glibc: every run
 * must print the same summary and exit 0.
 *
 * GENERATIONS times, THREADS worker threads are created and joined.  Each
 * runs OPS random steps (a fixed seed per generation and thread) over
 * the blocks it holds: malloc, calloc, realloc (grow, shrink, to 0, from
 * NULL), posix_memalign, aligned_alloc, memalign, free, and hand-offs
 * into the next thread's inbox, whose blocks that thread reallocates,
 * checks and frees.  What is left in an inbox when its threads are joined
 * (every block a thread still held at its exit goes there) is taken over
 * by the next generation, so blocks are also freed after the thread that
 * allocated them has exited.  After each join the main thread callocs
 * blocks of every size class: a slot a thread cache gave back at exit
 * must come out zeroed.
 *
 * Every byte of a block carries a pattern derived from the block's id:
 * checked before every free and after every realloc (the kept prefix).
 * calloc memory is checked to be zero by a function the compiler cannot
 * see the calloc from; every block is checked for alignment and for
 * malloc_usable_size >= its size, and some blocks also fill and check
 * their usable tail.  Sizes run from 0 to 4 MiB with extra weight on
 * size-class boundaries (ours and glibc's) and blocks above glibc's mmap
 * threshold.
 *
 * The summary's counts depend on the seed only, not on timing (an inbox's
 * blocks are handled the same whoever takes them), nor on the allocator.
 * Every allocation goes through one t_* function per API, so the test can
 * compare the profile's allocation count at those leaves with
 * "allocations".  Failures go to stderr, at most MAX_REPORTS of them, and
 * make the exit status 1. */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOI __attribute__((noinline))

#define GENERATIONS 6
#define THREADS 4
#define OPS 3000        /* steps per thread and generation */
#define LIVE_MAX 40     /* blocks a thread holds at once */
#define INBOX_MAX (OPS + LIVE_MAX)
#define SEED 0x7a3c91e5d2b04f68ull
#define MAX_REPORTS 20
#define K_WORD 0x9E3779B97F4A7C15ull

/* ---- the allocation sites the test counts in the profile ----
 * The empty asm after each call hides what the call may touch: without
 * it clang takes malloc to leave errno alone and folds `errno = 0;
 * malloc(huge); errno == ENOMEM` to false. */
#define OPAQUE() __asm__ volatile("" : : : "memory")
NOI void *t_malloc(size_t n) {
  void *p = malloc(n);
  OPAQUE();
  return p;
}
NOI void *t_calloc(size_t k, size_t n) {
  void *p = calloc(k, n);
  OPAQUE();
  return p;
}
NOI void *t_realloc(void *old, size_t n) {
  void *p = realloc(old, n);
  OPAQUE();
  return p;
}
NOI int t_posix_memalign(void **out, size_t a, size_t n) {
  int rc = posix_memalign(out, a, n);
  OPAQUE();
  return rc;
}
NOI void *t_aligned_alloc(size_t a, size_t n) {
  void *p = aligned_alloc(a, n);
  OPAQUE();
  return p;
}
NOI void *t_memalign(size_t a, size_t n) {
  void *p = memalign(a, n);
  OPAQUE();
  return p;
}

enum { A_MALLOC, A_CALLOC, A_REALLOC, A_POSIX, A_ALIGNED, A_MEMALIGN, N_API };
static const char *const api_name[N_API] = {
    "malloc", "calloc", "realloc", "posix_memalign", "aligned_alloc",
    "memalign"};

typedef struct stats {
  uint64_t alloc[N_API];
  uint64_t frees, realloc_to_zero, handed, received;
  uint64_t bytes_checked, zero_bytes_checked;
} stats;

typedef struct block {
  unsigned char *p;
  size_t n;
  uint64_t id;
} block;

/* ---- failures ---- */
static int failures;
static uint64_t tail_checks; /* allocator-dependent: stderr only */
static pthread_mutex_t report_mu = PTHREAD_MUTEX_INITIALIZER;

static void fail(const char *what, uint64_t id, size_t n, size_t at) {
  pthread_mutex_lock(&report_mu);
  if (failures++ < MAX_REPORTS)
    fprintf(stderr, "torture: %s: block %#llx size %zu at %zu\n", what,
            (unsigned long long)id, n, at);
  pthread_mutex_unlock(&report_mu);
}

/* ---- random numbers: splitmix64, one stream per thread and generation */
static uint64_t mix(uint64_t x) {
  x += K_WORD;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static uint64_t next(uint64_t *s) { return mix(*s += 0x632BE59BD9B4E019ull); }
static size_t below(uint64_t *s, size_t n) { return (size_t)(next(s) % n); }

/* ---- block patterns: byte o of block id is byte o%8 of word o/8 ---- */
static uint64_t pat_word(uint64_t key, size_t o) {
  return key ^ ((uint64_t)(o >> 3) * K_WORD);
}
static unsigned char pat_byte(uint64_t key, size_t o) {
  return (unsigned char)(pat_word(key, o) >> ((o & 7) * 8));
}

static void fill(unsigned char *p, uint64_t id, size_t from, size_t to) {
  uint64_t key = mix(id);
  size_t o = from;
  for (; o < to && (o & 7); o++) p[o] = pat_byte(key, o);
  for (; o + 8 <= to; o += 8) {
    uint64_t w = pat_word(key, o);
    memcpy(p + o, &w, 8);
  }
  for (; o < to; o++) p[o] = pat_byte(key, o);
}

/* The first offset in [from, to) that lost its pattern, or `to`. */
static size_t first_bad(const unsigned char *p, uint64_t id, size_t from,
                        size_t to) {
  uint64_t key = mix(id);
  size_t o = from;
  for (; o < to && (o & 7); o++)
    if (p[o] != pat_byte(key, o)) return o;
  for (; o + 8 <= to; o += 8) {
    uint64_t w;
    memcpy(&w, p + o, 8);
    if (w != pat_word(key, o)) break;
  }
  for (; o < to; o++)
    if (p[o] != pat_byte(key, o)) return o;
  return to;
}

static void check(const block *b, size_t from, size_t to, const char *what) {
  size_t bad = first_bad(b->p, b->id, from, to);
  if (bad != to) fail(what, b->id, b->n, bad);
}

/* One block in eight also fills and checks the bytes past its size that
 * malloc_usable_size offers (how many depends on the allocator). */
static int uses_tail(const block *b) { return (b->id & 7) == 0; }

/* Nonzero bytes in [p, p+n).  The empty asm hides where p comes from, so
 * the compiler cannot fold the loads of calloc'ed memory to zero. */
NOI static size_t nonzero_bytes(const unsigned char *p, size_t n) {
  __asm__ volatile("" : "+r"(p) : : "memory"); /* not OPAQUE(): p too */
  size_t bad = 0, o = 0;
  for (; o + 8 <= n; o += 8) {
    uint64_t w;
    memcpy(&w, p + o, 8);
    bad += w != 0;
  }
  for (; o < n; o++) bad += p[o] != 0;
  return bad;
}

/* ---- sizes ---- */
/* Size-class edges: ours (64..1024 by 64, then 8 per doubling to
 * 128 KiB: SMALL_EDGES + 56 of them) and glibc's (the largest tcache
 * chunk, the mmap threshold, 4 MiB / 32). */
#define SMALL_EDGES 16
#define N_EDGES (SMALL_EDGES + 7 * 8 + 3)

static size_t class_edge(size_t k) {
  if (k < SMALL_EDGES) return 64 * (k + 1);
  k -= SMALL_EDGES;
  if (k < 7 * 8)
    return ((size_t)1024 << k / 8) + (k % 8 + 1) * ((size_t)128 << k / 8);
  return (size_t[]){1032, 128 * 1024, 128 * 1024 + 4096}[k - 7 * 8];
}

/* An edge at -32, -8, -1, 0 or +1: where a block fills its slot, leaves
 * room for a header, or just spills into the next class. */
static size_t boundary(uint64_t *s) {
  static const int delta[] = {-32, -8, -1, 0, 1};
  size_t edge = class_edge(below(s, N_EDGES));
  return edge + delta[below(s, 5)];
}

static size_t pick_size(uint64_t *s) {
  size_t r = below(s, 1000);
  if (r < 30) return 0;
  if (r < 330) return 1 + below(s, 64);
  if (r < 580) return 65 + below(s, 960);
  if (r < 760) return boundary(s);
  if (r < 985) return 1025 + below(s, 128 * 1024 - 1024);
  return 128 * 1024 + below(s, 4 * 1024 * 1024 - 128 * 1024);
}

/* Blocks handed to thread i (of any generation): a mutex-guarded stack. */
static struct inbox {
  pthread_mutex_t mu;
  block b[INBOX_MAX];
  int n;
} inbox[THREADS];

static void inbox_put(int i, block b) {
  pthread_mutex_lock(&inbox[i].mu);
  if (inbox[i].n == INBOX_MAX) {
    pthread_mutex_unlock(&inbox[i].mu);
    fail("inbox full", b.id, b.n, 0);
    return;
  }
  inbox[i].b[inbox[i].n++] = b;
  pthread_mutex_unlock(&inbox[i].mu);
}

static int inbox_take(int i, block *out) {
  pthread_mutex_lock(&inbox[i].mu);
  int got = inbox[i].n > 0;
  if (got) *out = inbox[i].b[--inbox[i].n];
  pthread_mutex_unlock(&inbox[i].mu);
  return got;
}

/* A block new from offset `from` on (0, or the prefix realloc kept):
 * alignment, usable size and (calloc) zeroes, then its pattern. */
static void adopt(block *b, size_t align, int zeroed, size_t from,
                  stats *st) {
  if ((uintptr_t)b->p % align) fail("misaligned", b->id, b->n, align);
  size_t usable = malloc_usable_size(b->p);
  if (usable < b->n) fail("usable size below request", b->id, b->n, usable);
  if (zeroed) {
    if (nonzero_bytes(b->p, b->n))
      fail("calloc memory not zero", b->id, b->n, 0);
    st->zero_bytes_checked += b->n;
  }
  fill(b->p, b->id, from, b->n);
  if (uses_tail(b)) fill(b->p, b->id, b->n, usable);
}

static void release(block *b, stats *st) {
  check(b, 0, b->n, "pattern lost before free");
  st->bytes_checked += b->n;
  if (uses_tail(b)) {
    check(b, b->n, malloc_usable_size(b->p), "usable tail lost");
    __atomic_fetch_add(&tail_checks, malloc_usable_size(b->p) > b->n,
                       __ATOMIC_RELAXED);
  }
  free(b->p);
  st->frees++;
}

/* realloc to n: the kept prefix must keep its pattern, a grown part gets
 * it.  Returns 0 when the block is gone (n == 0 frees it, as in glibc). */
static int resize(block *b, size_t n, stats *st) {
  check(b, 0, b->n, "pattern lost before realloc");
  st->bytes_checked += b->n;
  unsigned char *q = t_realloc(b->p, n);
  if (n == 0) {
    if (q) fail("realloc to 0 returned a block", b->id, 0, 0);
    st->realloc_to_zero++;
    return 0;
  }
  if (!q) {
    fail("realloc failed", b->id, n, 0);
    return 1; /* the old block is still valid */
  }
  st->alloc[A_REALLOC]++;
  size_t keep = b->n < n ? b->n : n;
  b->p = q;
  check(b, 0, keep, "pattern lost by realloc");
  st->bytes_checked += keep;
  b->n = n;
  adopt(b, 16, 0, keep, st);
  return 1;
}

/* A new size for a block of n bytes (growth stops at 8 MiB). */
static size_t new_size(uint64_t *s, size_t n) {
  size_t r = below(s, 10);
  if (r == 0) return 0;
  if (r < 4) return n < 4 * 1024 * 1024 ? n * 2 + below(s, 64) + 1 : n / 4;
  if (r < 6) return n / 2 + 1;
  if (r < 8) return boundary(s);
  if (r < 9) return 128 * 1024 + below(s, 1024 * 1024);
  return pick_size(s) + 1;
}

/* A handed-over block: reallocated to a size its id gives (whoever takes
 * it does the same), checked and freed. */
static void receive(block b, stats *st) {
  uint64_t h = mix(b.id ^ 0x5a5a);
  size_t n = (h & 15) == 0 ? 128 * 1024 + h % (512 * 1024) : 1 + h % 2048;
  if (resize(&b, n, st)) release(&b, st);
  st->received++;
}

/* ---- one thread's run ---- */
typedef struct worker {
  int gen, index;
  uint64_t rng, seq;
  block live[LIVE_MAX];
  int n_live;
  stats st;
} worker;

static uint64_t new_id(worker *w) {
  return ((uint64_t)(w->gen + 1) << 48) | ((uint64_t)w->index << 40) |
         ++w->seq;
}

static size_t pow2_above(size_t a) {
  size_t p = 1;
  while (p < a) p <<= 1;
  return p;
}

/* A new block from one of the six APIs; 0 if the call failed. */
static int allocate(worker *w, int api, block *b) {
  uint64_t *s = &w->rng;
  size_t n = pick_size(s), align = 16, k;
  void *p = NULL;
  switch (api) {
  case A_MALLOC:
    p = t_malloc(n);
    break;
  case A_CALLOC:
    k = (size_t[]){1, 8, 24, 100}[below(s, 4)];
    n = n / k * k;
    p = t_calloc(n / k, k);
    break;
  case A_REALLOC:
    p = t_realloc(NULL, n);
    break;
  case A_POSIX: {
    align = (size_t)8 << below(s, 14); /* 8 .. 64 KiB */
    int rc = t_posix_memalign(&p, align, n);
    if (rc) p = NULL;
    break;
  }
  case A_ALIGNED: /* C11: the size is a multiple of the alignment */
    align = (size_t)1 << below(s, 13);
    n = (n + align - 1) & ~(align - 1);
    p = t_aligned_alloc(align, n);
    break;
  case A_MEMALIGN: /* glibc rounds other alignments up to a power of 2 */
    align = (size_t)1 << below(s, 17);
    if (below(s, 4) == 0) align += align / 2;
    p = t_memalign(align, n);
    align = pow2_above(align);
    break;
  }
  b->p = p;
  b->n = n;
  b->id = new_id(w);
  if (!p) {
    fail(api_name[api], b->id, n, align);
    return 0;
  }
  w->st.alloc[api]++;
  adopt(b, align, api == A_CALLOC, 0, &w->st);
  return 1;
}

/* Which API a step in [0, 50) allocates with. */
static int api_of(size_t r) {
  return r < 20 ? A_MALLOC : r < 28 ? A_CALLOC : r < 33 ? A_REALLOC
       : r < 39 ? A_POSIX : r < 44 ? A_ALIGNED : A_MEMALIGN;
}

static void drop(worker *w, int i) { w->live[i] = w->live[--w->n_live]; }

static void step(worker *w) {
  size_t r = below(&w->rng, 100);
  int i = (int)below(&w->rng, w->n_live ? (size_t)w->n_live : 1);
  block got;
  if (r < 50) {
    if (w->n_live == LIVE_MAX) {
      release(&w->live[i], &w->st);
      drop(w, i);
    }
    if (allocate(w, api_of(r), &w->live[w->n_live])) w->n_live++;
  } else if (!w->n_live) {
    return;
  } else if (r < 65) {
    if (!resize(&w->live[i], new_size(&w->rng, w->live[i].n), &w->st))
      drop(w, i);
  } else if (r < 80) {
    release(&w->live[i], &w->st);
    drop(w, i);
  } else if (r < 92) {
    inbox_put((w->index + 1) % THREADS, w->live[i]);
    w->st.handed++;
    drop(w, i);
  } else if (inbox_take(w->index, &got)) {
    receive(got, &w->st);
  }
}

static stats total;
static pthread_mutex_t total_mu = PTHREAD_MUTEX_INITIALIZER;

static void add_stats(const stats *st) {
  pthread_mutex_lock(&total_mu);
  for (int a = 0; a < N_API; a++) total.alloc[a] += st->alloc[a];
  total.frees += st->frees;
  total.realloc_to_zero += st->realloc_to_zero;
  total.handed += st->handed;
  total.received += st->received;
  total.bytes_checked += st->bytes_checked;
  total.zero_bytes_checked += st->zero_bytes_checked;
  pthread_mutex_unlock(&total_mu);
}

/* A thread first takes over what the last generation left in its inbox
 * (blocks of threads that have exited), and hands every block it still
 * holds at the end to the next thread's inbox. */
static void *worker_main(void *arg) {
  worker *w = arg;
  block got;
  if (w->gen > 0)
    while (inbox_take(w->index, &got)) receive(got, &w->st);
  for (int k = 0; k < OPS; k++) step(w);
  while (w->n_live) {
    inbox_put((w->index + 1) % THREADS, w->live[0]);
    w->st.handed++;
    drop(w, 0);
  }
  add_stats(&w->st);
  return NULL;
}

/* ---- the main thread ---- */
/* After a join: four callocs at each class edge -40, -8 and 0, which
 * reach the slots the joined threads' caches gave back. */
static void calloc_sweep(uint64_t gen, stats *st) {
  static const int delta[] = {-40, -8, 0};
  for (size_t e = 0; e < N_EDGES; e++)
    for (int d = 0; d < 3; d++) {
      block b[4];
      for (int k = 0; k < 4; k++) {
        b[k].n = class_edge(e) + delta[d];
        b[k].id = (gen << 48) | ((uint64_t)0xff << 40) | (e * 16 + d * 4 + k);
        b[k].p = t_calloc(1, b[k].n);
        if (!b[k].p) {
          fail("calloc", b[k].id, b[k].n, 0);
          b[k].n = 0; /* free(NULL) below */
          continue;
        }
        st->alloc[A_CALLOC]++;
        adopt(&b[k], 16, 1, 0, st);
      }
      for (int k = 0; k < 4; k++) release(&b[k], st);
    }
}

/* What glibc answers to impossible or degenerate requests; returns how
 * many checks ran. */
static int edge_checks(stats *st) {
  int n = 0;
#define EXPECT(cond, what)            \
  do {                                \
    n++;                              \
    if (!(cond)) fail(what, 0, 0, 0); \
  } while (0)
  void *p, *q;
  errno = 0;
  p = t_malloc(SIZE_MAX - 4096);
  EXPECT(!p && errno == ENOMEM, "malloc(huge) must fail with ENOMEM");
  errno = 0;
  p = t_calloc(SIZE_MAX / 2, 3);
  EXPECT(!p && errno == ENOMEM, "calloc overflow must fail with ENOMEM");
  block b = {t_malloc(100), 100, 0xed9e};
  EXPECT(b.p != NULL, "malloc(100)");
  if (!b.p) return n;
  st->alloc[A_MALLOC]++;
  adopt(&b, 16, 0, 0, st);
  errno = 0;
  q = t_realloc(b.p, SIZE_MAX - 4096);
  EXPECT(!q && errno == ENOMEM, "realloc(huge) must fail with ENOMEM");
  release(&b, st); /* and the block must be intact */
  p = (void *)1;
  EXPECT(t_posix_memalign(&p, 12, 8) == EINVAL && p == (void *)1,
         "posix_memalign(12) must fail with EINVAL, *out untouched");
  EXPECT(t_posix_memalign(&p, 4, 8) == EINVAL, "posix_memalign(4)");
  EXPECT(t_posix_memalign(&p, 0, 8) == EINVAL, "posix_memalign(0)");
  EXPECT(t_posix_memalign(&p, 64, SIZE_MAX - 4096) == ENOMEM,
         "posix_memalign(huge) must fail with ENOMEM");
  errno = 0;
  p = t_memalign(((size_t)1 << 63) + 1, 16);
  EXPECT(!p && errno == EINVAL, "memalign(2^63 + 1) must fail with EINVAL");
  p = t_malloc(0);
  q = t_malloc(0);
  EXPECT(p && q && p != q, "malloc(0) gives distinct blocks");
  st->alloc[A_MALLOC] += (p != NULL) + (q != NULL);
  st->frees += (p != NULL) + (q != NULL);
  free(p);
  free(q);
  p = t_realloc(NULL, 0);
  EXPECT(p != NULL, "realloc(NULL, 0) gives a block");
  st->alloc[A_REALLOC] += p != NULL;
  st->frees += p != NULL;
  free(p);
  free(NULL);
  return n;
#undef EXPECT
}

int main(void) {
  static worker w[THREADS];
  stats st;
  memset(&st, 0, sizeof st);
  for (int i = 0; i < THREADS; i++) pthread_mutex_init(&inbox[i].mu, NULL);
  int edges = edge_checks(&st);
  for (int g = 0; g < GENERATIONS; g++) {
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
      memset(&w[i], 0, sizeof w[i]);
      w[i].gen = g;
      w[i].index = i;
      w[i].rng = SEED ^ mix((uint64_t)(g * THREADS + i));
      if (pthread_create(&t[i], NULL, worker_main, &w[i]) != 0) {
        fprintf(stderr, "torture: pthread_create failed\n");
        return 1;
      }
    }
    for (int i = 0; i < THREADS; i++) pthread_join(t[i], NULL);
    calloc_sweep((uint64_t)g, &st);
  }
  block got;
  for (int i = 0; i < THREADS; i++)
    while (inbox_take(i, &got)) receive(got, &st);
  add_stats(&st);

  uint64_t allocs = 0;
  for (int a = 0; a < N_API; a++) allocs += total.alloc[a];
  printf("seed=%#llx generations=%d threads=%d ops=%d\n",
         (unsigned long long)SEED, GENERATIONS, THREADS, OPS);
  printf("allocations=%llu\n", (unsigned long long)allocs);
  for (int a = 0; a < N_API; a++)
    printf("%s=%llu\n", api_name[a], (unsigned long long)total.alloc[a]);
  printf("frees=%llu realloc_to_zero=%llu\n", (unsigned long long)total.frees,
         (unsigned long long)total.realloc_to_zero);
  printf("handed=%llu received=%llu\n", (unsigned long long)total.handed,
         (unsigned long long)total.received);
  printf("bytes_checked=%llu zero_bytes_checked=%llu\n",
         (unsigned long long)total.bytes_checked,
         (unsigned long long)total.zero_bytes_checked);
  printf("edge_checks=%d\n", edges);
  printf("failures=%d\n", failures);
  fprintf(stderr, "torture: blocks whose usable tail was checked: %llu\n",
          (unsigned long long)tail_checks);
  return failures ? 1 : 0;
}
