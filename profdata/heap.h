/* heap.h - how the process heap is set up for one run of the tool. */
#ifndef PROFDATA_HEAP_H
#define PROFDATA_HEAP_H

#include <stddef.h>
#include <stdint.h>

/* Configure malloc for a run that builds a profile of some tens of MB:
 * one heap, kept between files, backed by transparent huge pages where the
 * kernel offers them.  Call once, first thing in main. */
void mp_heap_setup(void);

/* About `bytes` more heap is coming soon: fault its huge pages in on a
 * helper thread meanwhile, switching the rest of the heap to small pages
 * if huge ones come slowly (heap.c says why).  Finish joins the helper;
 * call it before the run's end and before warming again. */
void mp_heap_warm_start(size_t bytes);
void mp_heap_warm_finish(void);

/* For tests: a huge page that takes longer than `ns` to fault in is slow
 * (default 1.5 ms). */
void mp_heap_set_slow_ns(int64_t ns);

#endif
