/* heap.h - how the process heap is set up for one run of the tool. */
#ifndef PROFDATA_HEAP_H
#define PROFDATA_HEAP_H

#include <stdint.h>

/* Configure malloc for a run that builds a profile of some tens of MB:
 * one heap, kept between files.  Call once, first thing in main. */
void mp_heap_setup(void);

/* Fault in, ahead of use, the heap a run over input_bytes of profiles
 * (the largest of largest_input) will need (heap.c says how much).  Only
 * speed changes. */
void mp_heap_prefill(uint64_t input_bytes, uint64_t largest_input);

#endif
