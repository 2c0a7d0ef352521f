/* bench/malloc_pairs.c: allocator-path microbenchmark for the runtimes.
 *
 * Usage: malloc_pairs THREADS PAIRS_PER_THREAD
 * Each thread keeps a ring of 16 live blocks and repeatedly frees the
 * oldest and allocates a new one (sizes 16..496 bytes, touched once), so
 * every pair goes through the runtime's malloc and free hooks with a little
 * shadow traffic, as in real programs. Prints the aggregate rate measured
 * between thread start and join (process start-up and the exit-time profile
 * dump are excluded; the harness measures those separately). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define RING 16

static long pairs_per_thread;

static __attribute__((noinline)) char *alloc_block(unsigned i)
{
    size_t n = 16 + (i * 37u % 31u) * 16u;
    char *p = malloc(n);
    if (!p)
        abort();
    p[0] = (char)i;
    p[n - 1] = (char)i;
    return p;
}

static void *worker(void *arg)
{
    char *ring[RING] = {0};
    unsigned seed = (unsigned)(size_t)arg;
    long sum = 0;
    for (long i = 0; i < pairs_per_thread; i++) {
        unsigned slot = (unsigned)i % RING;
        if (ring[slot]) {
            sum += ring[slot][0];
            free(ring[slot]);
        }
        ring[slot] = alloc_block(seed + (unsigned)i);
    }
    for (int s = 0; s < RING; s++)
        free(ring[s]);
    return (void *)sum;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s THREADS PAIRS_PER_THREAD\n", argv[0]);
        return 2;
    }
    int threads = atoi(argv[1]);
    pairs_per_thread = atol(argv[2]);
    if (threads < 1 || threads > 64 || pairs_per_thread < 1) {
        fprintf(stderr, "%s: bad THREADS or PAIRS_PER_THREAD\n", argv[0]);
        return 2;
    }
    pthread_t tid[64];
    double t0 = now();
    for (int t = 0; t < threads; t++)
        if (pthread_create(&tid[t], NULL, worker, (void *)(size_t)(t * 7919)))
            abort();
    for (int t = 0; t < threads; t++)
        pthread_join(tid[t], NULL);
    double dt = now() - t0;
    printf("pairs_per_sec=%.0f\n", (double)threads * pairs_per_thread / dt);
    return 0;
}
