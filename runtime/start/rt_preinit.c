/* rt_preinit.c - run the runtime's initialisation before any constructor.
 *
 * Only in the static archive: a .preinit_array slot is allowed in
 * executables alone.  Instrumented code reads the shadow base in every
 * function, so the shadow must exist before the first .init_array entry. */
#include "runtime/base/rt_state.h"

static void preinit(void) { rt_init_core(); }

__attribute__((section(".preinit_array"), used)) static void (*const
    rt_preinit_entry)(void) = preinit;
