/* dso_alloc.c - test_rt_dso.py: an instrumented shared library whose one allocation site, function NAME, is checked per DSO. */
// defaults: -DNAME=alloc_a
#include <stdlib.h>
char *NAME(int n) {
  char *p = malloc(n); // @alloc
  for (int i = 0; i < n; i++)
    p[i] = 1;
  return p;
}
