/* rt_dump.c - writing one profile: module segments from dl_iterate_phdr,
 * the raw v3/v4/v5 serializer (docs/raw-format.md) and the dump procedure
 * (freeze the table, add every live block, serialize or print, empty the
 * table).  Buffers are mmap'd; the output is written with write(2). */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <sys/syscall.h>

#include "include/internal/loaded_build_id.h"
#include "rt_dump.h"
#include "rt_output.h"
#include "rt_roots.h"
#include "rt_text.h"
#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_libc.h"
#include "runtime/base/rt_lock.h"
#include "runtime/base/rt_state.h"
#include "runtime/base/rt_sys.h"
#include "runtime/heap/rt_heap.h"
#include "runtime/record/rt_mibtable.h"
#include "runtime/record/rt_sample.h"
#include "runtime/record/rt_stack.h"
#include "runtime/record/rt_timeline.h"

#define MAX_SEGS 1024


static rt_mutex dump_mu = RT_MUTEX_INIT;
/* Held around dl_iterate_phdr, and across fork: glibc's fork does not
 * reset the loader lock dl_iterate_phdr takes, so a child forked while a
 * dump was listing modules would hang in its own first dump. */
static rt_mutex modules_mu = RT_MUTEX_INIT;

/* ---- segments ---------------------------------------------------------- */

/* The segments of the loaded modules, and each one's module path for the
 * note (docs/raw-format.md, section 7): path_at[i], path_len[i] into
 * paths.  A path that does not fit in PATHS_CAP is left empty. */
#define PATHS_CAP (256u << 10)
typedef struct seg_list {
  mpf_raw_segment *seg;
  uint32_t *path_at, *path_len;
  char *paths;
  size_t paths_used;
  uint64_t n;
  int modules;
} seg_list;

static size_t seg_list_bytes(void) {
  return MAX_SEGS * (sizeof(mpf_raw_segment) + 2 * sizeof(uint32_t)) + PATHS_CAP;
}

static int seg_list_init(seg_list *l) {
  unsigned char *m = rt_mmap_anon(seg_list_bytes(), 0);
  if (!m)
    return -1;
  *l = (seg_list){0};
  l->seg = (mpf_raw_segment *)m;
  l->path_at = (uint32_t *)(m + MAX_SEGS * sizeof(mpf_raw_segment));
  l->path_len = l->path_at + MAX_SEGS;
  l->paths = (char *)(l->path_len + MAX_SEGS);
  return 0;
}

/* The module's path, copied (dlclose may free dlpi_name once the loader
 * lock is released); the main program's from /proc/self/exe.  Returns its
 * offset in l->paths and its length in *len (0: unknown). */
static uint32_t keep_path(seg_list *l, const char *name, uint32_t *len) {
  char exe[4096];
  if (!name || !name[0]) {
    long n = rt_syscall(SYS_readlink, "/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    name = exe;
  }
  size_t k = rt_strlen(name);
  uint32_t at = (uint32_t)l->paths_used;
  *len = 0;
  if (k > PATHS_CAP - l->paths_used)
    return at;
  rt_memcpy(l->paths + at, name, k);
  l->paths_used += k;
  *len = (uint32_t)k;
  return at;
}

static int segment_cb(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  seg_list *l = data;
  int first = l->modules++ == 0; /* the main executable has no name */
  if (!first && (!info->dlpi_name || !info->dlpi_name[0]))
    return 0;
  uint8_t id[MPF_BUILD_ID_MAX] = {0};
  uint64_t id_len = mpf_loaded_build_id(info, id, MPF_BUILD_ID_MAX);
  uint32_t path_len = 0, path_at = 0;
  int path_kept = 0;
  for (int i = 0; i < info->dlpi_phnum && l->n < MAX_SEGS; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
      continue;
    mpf_raw_segment *s = &l->seg[l->n++];
    s->start = info->dlpi_addr + ph->p_vaddr;
    s->end = s->start + ph->p_memsz;
    s->offset = info->dlpi_addr;
    s->build_id_size = id_len;
    rt_memcpy(s->build_id, id, sizeof id);
    if (!path_kept++)
      path_at = keep_path(l, first ? NULL : info->dlpi_name, &path_len);
    l->path_at[l->n - 1] = path_at;
    l->path_len[l->n - 1] = path_len;
  }
  return 0;
}

/* ---- raw serializer ----------------------------------------------------- */

typedef struct sizes {
  uint64_t n, hist_entries, stack_bytes;
  uint64_t n_temporary; /* entries with temporaries > 0 */
} sizes;

static void count_cb(uint32_t id, const rt_mib_entry *e, void *ctx) {
  sizes *s = ctx;
  uint32_t k = rt_stack_depth(id);
  s->n++;
  s->n_temporary += e->temporaries != 0;
  s->hist_entries += e->mib.AccessHistogramSize;
  s->stack_bytes += 16 + 8ULL * k;
}

/* The profile is streamed through one small buffer: building all of it in
 * memory first cost a page fault per 4 KiB of a large profile and as much
 * peak RSS. */
#define WRITE_CHUNK (256u << 10)

typedef struct writer {
  unsigned char *buf;
  size_t len;
  uint64_t off; /* bytes of the profile produced so far */
  int version, failed;
} writer;

static void flush(writer *w) {
  if (w->len && !w->failed && rt_output_write(w->buf, w->len) != 0)
    w->failed = 1;
  w->len = 0;
}

static void put_bytes(writer *w, const void *src, size_t n) {
  const unsigned char *p = src;
  while (n) {
    size_t k = WRITE_CHUNK - w->len < n ? WRITE_CHUNK - w->len : n;
    rt_memcpy(w->buf + w->len, p, k);
    w->len += k;
    w->off += k;
    p += k;
    n -= k;
    if (w->len == WRITE_CHUNK)
      flush(w);
  }
}
typedef uint64_t __attribute__((aligned(1), may_alias)) unaligned_u64;

/* Zero padding up to profile offset `to`. */
static void pad_to(writer *w, uint64_t to) {
  static const unsigned char zeros[8];
  while (w->off < to)
    put_bytes(w, zeros, to - w->off < 8 ? to - w->off : 8);
}

/* Room for n more bytes at the end of the buffer (n <= WRITE_CHUNK),
 * flushing first if needed; commit(w, n) once they are written.  A whole
 * record written through one reservation keeps its length in a register:
 * a put_u64 per value reloads w->len after every store (the stores may
 * alias the writer). */
static inline unsigned char *reserve(writer *w, size_t n) {
  if (WRITE_CHUNK - w->len < n)
    flush(w);
  return w->buf + w->len;
}

static inline void commit(writer *w, size_t n) {
  w->len += n;
  w->off += n;
  if (w->len == WRITE_CHUNK)
    flush(w);
}

/* Most of a profile is u64s (ids, PCs): stored straight into the buffer. */
static inline void put_u64(writer *w, uint64_t v) {
  *(unaligned_u64 *)reserve(w, 8) = v;
  commit(w, 8);
}

static void mib_cb(uint32_t id, const rt_mib_entry *e, void *ctx) {
  writer *w = ctx;
  put_u64(w, id);
  if (w->version == 3) {
    put_bytes(w, &e->mib, MPF_MIB_SIZE_V3);
    return;
  }
  put_bytes(w, &e->mib, MPF_MIB_SIZE_V4);
  for (uint32_t i = 0; i < e->mib.AccessHistogramSize; i++) {
    if (w->version == 4) {
      put_u64(w, e->hist[i]);
    } else {
      uint16_t v = mpf_hist_encode_v5(e->hist[i]);
      put_bytes(w, &v, 2);
    }
  }
}

static void stack_cb(uint32_t id, const rt_mib_entry *e, void *ctx) {
  (void)e;
  writer *w = ctx;
  uintptr_t pcs[RT_MAX_STACK];
  uint32_t k = rt_stack_get(id, pcs);
  size_t n = 16 + 8 * (size_t)k;
  unaligned_u64 *o = (unaligned_u64 *)reserve(w, n);
  o[0] = id;
  o[1] = k;
  for (uint32_t i = 0; i < k; i++)
    o[2 + i] = pcs[i] - 1; /* return address - 1: inside the call */
  commit(w, n);
}

static uint64_t mib_region_bytes(int version, const sizes *s) {
  if (version == 3)
    return mpf_round_up8(8 + s->n * (8 + MPF_MIB_SIZE_V3));
  uint64_t per = version == 4 ? 8 : 2;
  return mpf_round_up8(8 + s->n * (8 + MPF_MIB_SIZE_V4) + per * s->hist_entries);
}

/* The note after the stacks (memprof_format.h): whether the profile holds
 * estimates, and whether any code counted accesses; 0 if nothing to say. */
static int make_note(mpf_raw_note *n) {
  *n = (mpf_raw_note){MPF_RAW_NOTE_MAGIC, sizeof *n, rt_sample_interval, 0};
  if (!__atomic_load_n(&rt_instrumented, __ATOMIC_RELAXED))
    n->flags |= MPF_RAW_NOTE_UNINSTRUMENTED;
  return n->sample_interval || n->flags;
}

/* Bytes of the note's path list: the count, then per segment its
 * module's path as a length and bytes padded to 8. */
static uint64_t note_paths_bytes(const seg_list *segs) {
  uint64_t n = 8;
  for (uint64_t i = 0; i < segs->n; i++)
    n += 8 + mpf_round_up8(segs->path_len[i]);
  return n;
}

/* The note's table of temporary allocations: its count, then (stack id,
 * temporaries) per context that has some.  Empty under sampling, where
 * the allocations between a block and its free are mostly not seen
 * (rt_heap.c). */
static uint64_t note_temporaries_bytes(const sizes *s) {
  return 8 + (rt_sample_interval ? 0 : 16 * s->n_temporary);
}

static void temporary_cb(uint32_t id, const rt_mib_entry *e, void *ctx) {
  if (e->temporaries) {
    put_u64(ctx, id);
    put_u64(ctx, e->temporaries);
  }
}

static void put_note_temporaries(writer *w, const sizes *s) {
  put_u64(w, rt_sample_interval ? 0 : s->n_temporary);
  if (!rt_sample_interval)
    rt_mib_for_each(temporary_cb, w);
}

static void put_note_paths(writer *w, const seg_list *segs) {
  put_u64(w, segs->n);
  for (uint64_t i = 0; i < segs->n; i++) {
    uint32_t k = segs->path_len[i];
    put_u64(w, k);
    put_bytes(w, segs->paths + segs->path_at[i], k);
    pad_to(w, mpf_round_up8(w->off));
  }
}

static int write_raw(const seg_list *segs) {
  int version = rt_flags.raw_version;
  sizes s = {0, 0, 0, 0};
  rt_mib_for_each(count_cb, &s);
  mpf_raw_note note;
  uint64_t note_bytes = 0;
  if (make_note(&note)) {
    note.size = sizeof note + note_paths_bytes(segs) + note_temporaries_bytes(&s);
    note_bytes = note.size;
  }
  uint64_t seg_bytes = 8 + 64 * segs->n;
  uint64_t mib_bytes = mib_region_bytes(version, &s);
  uint64_t stack_bytes = 8 + s.stack_bytes;
  uint64_t total = mpf_round_up8(48 + seg_bytes + mib_bytes + stack_bytes + note_bytes);
  unsigned char *buf = rt_mmap_anon(WRITE_CHUNK, 0);
  if (!buf) {
    rt_report("ERROR: cannot allocate %u bytes to write the profile", WRITE_CHUNK);
    return -1;
  }
  mpf_raw_header h = {MPF_RAW_MAGIC,         (uint64_t)version, total, 48,
                     48 + seg_bytes, 48 + seg_bytes + mib_bytes};
  writer w = {buf, 0, 0, version, 0};
  put_bytes(&w, &h, sizeof h);
  put_u64(&w, segs->n);
  put_bytes(&w, segs->seg, 64 * segs->n);
  put_u64(&w, s.n);
  rt_mib_for_each(mib_cb, &w);
  pad_to(&w, h.stack_offset);
  put_u64(&w, s.n);
  rt_mib_for_each(stack_cb, &w);
  if (note_bytes) {
    put_bytes(&w, &note, sizeof note);
    put_note_paths(&w, segs);
    put_note_temporaries(&w, &s);
  }
  pad_to(&w, total);
  flush(&w);
  rt_munmap(buf, WRITE_CHUNK);
  return w.failed ? -1 : 0;
}

/* Second half of a text dump, after the table is unlocked. */
static int write_text(rt_text *t) {
  rt_text_stacks(t);
  int r = t->b.failed ? -1 : rt_output_write(t->b.p, t->b.len);
  rt_text_free(t);
  return r;
}

/* ---- the dump ----------------------------------------------------------- */

/* Beside the raw profile just written, when that went to a file. */
static void write_timeline(void) {
  char path[4096];
  uint64_t size;
  if (rt_output_file(path, sizeof path, &size))
    rt_timeline_write(path, size);
}

/* Beside the raw profile just written: the census of this dump (not from
 * a signal handler: the crashed code may hold any lock) with the kept ones. */
static void write_roots(int from_signal) {
  char path[4096];
  uint64_t size;
  if (from_signal || !rt_output_file(path, sizeof path, &size))
    return;
  rt_roots_census(rt_roots_at_exit ? RT_ROOTS_AT_EXIT : RT_ROOTS_AT_DUMP);
  rt_roots_write(path, size);
}

static int lock_for_dump(int from_signal) {
  if (!from_signal) {
    rt_mutex_lock(&dump_mu);
    rt_mib_lock_all();
    return 1;
  }
  if (!rt_mutex_trylock(&dump_mu))
    return 0;
  if (!rt_mib_trylock_all()) {
    rt_mutex_unlock(&dump_mu);
    return 0;
  }
  return 1;
}

int rt_dump(int from_signal) {
  if (!rt_inited)
    return -1;
  seg_list segs;
  if (seg_list_init(&segs) != 0)
    return -1;
  /* Before our locks: a thread inside dlopen may be waiting for them. */
  if (!from_signal) /* dying: fork no longer matters */
    rt_mutex_lock(&modules_mu);
  dl_iterate_phdr(segment_cb, &segs);
  if (!from_signal)
    rt_mutex_unlock(&modules_mu);
  rt_nonblocking = from_signal;
  int r = RT_DUMP_BUSY;
  if (lock_for_dump(from_signal)) {
    r = -1;
    if (rt_flags.print_text && rt_flags.print_module_map)
      rt_print_module_map(0);
    rt_mib_add_all_live(rt_heap_for_each_live);
    rt_text text = {0};
    mpf_raw_note note;
    if (rt_flags.print_text)
      rt_text_mibs(&text, rt_flags.print_terse, make_note(&note) ? &note : NULL);
    else
      r = write_raw(&segs);
    rt_mib_clear();
    rt_mib_unlock_all();
    if (r == 0 && rt_timeline_on)
      write_timeline();
    if (r == 0 && rt_flags.roots)
      write_roots(from_signal);
    if (rt_flags.print_text)
      r = write_text(&text); /* dump_mu still orders whole profiles */
    rt_mutex_unlock(&dump_mu);
  }
  rt_nonblocking = 0;
  rt_munmap(segs.seg, seg_list_bytes());
  return r;
}

/* modules_mu and dump_mu are never held together: any order works. */
RT_HIDDEN void rt_dump_fork_prepare(void) {
  rt_mutex_lock(&modules_mu);
  rt_mutex_lock(&dump_mu);
}
RT_HIDDEN void rt_dump_fork_parent(void) {
  rt_mutex_unlock(&dump_mu);
  rt_mutex_unlock(&modules_mu);
}
RT_HIDDEN void rt_dump_fork_child(void) {
  rt_mutex_reset(&dump_mu);
  rt_mutex_reset(&modules_mu);
}
