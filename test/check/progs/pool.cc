// pool.cc - a helper in a translation unit of its own (as a library's
// out-of-line template is): clang hints its call when it compiles this
// file, and LTO then inlines it into each caller in app.cc, where the
// hint travels with it.
#include <cstddef>

double *grow(size_t n) { return new double[n]; }
