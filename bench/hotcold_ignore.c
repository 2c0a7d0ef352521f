/* hotcold_ignore.c - the __hot_cold_t entry points clang-22 emits, each
 * forwarding to the plain operator new of the same form (libstdc++'s, on
 * glibc malloc), the hint ignored: the "hints, glibc ignores them" build
 * of bench/hotcold.py.  The size-returning forms return the requested size. */
#include <stddef.h>

void *_Znwm(size_t);
void *_ZnwmRKSt9nothrow_t(size_t, const void *);
void *_ZnwmSt11align_val_t(size_t, size_t);
void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t, size_t, const void *);

void *_Znwm12__hot_cold_t(size_t n, unsigned h) {
  (void)h;
  return _Znwm(n);
}
void *_Znam12__hot_cold_t(size_t n, unsigned h) __attribute__((alias("_Znwm12__hot_cold_t")));

void *_ZnwmRKSt9nothrow_t12__hot_cold_t(size_t n, const void *t, unsigned h) {
  (void)h;
  return _ZnwmRKSt9nothrow_t(n, t);
}
void *_ZnamRKSt9nothrow_t12__hot_cold_t(size_t n, const void *t, unsigned h)
    __attribute__((alias("_ZnwmRKSt9nothrow_t12__hot_cold_t")));

void *_ZnwmSt11align_val_t12__hot_cold_t(size_t n, size_t a, unsigned h) {
  (void)h;
  return _ZnwmSt11align_val_t(n, a);
}
void *_ZnamSt11align_val_t12__hot_cold_t(size_t n, size_t a, unsigned h)
    __attribute__((alias("_ZnwmSt11align_val_t12__hot_cold_t")));

void *_ZnwmSt11align_val_tRKSt9nothrow_t12__hot_cold_t(size_t n, size_t a, const void *t,
                                                       unsigned h) {
  (void)h;
  return _ZnwmSt11align_val_tRKSt9nothrow_t(n, a, t);
}
void *_ZnamSt11align_val_tRKSt9nothrow_t12__hot_cold_t(size_t n, size_t a, const void *t,
                                                       unsigned h)
    __attribute__((alias("_ZnwmSt11align_val_tRKSt9nothrow_t12__hot_cold_t")));

typedef struct {
  void *p;
  size_t n;
} sized_ptr;

sized_ptr __size_returning_new_hot_cold(size_t n, unsigned h) {
  (void)h;
  sized_ptr r = {_Znwm(n), n};
  return r;
}

sized_ptr __size_returning_new_aligned_hot_cold(size_t n, size_t a, unsigned h) {
  (void)h;
  sized_ptr r = {_ZnwmSt11align_val_t(n, a), n};
  return r;
}
