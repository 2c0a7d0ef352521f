/* symbolizer.c - placeholder until the libdw symbolizer lands. */
#include "symbolizer.h"
