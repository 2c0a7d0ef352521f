/* heap.h - how the process heap is set up for one run of the tool. */
#ifndef PROFDATA_HEAP_H
#define PROFDATA_HEAP_H

#include <stddef.h>
#include <stdint.h>

/* Configure malloc for a run that builds a profile of some tens of MB:
 * one heap, kept between files, backed by transparent huge pages where the
 * kernel offers them, past its first 12 MiB.  Call once, first thing in
 * main. */
void mp_heap_setup(void);

/* A step of the run is done (call before the first and after each): if
 * the heap's growth since the last one cost kernel time at a rate only
 * slow huge pages explain, the rest of the heap goes to small pages for
 * the rest of the run (heap.c says why). */
void mp_heap_checkpoint(void);

/* For tests: huge pages count as slow when a step's kernel time exceeds
 * other_us + us_per_mb per MiB gained (defaults 2000 and 1000). */
void mp_heap_set_slow_rate(int64_t us_per_mb, int64_t other_us);
/* For tests, before mp_heap_setup: small pages for the heap's first
 * `bytes` instead of 12 MiB. */
void mp_heap_set_small_first(size_t bytes);

#endif
