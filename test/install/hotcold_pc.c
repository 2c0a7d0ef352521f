/* hotcold_pc.c - built with `pkg-config --cflags --libs memprof-hotcold`
 * against an installed prefix: a hint below 128 lands in the installed
 * library's cold arena, 254 does not.  Prints "1 0". */
#include <stdio.h>
#include <stdlib.h>

#include <memprof_hotcold.h>

/* operator new(size_t, __hot_cold_t), by its mangled name. */
void *_Znwm12__hot_cold_t(size_t n, unsigned char hint);

int main(void) {
  void *c = _Znwm12__hot_cold_t(100, 1), *h = _Znwm12__hot_cold_t(100, 254);
  printf("%d %d\n", memprof_hotcold_is_cold(c), memprof_hotcold_is_cold(h));
  free(c);
  free(h);
  return 0;
}
