// native.cc - parted.cc's make_native and its two callers, in a
// translation unit built without LTO: clang hints make_native's call
// ambiguous when it compiles this file, and LTO's context disambiguation
// never sees it.
#include <cstddef>

__attribute__((noinline)) char *make_native(size_t n) { return new char[n]; }
__attribute__((noinline)) char *native_hot(size_t n) { return make_native(n); }
__attribute__((noinline)) char *native_cold(size_t n) { return make_native(n); }
