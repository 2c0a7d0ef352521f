/* reset_truncates.c - test_core_dump.py: a reset without a rename makes the next dump truncate the file. */
#include <stdlib.h>
#include <sanitizer/memprof_interface.h>
int main(void) {
  char *a = malloc(100);
  for (int i = 0; i < 100; i++) a[i] = 1;   /* 100 */
  free(a);
  char *live = malloc(40); // @live
  for (int i = 0; i < 10; i++) live[i] = 2; /* 10 */
  __memprof_profile_dump();
  __memprof_profile_reset();                /* the next write truncates */
  char *b = malloc(200);
  for (int i = 0; i < 20; i++) b[i] = 3;    /* 20 */
  free(b);
  for (int i = 0; i < 5; i++) live[i] = 4;  /* 5 more */
  __memprof_profile_dump();
  return 0;
}
