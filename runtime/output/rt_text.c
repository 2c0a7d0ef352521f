/* rt_text.c - the text profile (print_text=1, terse with print_terse=1;
 * LLVM's layout, with a line before the MIBs when sampled or not
 * instrumented) and the allocator statistics (__memprof_print_accumulated_stats, atexit=1).
 * Stacks are printed by rt_frames.c. */
#include "rt_frames.h"
#include "rt_output.h"
#include "rt_text.h"
#include "runtime/base/rt_sys.h"
#include "runtime/heap/rt_heap.h"
#include "runtime/record/rt_mibtable.h"
#include "runtime/record/rt_stack.h"

/* Total*100/count printed as q.rr, like LLVM. */
static void put_avg(rt_buf *b, uint64_t total, uint32_t count) {
  uint64_t v = count ? total * 100 / count : 0;
  rt_buf_printf(b, "%llu.%02llu", (unsigned long long)(v / 100),
                (unsigned long long)(v % 100));
}

static void mib_full(uint32_t id, const rt_mib_entry *e, void *ctx) {
  rt_buf *b = ctx;
  const mpf_mib *m = &e->mib;
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
  const mpf_mib *m = &e->mib;
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

/* How the profile was recorded, in memprof-profdata's words
 * (profdata/report/report_facts.c). */
static void recorded(rt_buf *b, const mpf_raw_note *n) {
  if (n->sample_interval)
    rt_buf_printf(b, "Sampled every %llu bytes on average: counts, sizes and "
                     "lifetimes are estimates\n",
                  (unsigned long long)n->sample_interval);
  if (n->flags & MPF_RAW_NOTE_UNINSTRUMENTED)
    rt_buf_printf(b, "Not instrumented (preloaded): no access counts; no "
                     "hot/cold verdicts\n");
}

void rt_text_mibs(rt_text *t, int terse, const mpf_raw_note *note) {
  size_t n = 0;
  rt_mib_for_each(count_cb, &n);
  t->cap = rt_round_up(n ? n * sizeof(uint32_t) : 1, RT_PAGE);
  t->ids = rt_mmap_anon(t->cap, 0);
  if (!t->ids) {
    t->b.failed = 1;
    t->cap = 0;
    return;
  }
  if (note)
    recorded(&t->b, note);
  if (!terse)
    rt_buf_printf(&t->b, "Recorded MIBs (incl. live on exit):\n");
  rt_mib_for_each(terse ? mib_terse : mib_full, &t->b);
  rt_mib_for_each(note_id, t);
}

void rt_text_stacks(rt_text *t) { rt_frames_print_ids(&t->b, t->ids, t->n); }

void rt_text_free(rt_text *t) {
  rt_buf_free(&t->b);
  if (t->ids)
    rt_munmap(t->ids, t->cap);
  t->ids = NULL;
  t->n = t->cap = 0;
}

/* LLVM's lines (memprof_stats.cpp), on stderr whatever log_path says: a
 * profile file must hold nothing but the profile.  Ours has no block
 * headers ("overhead" 0), frees at once ("really freed" = freed), keeps no
 * per-class counts (an empty "by size class" list) and maps memory as one
 * heap reservation made at start plus one mapping per large block; a last
 * line of ours counts the large blocks realloc resized (remap_large). */
void rt_print_stats(void) {
  rt_heap_stats s;
  rt_heap_get_stats(&s);
  uint64_t reallocs = s.reallocs, realloced = s.realloced, maps, unmaps, unmapped, remaps;
  rt_large_map_counts(&maps, &unmaps, &unmapped, &remaps);
  uint64_t now = s.heap_mapped + s.large_mapped;
  rt_buf b = {0};
  rt_buf_printf(&b, "Stats: %lluM malloced (0M for overhead) by %llu calls\n",
                (unsigned long long)(s.allocated >> 20), (unsigned long long)s.mallocs);
  rt_buf_printf(&b, "Stats: %lluM realloced by %llu calls\n",
                (unsigned long long)(realloced >> 20), (unsigned long long)reallocs);
  rt_buf_printf(&b, "Stats: %lluM freed by %llu calls\n",
                (unsigned long long)(s.freed >> 20), (unsigned long long)s.frees);
  rt_buf_printf(&b, "Stats: %lluM really freed by %llu calls\n",
                (unsigned long long)(s.freed >> 20), (unsigned long long)s.frees);
  rt_buf_printf(&b, "Stats: %lluM (%lluM-%lluM) mmaped; %llu maps, %llu unmaps\n",
                (unsigned long long)(now >> 20),
                (unsigned long long)((now + unmapped) >> 20),
                (unsigned long long)(unmapped >> 20), (unsigned long long)(maps + 1),
                (unsigned long long)unmaps);
  rt_buf_printf(&b, "  mallocs by size class: \n");
  rt_buf_printf(&b, "Stats: malloc large: %llu\n", (unsigned long long)maps);
  rt_buf_printf(&b, "Stats: StackDepot: %u ids\n", rt_stack_max_id());
  rt_buf_printf(&b, "Stats: large blocks resized by realloc (remap_large): %llu\n",
                (unsigned long long)remaps);
  if (!b.failed)
    rt_write(2, b.p, b.len);
  rt_buf_free(&b);
}

void rt_print_exit_stats(void) {
  static const char head[] = "MemProfiler exit stats:\n";
  rt_write(2, head, sizeof head - 1);
  rt_print_stats();
}

/* Appends "\t0x<start>-0x<end>\t<file>\n" for the maps line l[0..n). */
static void map_line(rt_buf *b, const char *l, size_t n) {
  uintptr_t lo = 0, hi = 0;
  size_t i = 0;
  int field = 0;
  for (; i < n && field < 2; i++) {
    char c = l[i];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d >= 0)
      *(field ? &hi : &lo) = *(field ? &hi : &lo) * 16 + (uintptr_t)d;
    else
      field++;
  }
  /* the path is the sixth field, after perms, offset, device and inode */
  for (int f = 2; f < 6 && i < n; f++) {
    while (i < n && l[i] != ' ')
      i++;
    while (i < n && l[i] == ' ')
      i++;
  }
  rt_buf_printf(b, "\t0x%012lx-0x%012lx\t", (unsigned long)lo, (unsigned long)hi);
  rt_buf_append(b, l + i, n - i);
  rt_buf_append(b, "\n", 1);
}

/* sanitizer_common's DumpProcessMap, from /proc/self/maps. */
void rt_print_module_map(int to_stderr) {
  rt_buf b = {0}, maps = {0};
  int fd = rt_open("/proc/self/maps", 0 /* O_RDONLY */, 0);
  char chunk[8192];
  long r;
  while (fd >= 0 && (r = rt_syscall(0 /* read */, fd, chunk, sizeof chunk)) > 0)
    rt_buf_append(&maps, chunk, (size_t)r);
  if (fd >= 0)
    rt_close(fd);
  rt_buf_printf(&b, "==%d==Process memory map follows:\n", rt_getpid());
  for (size_t i = 0, start = 0; i < maps.len; i++)
    if (maps.p[i] == '\n') {
      map_line(&b, maps.p + start, i - start);
      start = i + 1;
    }
  rt_buf_printf(&b, "==%d==End of process memory map.\n", rt_getpid());
  if (!b.failed) {
    if (to_stderr)
      rt_write(2, b.p, b.len);
    else
      rt_output_write(b.p, b.len);
  }
  rt_buf_free(&maps);
  rt_buf_free(&b);
}
