/* placeholder: removed when the runtime core lands */
#include "rt_internal.h"
MP_HIDDEN int mp_inited;
MP_HIDDEN void mp_init_core(void) {}
