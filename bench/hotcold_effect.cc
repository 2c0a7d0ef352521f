// hotcold_effect.cc - a program written to show what hot/cold placement
// buys: hot nodes allocated interleaved with long-lived records of the
// same size that are written once and then never touched, then many
// passes of pointer chasing over the hot nodes only, then an idle period.
//
//   hotcold_effect N_HOT COLD_PER_HOT PASSES IDLE_MS
//
// With one heap, every hot node shares its cache lines and pages with cold
// records; with the cold records in their own arena the hot nodes are
// packed, so the pass walks 1 + COLD_PER_HOT times fewer lines and pages.
// The program reports, from /proc/self/smaps_rollup (Referenced bits
// cleared through /proc/self/clear_refs after the build):
//   hot_s=        CPU seconds of the passes (the thread's CPU clock: on a
//                 shared machine, time spent descheduled is not the
//                 program's)
//   rss_kb=       resident after the passes
//   touched_kb=   of which the passes touched (Referenced)
//   idle_rss_kb=  resident after IDLE_MS of sleep
//   idle_untouched_kb= resident after the sleep but not touched by the
//                 passes: memory the kernel can reclaim without slowing
//                 the hot work
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

struct Hot {
  Hot *next;
  long value;
  long pad[4];
};
struct Cold {
  long id;
  char payload[40]; // never written: the record is cold but for its id
};
static_assert(sizeof(Hot) == sizeof(Cold), "one size class, interleaved");

__attribute__((noinline)) Hot *make_hot(long v) {
  Hot *h = new Hot;
  h->next = nullptr;
  h->value = v;
  return h;
}

__attribute__((noinline)) Cold *make_cold(long id) {
  Cold *c = new Cold;
  c->id = id;
  return c;
}

static void rollup(long *rss, long *ref) {
  FILE *f = std::fopen("/proc/self/smaps_rollup", "r");
  char line[256];
  *rss = *ref = -1;
  while (f && std::fgets(line, sizeof line, f)) {
    std::sscanf(line, "Rss: %ld kB", rss);
    std::sscanf(line, "Referenced: %ld kB", ref);
  }
  if (f)
    std::fclose(f);
}

static double thread_cpu_s() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void clear_refs() {
  FILE *f = std::fopen("/proc/self/clear_refs", "w");
  if (f) {
    std::fputs("1", f);
    std::fclose(f);
  }
}

int main(int argc, char **argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s N_HOT COLD_PER_HOT PASSES IDLE_MS\n", argv[0]);
    return 2;
  }
  long n = std::atol(argv[1]), per = std::atol(argv[2]), passes = std::atol(argv[3]);
  int idle_ms = std::atoi(argv[4]);
  std::vector<Hot *> hot(n);
  std::vector<Cold *> cold(n * per);
  for (long i = 0; i < n; i++) {
    hot[i] = make_hot(i);
    for (long j = 0; j < per; j++)
      cold[i * per + j] = make_cold(i * per + j);
  }
  // Link the hot nodes in a fixed pseudo-random order: each step is a
  // dependent load from anywhere in the hot set.
  std::vector<long> order(n);
  for (long i = 0; i < n; i++)
    order[i] = i;
  unsigned long x = 88172645463325252UL;
  for (long i = n - 1; i > 0; i--) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    long k = (long)(x % (unsigned long)(i + 1));
    long t = order[i];
    order[i] = order[k], order[k] = t;
  }
  for (long i = 0; i + 1 < n; i++)
    hot[order[i]]->next = hot[order[i + 1]];
  Hot *head = hot[order[0]];

  clear_refs();
  double t0 = thread_cpu_s();
  long sum = 0;
  for (long p = 0; p < passes; p++)
    for (Hot *h = head; h; h = h->next)
      sum += h->value++;
  double hot_s = thread_cpu_s() - t0;
  long rss, touched, idle_rss, ignore;
  rollup(&rss, &touched);
  std::this_thread::sleep_for(std::chrono::milliseconds(idle_ms));
  rollup(&idle_rss, &ignore);
  std::printf("hot_s=%.4f rss_kb=%ld touched_kb=%ld idle_rss_kb=%ld idle_untouched_kb=%ld "
              "sum=%ld\n",
              hot_s, rss, touched, idle_rss, idle_rss - touched, sum);
  long ids = 0;
  for (Cold *c : cold) {
    ids += c->id;
    delete c;
  }
  for (Hot *h : hot)
    delete h;
  return ids == n * per * (n * per - 1) / 2 ? 0 : 1;
}
