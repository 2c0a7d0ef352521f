/* rt_internal.h - what the modules' headers all bring: the rules every
 * runtime file follows, the symbol-visibility and branch-hint macros, and
 * the caller frame the entry points hand down (rt_caller).  What each
 * module offers is in its own header (runtime/README.md lists them).
 *
 * Rules every runtime file follows:
 *  - Never call the public malloc family or stdio: the runtime *is* malloc.
 *    Use the rt_mem* / rt_str* helpers (rt_libc.h) and raw syscalls
 *    (rt_sys.h).
 *  - Public entry points capture the caller with RT_CALLER() so that no
 *    frame of the runtime is ever recorded: the recorded stack starts at the
 *    return address into the code that called the entry point.
 *  - Everything not part of the ABI is hidden (RT_HIDDEN); ABI symbols are
 *    RT_EXPORT.
 */
#ifndef MEMPROF_RT_INTERNAL_H
#define MEMPROF_RT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#define RT_EXPORT __attribute__((visibility("default")))
/* A runtime function that calls into libc on the program's behalf
 * (pthread_create): what libc allocates there is the program's, and the
 * stack walk leaves this function's frame out (rt_stack.c), so that no
 * runtime frame is recorded. */
#define RT_CALLS_LIBC __attribute__((section("memprof_calls_libc"), noinline))
#define RT_HIDDEN __attribute__((visibility("hidden")))
/* A second ABI name for an entry point of the same file (same code, so
 * RT_CALLER in it still sees the caller's frame). */
#if defined(__GNUC__) && !defined(__clang__)
/* gcc wants the alias to carry the attributes libc's headers give the target. */
#define RT_ALIAS(target) __attribute__((alias(#target), copy(target)))
#else
#define RT_ALIAS(target) __attribute__((alias(#target)))
#endif
#define RT_LIKELY(x) __builtin_expect(!!(x), 1)
#define RT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* The frame of the public entry point.  The core reads the return address
 * from it and walks the frame-pointer chain of the caller from there.  Every
 * entry point must be compiled with frame pointers (the runtime is). */
typedef struct rt_caller {
  uintptr_t fp; /* __builtin_frame_address(0) of the entry point */
} rt_caller;
#define RT_CALLER() ((rt_caller){(uintptr_t)__builtin_frame_address(0)})


#endif
