/* mib_offsets.c - test_schema.py: prints offset and size of every mpf_mib field and the raw header sizes (built with -I at the repository root). */
#include <stdio.h>
#include <stddef.h>
#include "include/internal/memprof_format.h"
int main(void) {
#define MIB_FIELD(Tag, Name, CType, Merge) \
  printf("%d %s %zu %zu\n", Tag, #Name, offsetof(mpf_mib, Name), sizeof(((mpf_mib *)0)->Name));
#include "include/MIBDef.inc"
#undef MIB_FIELD
  printf("sizes %zu %zu %zu\n", sizeof(mpf_raw_header), sizeof(mpf_raw_segment), sizeof(mpf_mib));
  return 0;
}
