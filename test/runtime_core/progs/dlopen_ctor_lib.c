/* dlopen_ctor_lib.c - test_core_lifecycle.py: a library whose constructor allocates and frees, for dlopen_dumps.c. */
#include <stdlib.h>
__attribute__((constructor)) static void init(void) {
  for (int i = 0; i < 20; i++)
    free(malloc(16 + i));
}
