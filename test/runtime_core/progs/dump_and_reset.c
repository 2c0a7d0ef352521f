/* dump_and_reset.c - test_core_dump.py: an explicit dump, then the exit dump; with two arguments, the file renamed and the profile reset. */
#include <stdio.h>
#include <stdlib.h>
#include <sanitizer/memprof_interface.h>
#ifndef EXIT_CODE
#define EXIT_CODE 0
#endif
#ifdef DEFAULT_OPTIONS /* a string: the options the program builds in */
const char *__memprof_default_options(void) {
  return DEFAULT_OPTIONS;
}
#endif
int main(int argc, char **argv) {
  char *freed = malloc(100); // @freed
  for (int i = 0; i < 100; i++) freed[i] = 1;   /* 100 stores */
  free(freed);
  char *live = malloc(40); // @live
  for (int i = 0; i < 10; i++) live[i] = 2;     /* 10 stores before dump */
  __memprof_profile_dump();
  for (int i = 0; i < 5; i++) live[i] = 3;      /* 5 more before exit */
  if (argc > 2) {
    rename(argv[1], argv[2]);
    __memprof_profile_reset();
  }
#ifdef PRINT_DONE
  printf("done\n");
#endif
  return EXIT_CODE;
}
