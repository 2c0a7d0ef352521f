/* fine_classes_dso.c - an instrumented module for progs/fine_classes.c to
 * dlopen: built with -fmemory-profile, its constructor calls
 * __memprof_init, from which the runtime counts accesses. */
int fine_classes_dso_value(int x) { return x + 1; }
