/* early_hook_lib.c - test_rt_lazy_shadow.py: a library built without
 * -fmemory-profile whose constructor calls the program's early_hook
 * (early_hook.c) before the program's own constructors ran. */
extern void early_hook(void) __attribute__((weak));

__attribute__((constructor)) static void call_early_hook(void) {
  if (early_hook)
    early_hook();
}
