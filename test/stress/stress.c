/* stress.c - the program test_stress.py profiles: one scenario per argv[1].
 *
 * Every allocation goes through a one-line site_* function, so the test
 * finds each site by its leaf function name and compares AllocCount and
 * TotalSize with the numbers the scenario's parameters imply.  Parameters
 * (thread and iteration counts) are fixed here and mirrored in the test.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOI __attribute__((noinline))

NOI void *site_thread(size_t n) { return malloc(n); }
NOI void *site_xalloc(size_t n) { return malloc(n); }
NOI void *site_rmalloc(size_t n) { return malloc(n); }
NOI void *site_realloc(void *p, size_t n) { return realloc(p, n); }
NOI void *site_calloc(size_t n) { return calloc(n, 4); }
NOI void *site_prefork(size_t n) { return malloc(n); }
NOI void *site_child(size_t n) { return malloc(n); }
NOI void *site_postfork(size_t n) { return malloc(n); }
NOI void *site_bg(size_t n) { return malloc(n); }
NOI void *site_main(size_t n) { return malloc(n); }
NOI void *site_sig(size_t n) { return malloc(n); }
NOI void *site_timer(size_t n) { return malloc(n); }
NOI void *site_loop(size_t n) { return malloc(n); }
NOI void *site_ctor(size_t n) { return malloc(n); }
NOI void *site_tls(size_t n) { return malloc(n); }
NOI void *site_dl(size_t n) { return malloc(n); }

static void touch(void *p, size_t n) { memset(p, 0xab, n); }

/* ---- threads: same-site allocation, cross-thread frees, realloc chains -- */
#define T_THREADS 8
#define T_ITERS 300
#define X_ITEMS 400 /* per producer; 4 producers, 4 consumers */
#define R_CHAIN 40

static void *q_items[64];
static int q_head, q_tail, q_len;
static pthread_mutex_t q_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_cv = PTHREAD_COND_INITIALIZER;

static void q_put(void *p) {
  pthread_mutex_lock(&q_mu);
  while (q_len == 64) pthread_cond_wait(&q_cv, &q_mu);
  q_items[q_tail] = p;
  q_tail = (q_tail + 1) % 64;
  q_len++;
  pthread_cond_broadcast(&q_cv);
  pthread_mutex_unlock(&q_mu);
}

static void *q_get(void) {
  pthread_mutex_lock(&q_mu);
  while (q_len == 0) pthread_cond_wait(&q_cv, &q_mu);
  void *p = q_items[q_head];
  q_head = (q_head + 1) % 64;
  q_len--;
  pthread_cond_broadcast(&q_cv);
  pthread_mutex_unlock(&q_mu);
  return p;
}

static void *worker(void *arg) {
  long id = (long)arg;
  for (int i = 0; i < T_ITERS; i++) {
    size_t n = 16 + (size_t)(i % 4) * 8;
    void *p = site_thread(n);
    touch(p, n);
    free(p);
  }
  void *r = site_rmalloc(8);
  for (int k = 1; k <= R_CHAIN; k++) {
    r = site_realloc(r, 8 + 16 * (size_t)k);
    touch(r, 8 + 16 * (size_t)k);
  }
  free(r);
  int *c = site_calloc((size_t)id + 1);
  free(c);
  return NULL;
}

static void *producer(void *arg) {
  (void)arg;
  for (int i = 0; i < X_ITEMS; i++) {
    void *p = site_xalloc(32);
    touch(p, 32);
    q_put(p);
  }
  return NULL;
}

static void *consumer(void *arg) {
  (void)arg;
  for (int i = 0; i < X_ITEMS; i++) free(q_get());
  return NULL;
}

static int run_threads(void) {
  pthread_t t[T_THREADS + 8];
  for (long i = 0; i < T_THREADS; i++)
    pthread_create(&t[i], NULL, worker, (void *)i);
  for (int i = 0; i < 4; i++) {
    pthread_create(&t[T_THREADS + i], NULL, producer, NULL);
    pthread_create(&t[T_THREADS + 4 + i], NULL, consumer, NULL);
  }
  for (int i = 0; i < T_THREADS + 8; i++) pthread_join(t[i], NULL);
  return 0;
}

/* ---- background allocators for fork / exit scenarios -------------------- */
static volatile int bg_stop;
static int bg_started;

static void *bg(void *arg) {
  (void)arg;
  int first = 1;
  while (!bg_stop) {
    void *p = site_bg(40);
    touch(p, 40);
    free(p);
    if (first) __atomic_add_fetch(&bg_started, 1, __ATOMIC_SEQ_CST);
    first = 0;
  }
  return NULL;
}

#define BG_THREADS 4

/* Returns once every thread has freed a block, so site_bg is never empty. */
static void start_bg(pthread_t *t) {
  for (int i = 0; i < BG_THREADS; i++) pthread_create(&t[i], NULL, bg, NULL);
  while (__atomic_load_n(&bg_started, __ATOMIC_SEQ_CST) < BG_THREADS) usleep(100);
}

static void stop_bg(pthread_t *t) {
  bg_stop = 1;
  for (int i = 0; i < BG_THREADS; i++) pthread_join(t[i], NULL);
}

static void alloc_free_n(void *(*site)(size_t), int count, size_t n) {
  for (int i = 0; i < count; i++) {
    void *p = site(n);
    touch(p, n);
    free(p);
  }
}

/* Parent: 10 prefork, 5 postfork.  Child: 7 child. */
static int run_fork(void) {
  pthread_t t[BG_THREADS];
  start_bg(t);
  alloc_free_n(site_prefork, 10, 24);
  pid_t pid = fork();
  if (pid == 0) {
    alloc_free_n(site_child, 7, 56);
    exit(0);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  stop_bg(t);
  alloc_free_n(site_postfork, 5, 72);
  printf("child=%d status=%d\n", (int)pid, st);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 3;
}

/* 9 site_main blocks, then exit() while the background threads allocate. */
static int run_exit(void) {
  pthread_t t[BG_THREADS];
  start_bg(t);
  alloc_free_n(site_main, 9, 88);
  exit(0);
}

/* ---- signal handlers that allocate -------------------------------------- */
#define SIG_RAISES 50
#define TIMER_LOOPS 200000
static volatile sig_atomic_t timer_hits;

static void on_usr1(int s) {
  (void)s;
  void *p = site_sig(24);
  touch(p, 24);
  free(p);
}

static void on_alarm(int s) {
  (void)s;
  void *p = site_timer(8);
  touch(p, 8);
  free(p);
  /* Handlers run concurrently on several threads in signal_mt: a plain ++
   * would lose counts the runtime (rightly) records. */
  __atomic_fetch_add(&timer_hits, 1, __ATOMIC_RELAXED);
}

/* SIGALRM every `usec` microseconds, handled by on_alarm. */
static void start_alarm_timer(long usec) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval it = {{0, usec}, {0, usec}};
  setitimer(ITIMER_REAL, &it, NULL);
}

/* Stop the timer, ignore late deliveries, report how many handlers ran. */
static void stop_alarm_timer(void) {
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  signal(SIGALRM, SIG_IGN);
  printf("timer_hits=%d\n", (int)timer_hits);
}

static int run_signal(void) {
  signal(SIGUSR1, on_usr1);
  for (int i = 0; i < SIG_RAISES; i++) raise(SIGUSR1);
  start_alarm_timer(200);
  for (int i = 0; i < TIMER_LOOPS; i++) {
    void *p = site_loop(16 + (size_t)(i & 7));
    free(p);
  }
  stop_alarm_timer();
  return 0;
}

/* The same with 4 threads allocating: the signal lands in whichever
 * thread, often inside malloc or free. */
#define MT_THREADS 4
#define MT_LOOPS 50000
static void *mt_loop(void *arg) {
  (void)arg;
  for (int i = 0; i < MT_LOOPS; i++) free(site_loop(16 + (size_t)(i & 7)));
  return NULL;
}

static int run_signal_mt(void) {
  start_alarm_timer(100);
  pthread_t t[MT_THREADS];
  for (int i = 0; i < MT_THREADS; i++) pthread_create(&t[i], NULL, mt_loop, NULL);
  for (int i = 0; i < MT_THREADS; i++) pthread_join(t[i], NULL);
  stop_alarm_timer();
  return 0;
}

/* The same while threads start and end all the time (the timer every
 * 20 us): handlers land in threads that are registering or unregistering
 * with the allocator, or that hold one of its locks. */
#define SPAWN_ROUNDS 300
#define SPAWN_THREADS 4
#define SPAWN_LOOPS 500
NOI void *site_spawn(size_t n) { return malloc(n); }
static void *spawn_loop(void *arg) {
  (void)arg;
  for (int i = 0; i < SPAWN_LOOPS; i++) free(site_spawn(32));
  return NULL;
}

static int run_signal_spawn(void) {
  start_alarm_timer(20);
  for (int r = 0; r < SPAWN_ROUNDS; r++) {
    pthread_t t[SPAWN_THREADS];
    for (int i = 0; i < SPAWN_THREADS; i++)
      pthread_create(&t[i], NULL, spawn_loop, NULL);
    for (int i = 0; i < SPAWN_THREADS; i++) pthread_join(t[i], NULL);
  }
  stop_alarm_timer();
  return 0;
}

/* ---- dlopen of an instrumented library --------------------------------- */
static int run_dlopen(const char *lib) {
  void *h = dlopen(lib, RTLD_NOW);
  if (!h) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 4;
  }
  void (*f)(int) = (void (*)(int))dlsym(h, "lib_alloc");
  if (!f) return 5;
  f(13);
  alloc_free_n(site_dl, 3, 104);
  return 0;
}

/* ---- constructors and thread-local destructors -------------------------- */
#define CTOR_BLOCKS 5
#define TLS_THREADS 4
static void *ctor_blocks[CTOR_BLOCKS];
static pthread_key_t tls_key;
static _Thread_local void *tls_ptr;

__attribute__((constructor(101))) static void early(void) {
  for (int i = 0; i < CTOR_BLOCKS; i++) {
    ctor_blocks[i] = site_ctor(48);
    touch(ctor_blocks[i], 48);
  }
}

static void tls_dtor(void *p) { free(p); }

static void *tls_worker(void *arg) {
  (void)arg;
  tls_ptr = site_tls(64);
  touch(tls_ptr, 64);
  pthread_setspecific(tls_key, tls_ptr);
  return NULL;
}

static int run_ctor(void) {
  for (int i = 0; i < CTOR_BLOCKS; i++) free(ctor_blocks[i]);
  pthread_key_create(&tls_key, tls_dtor);
  pthread_t t[TLS_THREADS];
  for (int i = 0; i < TLS_THREADS; i++)
    pthread_create(&t[i], NULL, tls_worker, NULL);
  for (int i = 0; i < TLS_THREADS; i++) pthread_join(t[i], NULL);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  const char *m = argv[1];
  if (!strcmp(m, "threads")) return run_threads();
  if (!strcmp(m, "fork")) return run_fork();
  if (!strcmp(m, "exit")) return run_exit();
  if (!strcmp(m, "signal")) return run_signal();
  if (!strcmp(m, "signal_mt")) return run_signal_mt();
  if (!strcmp(m, "signal_spawn")) return run_signal_spawn();
  if (!strcmp(m, "dlopen") && argc > 2) return run_dlopen(argv[2]);
  if (!strcmp(m, "ctor")) return run_ctor();
  return 2;
}
