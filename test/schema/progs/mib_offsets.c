/* mib_offsets.c - test_schema.py: prints offset and size of every mp_mib field and the raw header sizes (built with -I at the repository root). */
#include <stdio.h>
#include <stddef.h>
#include "include/internal/memprof_format.h"
int main(void) {
#define MIB_FIELD(Tag, Name, CType, Merge) \
  printf("%d %s %zu %zu\n", Tag, #Name, offsetof(mp_mib, Name), sizeof(((mp_mib *)0)->Name));
#include "include/MIBDef.inc"
#undef MIB_FIELD
  printf("sizes %zu %zu %zu\n", sizeof(mp_raw_header), sizeof(mp_raw_segment), sizeof(mp_mib));
  return 0;
}
