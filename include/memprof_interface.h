/* memprof_interface.h - the public interface of libmemprof.
 *
 * Source-compatible with LLVM's <sanitizer/memprof_interface.h>: a program
 * written against LLVM's runtime builds unchanged against ours.
 */
#ifndef MEMPROF_INTERFACE_H
#define MEMPROF_INTERFACE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Count an access to `n` bytes at `addr` (one count per 8 bytes), or to one
 * address.  Useful for memory touched by uninstrumented code. */
void __memprof_record_access_range(void const volatile *addr, size_t n);
void __memprof_record_access(void const volatile *addr);

/* Print allocator statistics to the runtime's output. */
void __memprof_print_accumulated_stats(void);

/* Override to supply default options; MEMPROF_OPTIONS still wins. */
const char *__memprof_default_options(void);

/* Write a profile now (live objects included).  Returns 0 on success.
 * The exit-time dump still happens unless dump_at_exit=0. */
int __memprof_profile_dump(void);

/* Close the output file so the next dump starts a new one (truncating). */
void __memprof_profile_reset(void);

/* Who holds the memory (MEMPROF_OPTIONS=roots=1; docs/roots-format.md).
 * Name a root: the live block that ptr points into (and what it reaches)
 * is attributed to `name` rather than to the global or stack that holds
 * ptr.  Registering ptr again renames it; remove it before freeing.  No-ops
 * when roots is off. */
void __memprof_add_root(const char *name, const void *ptr);
void __memprof_remove_root(const void *ptr);

/* Scan the live heap from its roots now; the census goes into the
 * `.roots` file the next dump writes.  A no-op when roots is off. */
void __memprof_heap_census(void);

#ifdef __cplusplus
}
#endif

#endif
