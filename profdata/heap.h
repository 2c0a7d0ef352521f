/* heap.h - how the process heap is set up for one run of the tool. */
#ifndef PROFDATA_HEAP_H
#define PROFDATA_HEAP_H

/* Configure malloc for a run that builds a profile of some tens of MB:
 * one heap, kept between files.  Call once, first thing in main. */
void mp_heap_setup(void);

#endif
