/* rt_text.c - the text profile (print_text=1, terse with print_terse=1)
 * and the allocator statistics (__memprof_print_accumulated_stats, atexit=1).
 * Frames are printed as "in <function> (<module>+0x<offset>)" (rt_symtab.c). */
#include "rt_core.h"

/* Total*100/count printed as q.rr, like LLVM. */
static void put_avg(rt_buf *b, uint64_t total, uint32_t count) {
  uint64_t v = count ? total * 100 / count : 0;
  rt_buf_printf(b, "%llu.%02llu", (unsigned long long)(v / 100),
                (unsigned long long)(v % 100));
}

static void mib_full(uint32_t id, const rt_mib_entry *e, void *ctx) {
  rt_buf *b = ctx;
  const mp_mib *m = &e->mib;
  rt_buf_printf(b, "Memory allocation stack id = %u\n", id);
  rt_buf_printf(b, "\talloc_count %u, size (ave/min/max) ", m->AllocCount);
  put_avg(b, m->TotalSize, m->AllocCount);
  rt_buf_printf(b, " / %u / %u\n", m->MinSize, m->MaxSize);
  rt_buf_printf(b, "\taccess_count (ave/min/max): ");
  put_avg(b, m->TotalAccessCount, m->AllocCount);
  rt_buf_printf(b, " / %llu / %llu\n", (unsigned long long)m->MinAccessCount,
                (unsigned long long)m->MaxAccessCount);
  rt_buf_printf(b, "\tlifetime (ave/min/max): ");
  put_avg(b, m->TotalLifetime, m->AllocCount);
  rt_buf_printf(b, " / %u / %u\n", m->MinLifetime, m->MaxLifetime);
  rt_buf_printf(b,
                "\tnum migrated: %u, num lifetime overlaps: %u, num same alloc "
                "cpu: %u, num same dealloc_cpu: %u\n",
                m->NumMigratedCpu, m->NumLifetimeOverlaps, m->NumSameAllocCpu,
                m->NumSameDeallocCpu);
  rt_buf_printf(b, "AccessCountHistogram[%u]: ", m->AccessHistogramSize);
  for (uint32_t i = 0; i < m->AccessHistogramSize && i < 32; i++)
    rt_buf_printf(b, "%llu ", (unsigned long long)e->hist[i]);
  rt_buf_printf(b, "\n");
}

static void mib_terse(uint32_t id, const rt_mib_entry *e, void *ctx) {
  rt_buf *b = ctx;
  const mp_mib *m = &e->mib;
  rt_buf_printf(b, "MIB:%u/%u/", id, m->AllocCount);
  put_avg(b, m->TotalSize, m->AllocCount);
  rt_buf_printf(b, "/%u/%u/", m->MinSize, m->MaxSize);
  put_avg(b, m->TotalAccessCount, m->AllocCount);
  rt_buf_printf(b, "/%llu/%llu/", (unsigned long long)m->MinAccessCount,
                (unsigned long long)m->MaxAccessCount);
  put_avg(b, m->TotalLifetime, m->AllocCount);
  rt_buf_printf(b, "/%u/%u/%u/%u/%u/%u\n", m->MinLifetime, m->MaxLifetime,
                m->NumMigratedCpu, m->NumLifetimeOverlaps, m->NumSameAllocCpu,
                m->NumSameDeallocCpu);
}

static void put_frame(rt_buf *b, uint32_t i, uintptr_t pc) {
  rt_buf_printf(b, "    #%u 0x%lx", i, (unsigned long)(pc - 1));
  if (!rt_nonblocking) { /* dladdr takes the loader lock */
    const char *mod;
    uintptr_t off = 0;
    const char *fn = rt_symbolize(pc - 1, &mod, &off);
    if (fn)
      rt_buf_printf(b, " in %s", fn);
    if (mod)
      rt_buf_printf(b, " (%s+0x%lx)", mod, (unsigned long)off);
  }
  rt_buf_printf(b, "\n");
}

static void print_stack(rt_buf *b, uint32_t id) {
  uintptr_t pcs[RT_MAX_STACK];
  uint32_t k = rt_stack_get(id, pcs);
  rt_buf_printf(b, "Stack for id %u:\n", id);
  for (uint32_t i = 0; i < k; i++)
    put_frame(b, i, pcs[i]);
  rt_buf_printf(b, "\n");
}

static void count_cb(uint32_t id, const rt_mib_entry *e, void *ctx) {
  (void)id;
  (void)e;
  ++*(size_t *)ctx;
}

static void note_id(uint32_t id, const rt_mib_entry *e, void *ctx) {
  (void)e;
  rt_text *t = ctx;
  if (t->n < t->cap / sizeof(uint32_t))
    t->ids[t->n++] = id;
}

void rt_text_mibs(rt_text *t, int terse) {
  size_t n = 0;
  rt_mib_for_each(count_cb, &n);
  t->cap = rt_round_up(n ? n * sizeof(uint32_t) : 1, RT_PAGE);
  t->ids = rt_mmap_anon(t->cap, 0);
  if (!t->ids) {
    t->b.failed = 1;
    t->cap = 0;
    return;
  }
  if (!terse)
    rt_buf_printf(&t->b, "Recorded MIBs (incl. live on exit):\n");
  rt_mib_for_each(terse ? mib_terse : mib_full, &t->b);
  rt_mib_for_each(note_id, t);
}

void rt_text_stacks(rt_text *t) {
  for (size_t i = 0; i < t->n; i++)
    print_stack(&t->b, t->ids[i]);
}

void rt_text_free(rt_text *t) {
  rt_buf_free(&t->b);
  if (t->ids)
    rt_munmap(t->ids, t->cap);
  t->ids = NULL;
  t->n = t->cap = 0;
}

void rt_print_stats(void) {
  rt_heap_stats s;
  rt_heap_get_stats(&s);
  rt_buf b = {0};
  rt_buf_printf(&b, "Stats: %lluM malloced (%lluM for overhead) by %llu calls\n",
                (unsigned long long)(s.allocated >> 20), 0ULL,
                (unsigned long long)s.mallocs);
  rt_buf_printf(&b, "Stats: %lluM freed by %llu calls\n",
                (unsigned long long)(s.freed >> 20), (unsigned long long)s.frees);
  rt_buf_printf(&b, "Stats: %lluM in use by live blocks\n",
                (unsigned long long)(s.bytes_live >> 20));
  rt_buf_printf(&b, "Stats: %lluM mmaped for size classes, %lluM for large blocks\n",
                (unsigned long long)(s.heap_mapped >> 20),
                (unsigned long long)(s.large_mapped >> 20));
  if (!b.failed)
    rt_output_write(b.p, b.len);
  rt_buf_free(&b);
}
