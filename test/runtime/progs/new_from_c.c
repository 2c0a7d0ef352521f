/* new_from_c.c - test_rt_new_delete.py: operator new and delete called from a C program (no libstdc++). */
#include <stddef.h>
void *_Znwm(size_t);
void _ZdlPv(void *);
int main(void) {
  int *p = _Znwm(40); // @c_new
  for (int i = 0; i < 10; i++) p[i] = i;
  _ZdlPv(p);
  return 0;
}
