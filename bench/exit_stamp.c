/* bench/exit_stamp.c: marks when a benchmarked program's own work ends.
 *
 * Linked (uninstrumented) into every variant of the runtime benchmarks with
 * -Wl,--wrap=main, so __wrap_main runs first thing in main. If
 * BENCH_EXIT_STAMP names a file, it registers an atexit handler that writes
 * CLOCK_MONOTONIC there. Runtimes that write their profile at exit do so
 * from a handler registered at init (before main) or from .fini_array; both
 * run after this one (atexit handlers run in reverse order), so
 * (time the parent sees the child exit) - (stamp) = exit-time profile dump
 * plus ordinary process teardown (the floor variant measures the latter). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void exit_stamp_write(void)
{
    const char *path = getenv("BENCH_EXIT_STAMP");
    if (!path || !*path)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    char buf[64];
    int n = snprintf(buf, sizeof buf, "%lld.%09ld\n", (long long)ts.tv_sec,
                     ts.tv_nsec);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return;
    if (write(fd, buf, (size_t)n) != n)
        perror("exit_stamp: write");
    close(fd);
}

int __real_main(int argc, char **argv, char **envp);

int __wrap_main(int argc, char **argv, char **envp)
{
    atexit(exit_stamp_write);
    return __real_main(argc, argv, envp);
}
