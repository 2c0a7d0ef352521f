/* rt_roots_api.c - the public calls of the roots census (roots=1;
 * include/memprof_interface.h): named roots and a census on demand.  Each
 * is a no-op when roots is off. */
#include "runtime/base/rt_flags.h"
#include "runtime/output/rt_roots.h"

RT_EXPORT void __memprof_add_root(const char *name, const void *ptr) {
  rt_roots_add_named(name, ptr);
}

RT_EXPORT void __memprof_remove_root(const void *ptr) { rt_roots_remove_named(ptr); }

RT_EXPORT void __memprof_heap_census(void) {
  if (!rt_flags.roots)
    return;
  RT_ROOTS_ENTER();
  rt_roots_census(RT_ROOTS_ON_DEMAND);
}
