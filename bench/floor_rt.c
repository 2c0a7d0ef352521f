/* bench/floor_rt.c: the "floor" runtime for the overhead benchmark.
 *
 * It gives a program compiled with -fmemory-profile exactly what its inline
 * instrumentation needs (a writable shadow, the init and version-check
 * symbols, the mem* callbacks) and nothing else: allocations go to plain
 * glibc malloc, nothing is recorded and no profile is written. A run linked
 * with it measures the cost of the compiler's shadow increments alone, so
 * (runtime time - floor time) is what a runtime adds on top of that.
 * Not part of the project's runtime; bench only. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* One counter byte per 8 application bytes for every user address below
 * 2^47 (x86-64 4-level paging): B + (a >> 3) stays inside the mapping. */
#define FLOOR_SHADOW_BYTES ((1ULL << 47) >> 3)

uintptr_t __memprof_shadow_memory_dynamic_address;

/* Weak fallbacks for the data each instrumented object normally defines. */
__attribute__((weak)) char __memprof_profile_filename[1];
__attribute__((weak)) char __memprof_histogram;
__attribute__((weak)) char __memprof_default_options_str[1];

static void floor_map_shadow(void)
{
    if (__memprof_shadow_memory_dynamic_address)
        return;
    void *p = mmap(NULL, FLOOR_SHADOW_BYTES, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        perror("floor_rt: shadow mmap");
        abort();
    }
    __memprof_shadow_memory_dynamic_address = (uintptr_t)p;
}

/* .preinit_array runs before every .init_array constructor, so the shadow
 * exists before any instrumented constructor touches it. */
__attribute__((section(".preinit_array"), used))
static void (*floor_preinit)(void) = floor_map_shadow;

void __memprof_init(void) { floor_map_shadow(); }
void __memprof_version_mismatch_check_v1(void) {}

/* Range callbacks: same default-mode counting as the real runtimes, so the
 * floor pays the same per-access price for memcpy/memset. */
static void floor_count_range(const void *p, size_t n)
{
    uintptr_t b = __memprof_shadow_memory_dynamic_address;
    for (uintptr_t a = (uintptr_t)p; a < (uintptr_t)p + n; a += 8)
        ++*(uint64_t *)(((a & ~(uintptr_t)63) >> 3) + b);
}

void *__memprof_memcpy(void *d, const void *s, size_t n)
{
    floor_count_range(s, n);
    floor_count_range(d, n);
    return memcpy(d, s, n);
}

void *__memprof_memmove(void *d, const void *s, size_t n)
{
    floor_count_range(s, n);
    floor_count_range(d, n);
    return memmove(d, s, n);
}

void *__memprof_memset(void *d, int c, size_t n)
{
    floor_count_range(d, n);
    return memset(d, c, n);
}

void __memprof_record_access(const volatile void *p)
{
    floor_count_range((const void *)p, 1);
}

void __memprof_record_access_range(const volatile void *p, size_t n)
{
    floor_count_range((const void *)p, n);
}

int __memprof_profile_dump(void) { return 0; }
void __memprof_profile_reset(void) {}
