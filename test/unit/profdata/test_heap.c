/* test_heap.c - the tool's heap (profdata/tool/heap.c): after mp_heap_setup, a
 * block of some MB (a raw profile's worth of keys) comes from the brk heap
 * rather than from a mapping of its own, and freeing it keeps the memory
 * in the heap, so the next input reuses pages already faulted in; no part
 * of the heap is advised for huge pages ("hg" in smaps' VmFlags).  Without
 * the setup, glibc maps such a block and unmaps it at free. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profdata/tool/heap.h"
#include "test/unit/check.h"

#define MB ((size_t)1 << 20)

/* Whether [heap] (the brk heap) has VmFlag `flag`; -1 if there is none. */
static int heap_flag(const char *flag) {
  FILE *f = fopen("/proc/self/smaps", "r");
  char line[512];
  int in_heap = 0, seen = 0, found = 0;
  while (f && fgets(line, sizeof line, f)) {
    size_t hex = strspn(line, "0123456789abcdef");
    if (hex > 0 && line[hex] == '-') {
      in_heap = strstr(line, "[heap]") != NULL;
      seen |= in_heap;
    } else if (in_heap && strncmp(line, "VmFlags:", 8) == 0) {
      for (char *p = line + 8; (p = strstr(p, flag)); p++)
        if (p[-1] == ' ' && (p[2] == ' ' || p[2] == '\n')) found = 1;
    }
  }
  if (f) fclose(f);
  return seen ? found : -1;
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#endif

int main(void) {
#ifdef UNDER_ASAN
  /* ASan's malloc replaces glibc's heap, which is what heap.c configures. */
  printf("SKIP: built with AddressSanitizer\n");
  return 0;
#endif
  mp_heap_setup();
  uintptr_t top0 = (uintptr_t)sbrk(0);
  char *p = malloc(16 * MB);
  CHECK(p, "malloc(16 MiB) returned NULL");
  if (!p) return check_result();
  memset(p, 1, 16 * MB);
  uintptr_t top1 = (uintptr_t)sbrk(0);
  CHECK((uintptr_t)p >= top0 && (uintptr_t)p + 16 * MB <= top1,
        "a 16 MiB block is not in the brk heap (%p, heap %#lx-%#lx)",
        (void *)p, (unsigned long)top0, (unsigned long)top1);
  free(p);
  uintptr_t top2 = (uintptr_t)sbrk(0);
  CHECK(top2 >= top1, "freeing 16 MiB shrank the heap by %lu bytes",
        (unsigned long)(top1 - top2));
  int hg = heap_flag("hg");
  CHECK(hg == 0, "the heap is %s",
        hg < 0 ? "missing from smaps" : "advised for huge pages");
  return check_result();
}
