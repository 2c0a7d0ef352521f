/* huge_tables.c - test_rt_huge_tables.py: prints, for each mapping of
 * 63.5 to 64 GiB (the runtime's 64 GiB reservation for its permanent
 * tables, less its small-page prefix when that is a mapping of its own),
 * "hg" when the kernel lists MADV_HUGEPAGE among its flags, else "nohg". */
#include <stdio.h>
#include <string.h>

int main(void) {
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f)
    return 2;
  char line[512];
  int want = 0;
  unsigned long lo, hi;
  while (fgets(line, sizeof line, f)) {
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, ' ') &&
        line[strspn(line, "0123456789abcdef")] == '-') {
      unsigned long gib64 = 64ul << 30;
      want = hi - lo <= gib64 && hi - lo >= gib64 - (512ul << 20);
    } else if (want && !strncmp(line, "VmFlags:", 8)) {
      printf("%s\n", strstr(line, " hg") ? "hg" : "nohg");
      want = 0;
    }
  }
  fclose(f);
  return 0;
}
