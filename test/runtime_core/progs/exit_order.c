/* exit_order.c - test_core_lifecycle.py: atexit handlers and destructors run before the exit dump. */
#include <stdlib.h>
static char *g;
static void bye(void) { g[1] = 5; g[2] = 6; free(g); }
__attribute__((destructor)) static void dtor(void) { g = malloc(24); g[0] = 1; }
int main(void) {
  g = malloc(50);
  g[0] = 1;
  atexit(bye);
  return 0;
}
