/* dso_main.c - test_rt_dso.py: calls liballoc_a and liballoc_b's sites and allocates at one site of its own. */
#include <stdlib.h>
char *alloc_a(int);
char *alloc_b(int);
int main(void) {
  for (int i = 0; i < 3; i++)
    free(alloc_a(40));
  char *live = alloc_b(100);
  char *m = malloc(24); // @main_malloc
  m[0] = 1;
  free(m);
  return live[99] == 1 ? 0 : 1;
}
