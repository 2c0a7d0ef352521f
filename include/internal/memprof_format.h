/* memprof_format.h - on-disk constants and packed layouts of LLVM's MemProf
 * raw and indexed profiles, shared by the runtime and memprof-profdata.
 *
 * The normative descriptions are docs/raw-format.md and
 * docs/indexed-format.md; this header is their machine-checked summary.
 * All on-disk integers are little-endian; every struct here is packed and its
 * size and field offsets are pinned by static asserts below.
 *
 * Freestanding on purpose: the runtime includes it from inside malloc hooks,
 * so nothing here may call into libc.
 */
#ifndef MEMPROF_FORMAT_H
#define MEMPROF_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* ---- raw profile (what the runtime writes) ---------------------------- */

#define MPF_RAW_MAGIC 0xff6d70726f667281ULL /* bytes 81 72 66 6f 72 70 6d ff */
#define MPF_RAW_VERSION_MIN 3u
#define MPF_RAW_VERSION_MAX 5u
#define MPF_RAW_VERSION_DEFAULT 5u /* LLVM 22; LLVM 19's tools read 3 and 4 */
#define MPF_BUILD_ID_MAX 32u

typedef struct __attribute__((packed)) mpf_raw_header {
  uint64_t magic;
  uint64_t version;
  uint64_t total_size;     /* of this dump; dumps are concatenated */
  uint64_t segment_offset; /* all three relative to the dump start */
  uint64_t mib_offset;
  uint64_t stack_offset;
} mpf_raw_header;

typedef struct __attribute__((packed)) mpf_raw_segment {
  uint64_t start;  /* runtime address of an executable PT_LOAD */
  uint64_t end;    /* start + p_memsz */
  uint64_t offset; /* load bias of the module */
  uint64_t build_id_size;
  uint8_t build_id[MPF_BUILD_ID_MAX];
} mpf_raw_segment;

/* Our note after a dump's stack section, inside its TotalSize (LLVM's
 * readers step from dump to dump by TotalSize and read nothing past the
 * stacks): written only when there is something to say, so a profile of
 * an instrumented program recorded in full is LLVM's byte for byte.
 * docs/raw-format.md section 7. */
#define MPF_RAW_NOTE_MAGIC 0x31657461706f726dULL /* "mroptae1" */
#define MPF_RAW_NOTE_UNINSTRUMENTED 1u /* no code called __memprof_init */
typedef struct __attribute__((packed)) mpf_raw_note {
  uint64_t magic;
  uint64_t size;            /* of the note, 32 today; readers skip the rest */
  uint64_t sample_interval; /* R in bytes; 0: every allocation recorded */
  uint64_t flags;           /* MP_RAW_NOTE_* */
} mpf_raw_note;

/* The MemInfoBlock exactly as it sits in a raw v4/v5 profile (v3 stops at
 * offsetof(AccessHistogramSize)).  The runtime aggregates into this struct
 * directly, so serializing it is a copy. */
typedef struct __attribute__((packed)) mpf_mib {
#define MIB_FIELD(Tag, Name, CType, Merge) CType Name;
#include "include/MIBDef.inc"
#undef MIB_FIELD
} mpf_mib;

enum mpf_mib_tag {
#define MIB_FIELD(Tag, Name, CType, Merge) MPF_MIB_##Name = Tag,
#include "include/MIBDef.inc"
#undef MIB_FIELD
  MPF_MIB_NUM_FIELDS = 27
};

#define MPF_MIB_SIZE_V3 132u
#define MPF_MIB_SIZE_V4 144u /* also v5 */

/* v5 stores each histogram entry as u16: 12-bit mantissa, 4-bit exponent. */
#define MPF_HIST_V5_MAX (4095ULL << 15)

static inline uint16_t mpf_hist_encode_v5(uint64_t c) {
  if (c > MPF_HIST_V5_MAX) c = MPF_HIST_V5_MAX;
  uint64_t m = c, e = 0;
  while (m > 4095) {
    m = (m + 1) >> 1;
    e++;
  }
  return (uint16_t)((e << 12) | m);
}

static inline uint64_t mpf_hist_decode_v5(uint16_t v) {
  return (uint64_t)(v & 0xFFFu) << (v >> 12);
}

static inline uint64_t mpf_round_up8(uint64_t n) { return (n + 7) & ~7ULL; }

/* The GNU build id among the ELF notes of a loaded PT_NOTE segment,
 * [p, end): copied to out (at most cap bytes), its length returned; 0
 * when there is none.  No libc call: the runtime and libmemprof-hotcold
 * both call it at exit, from inside the allocator. */
static inline size_t mpf_note_build_id(const uint8_t *p, const uint8_t *end,
                                       uint8_t *out, size_t cap) {
  while (end - p >= 12) {
    const uint32_t *w = (const uint32_t *)(const void *)p; /* 4-aligned */
    uint32_t namesz = w[0], descsz = w[1], type = w[2];
    const uint8_t *name = p + 12, *desc = name + ((namesz + 3u) & ~3u);
    p = desc + ((descsz + 3u) & ~3u);
    if (type == 3 /* NT_GNU_BUILD_ID */ && namesz == 4 && name[0] == 'G' &&
        name[1] == 'N' && name[2] == 'U' && name[3] == 0 && descsz <= cap &&
        desc + descsz <= end) {
      for (uint32_t i = 0; i < descsz; i++)
        out[i] = desc[i];
      return descsz;
    }
  }
  return 0;
}

/* ---- indexed profile (what clang reads) -------------------------------- */

#define MPF_INDEXED_MAGIC 0x8169666f72706cffULL /* "\xfflprofi\x81" */
#define MPF_INDEXED_VARIANT_MEMPROF (1ULL << 62)
#define MPF_INDEXED_VERSION_DEFAULT 12u /* read by clang-19 and clang-22 */
#define MPF_INDEXED_VERSION_MAX 13u
#define MPF_MEMPROF_VERSION_DEFAULT 3u
#define MPF_FRAME_SIZE 17u /* u64 guid, u32 line offset, u32 column, u8 inline */

/* ---- layout checks ------------------------------------------------------ */

_Static_assert(sizeof(mpf_raw_header) == 48, "raw header is 48 bytes");
_Static_assert(sizeof(mpf_raw_segment) == 64, "raw segment entry is 64 bytes");
_Static_assert(sizeof(mpf_mib) == MPF_MIB_SIZE_V4, "raw v4/v5 MIB is 144 bytes");
_Static_assert(offsetof(mpf_mib, AccessHistogramSize) == MPF_MIB_SIZE_V3,
               "raw v3 MIB is the first 132 bytes");
_Static_assert(sizeof(mpf_raw_note) == 32, "raw note is 32 bytes");
_Static_assert(offsetof(mpf_mib, TotalAccessCount) == 4, "MIB offset");
_Static_assert(offsetof(mpf_mib, TotalSize) == 28, "MIB offset");
_Static_assert(offsetof(mpf_mib, AllocTimestamp) == 44, "MIB offset");
_Static_assert(offsetof(mpf_mib, TotalLifetime) == 52, "MIB offset");
_Static_assert(offsetof(mpf_mib, AllocCpuId) == 68, "MIB offset");
_Static_assert(offsetof(mpf_mib, DataTypeId) == 92, "MIB offset");
_Static_assert(offsetof(mpf_mib, TotalAccessDensity) == 100, "MIB offset");
_Static_assert(offsetof(mpf_mib, TotalLifetimeAccessDensity) == 116, "MIB offset");
_Static_assert(offsetof(mpf_mib, AccessHistogram) == 136, "MIB offset");

#endif
