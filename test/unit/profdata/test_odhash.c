/* test_odhash.c - LLVM's OnDiskChainedHashTable (profdata/llvm/odhash.c):
 *  - tables of 0, 1, 2, 3 and 1000 items, with and without key lengths,
 *    emitted and read back: the bucket count LLVM's generator gives, a
 *    walk that returns every item once with its key and data, a lookup of
 *    every hash (hit) and of absent hashes in full and empty buckets (miss);
 *  - the memprof v2 frame table of a file llvm-profdata-22 wrote, emitted
 *    again from its items in LLVM's insertion order: the same bytes;
 *  - damaged tables (header outside the file, bucket counts that are not
 *    powers of two or do not fit, too many entries, bucket offsets and
 *    item lengths out of range, every truncation) refused with a message,
 *    and a bucket of more items than its u16 count can say refused by the
 *    emitter.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/io.h"
#include "profdata/llvm/odhash.h"
#include "test/unit/check.h"
#include "test/unit/rng.h"
#include "test/unit/shell.h"

/* Test items: hash, [key length 8,] data length, key = the item's index,
 * then (i % 5) * 3 data bytes (i + k) & 0xff. */
typedef struct items {
  const uint64_t *hashes;
  int has_keylen;
} items;

static uint64_t data_len(size_t i) { return i % 5 * 3; }

static void emit_item(mp_buf *out, size_t i, void *ctx) {
  const items *it = ctx;
  mp_buf_u64(out, it->hashes[i]);
  if (it->has_keylen) mp_buf_u64(out, 8);
  mp_buf_u64(out, data_len(i));
  mp_buf_u64(out, i);
  for (uint64_t k = 0; k < data_len(i); k++) mp_buf_u8(out, (uint8_t)(i + k));
}

/* Whether `item` is test item i, read from `d`. */
static int item_is(const unsigned char *d, const mp_odh_item *item, size_t i,
                   const uint64_t *hashes) {
  if (item->hash != hashes[i] || item->key_len != 8 ||
      mp_rd64(d + item->key_off) != i || item->data_len != data_len(i))
    return 0;
  for (uint64_t k = 0; k < data_len(i); k++)
    if (d[item->data_off + k] != (uint8_t)(i + k)) return 0;
  return 1;
}

/* LLVM's generator: 1 bucket for up to 2 items, else the power of two at
 * or above n * 4 / 3 + 1. */
static uint64_t want_buckets(size_t n) {
  uint64_t nb = 1;
  if (n > 2)
    while (nb < n * 4 / 3 + 1) nb <<= 1;
  return nb;
}

/* Emit n items after `lead` bytes of something else, read them back. */
static void round_trip(size_t n, int has_keylen, size_t lead) {
  uint64_t *hashes = malloc((n + 1) * sizeof *hashes);
  /* even hashes (odd ones are the misses), low bits shared often so that
   * chains form; all distinct */
  for (size_t i = 0; i < n; i++)
    hashes[i] = (rnd() >> 12 << 12 | (rnd() % 16) << 1) & ~(1ULL << 63);
  items it = {hashes, has_keylen};
  mp_buf out = {0};
  for (size_t i = 0; i < lead; i++) mp_buf_u8(&out, 0xee);
  mp_err err;
  uint64_t table = mp_odh_emit(&out, hashes, n, emit_item, &it, &err);
  CHECK(table != 0 && table % 8 == 0, "emit %zu: table at %llu", n,
        (unsigned long long)table);
  mp_odh t;
  int rc = mp_odh_open(&t, out.data, out.len, table, lead, has_keylen, "test",
                       &err);
  CHECK(rc == 0, "open %zu items: %s", n, err.msg);
  if (rc != 0) goto done;
  CHECK(t.num_entries == n && t.num_buckets == want_buckets(n),
        "%zu items: %llu entries, %llu buckets", n,
        (unsigned long long)t.num_entries, (unsigned long long)t.num_buckets);
  CHECK_EQ(out.len, table + 16 + 8 * t.num_buckets);

  unsigned char *seen = calloc(n + 1, 1);
  mp_odh_iter iter;
  mp_odh_item item;
  size_t walked = 0;
  mp_odh_iter_init(&iter, &t, lead);
  while ((rc = mp_odh_iter_next(&iter, &item, &err)) == 1) {
    uint64_t i = mp_rd64(out.data + item.key_off);
    CHECK(i < n && !seen[i] && item_is(out.data, &item, i, hashes),
          "%zu items: walk gave key %llu", n, (unsigned long long)i);
    if (i < n) seen[i] = 1;
    walked++;
  }
  CHECK(rc == 0 && walked == n, "%zu items: walk ended %d after %zu: %s", n,
        rc, walked, rc ? err.msg : "");
  free(seen);

  for (size_t i = 0; i < n; i++) {
    rc = mp_odh_lookup(&t, hashes[i], &item, &err);
    CHECK(rc == 1 && item_is(out.data, &item, i, hashes),
          "%zu items: lookup of item %zu: %d", n, i, rc);
    /* the same bucket (or an empty one), another hash */
    CHECK(mp_odh_lookup(&t, hashes[i] | 1ULL << 63, &item, &err) == 0,
          "%zu items: absent hash found", n);
  }
  for (int k = 0; k < 20; k++)
    CHECK(mp_odh_lookup(&t, rnd() | 1, &item, &err) == 0,
          "%zu items: odd hash found", n);
done:
  mp_buf_free(&out);
  free(hashes);
}

/* ---- llvm-profdata-22's bytes ------------------------------------------- */

/* Ten frames over two records; GUIDs 0x100..0x109 in order of first
 * appearance, which is the order LLVM inserts them into its table. */
static void write_yaml(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) return;
  fprintf(f, "---\nHeapProfileRecords:\n");
  static const int stacks[3][5] = {{0, 1, 2, 3, 4}, {5, 6, 2, 3, 4},
                                   {7, 8, 9, 3, 4}};
  for (int r = 0; r < 2; r++) {
    fprintf(f, "  - GUID: 0x%x\n    AllocSites:\n", 0x200 + r);
    for (int s = r; s < r + 2; s++) {
      fprintf(f, "      - Callstack:\n");
      for (int k = 0; k < 5; k++)
        fprintf(f, "          - { Function: 0x%x, LineOffset: %d, Column: %d, "
                   "IsInlineFrame: %s }\n", 0x100 + stacks[s][k],
                stacks[s][k], 2 * stacks[s][k], k == 0 ? "true" : "false");
      fprintf(f, "        MemInfoBlock:\n          AllocCount: %d\n"
                 "          TotalSize: 64\n", s + 1);
    }
  }
  fclose(f);
}

/* The frame table's items as they stand in LLVM's file, by insertion. */
typedef struct llvm_items {
  const unsigned char *d;
  const mp_odh_item *by_order; /* [i]: the frame of GUID 0x100 + i */
} llvm_items;

static void emit_llvm_item(mp_buf *out, size_t i, void *ctx) {
  const llvm_items *l = ctx;
  const mp_odh_item *it = &l->by_order[i];
  /* the whole item: hash, key length, data length, key, data */
  mp_buf_put(out, l->d + it->key_off - 24, 24 + it->key_len + it->data_len);
}

static void test_llvm_bytes(void) {
  char dir[64], yaml[128], prof[128];
  if (!scratch_dir(dir, "odhash")) {
    CHECK(0, "no scratch folder");
    return;
  }
  snprintf(yaml, sizeof yaml, "%s/in.yaml", dir);
  snprintf(prof, sizeof prof, "%s/v2.profdata", dir);
  write_yaml(yaml);
  if (shell("llvm-profdata-22 merge --memprof-version=2 %s -o %s", yaml,
            prof)) {
    CHECK(0, "llvm-profdata-22 merge failed");
    scratch_remove(dir);
    return;
  }
  mp_file f;
  mp_err err;
  CHECK(mp_file_open(&f, prof, &err) == 0, "%s", err.msg);
  const unsigned char *d = f.data;
  /* header word 5: the memprof section; there, u64 version 2, then the
   * record table, frame payload, frame table, stack payload and stack
   * table offsets */
  uint64_t mp = mp_rd64(d + 40);
  CHECK(mp_rd64(d + mp) == 2, "memprof version %llu",
        (unsigned long long)mp_rd64(d + mp));
  uint64_t payload = mp_rd64(d + mp + 16), table = mp_rd64(d + mp + 24);
  mp_odh t;
  CHECK(mp_odh_open(&t, d, f.size, table, payload, 1, "frame table", &err) == 0,
        "%s", err.msg);
  CHECK_EQ(t.num_entries, 10);
  CHECK_EQ(t.num_buckets, 16);
  mp_odh_item by_order[10];
  uint64_t hashes[10];
  int found = 0;
  mp_odh_iter it;
  mp_odh_item item;
  mp_odh_iter_init(&it, &t, payload);
  while (t.num_entries == 10 && mp_odh_iter_next(&it, &item, &err) == 1) {
    uint64_t guid = mp_rd64(d + item.data_off); /* the frame's Function */
    if (guid - 0x100 < 10 && item.key_len == 8) {
      by_order[guid - 0x100] = item;
      hashes[guid - 0x100] = item.hash;
      found++;
    }
  }
  CHECK(found == 10, "frames in LLVM's table: %d", found);
  if (found == 10) {
    /* our table after the same prefix of the file */
    mp_buf out = {0};
    mp_buf_put(&out, d, payload);
    llvm_items l = {d, by_order};
    uint64_t ours = mp_odh_emit(&out, hashes, 10, emit_llvm_item, &l, &err);
    uint64_t end = table + 16 + 8 * t.num_buckets;
    CHECK(ours == table && out.len == end &&
              memcmp(out.data + payload, d + payload, end - payload) == 0,
          "frame table differs from llvm-profdata-22's (table at 0x%llx, "
          "0x%llx; end 0x%zx, 0x%llx)", (unsigned long long)ours,
          (unsigned long long)table, out.len, (unsigned long long)end);
    mp_buf_free(&out);
  }
  mp_file_close(&f);
  scratch_remove(dir);
}

/* ---- damaged tables ----------------------------------------------------- */

static void expect_open_error(const mp_buf *b, uint64_t table, uint64_t payload,
                              const char *want) {
  mp_odh t;
  mp_err err = {{0}};
  int rc = mp_odh_open(&t, b->data, b->len, table, payload, 1, "test", &err);
  CHECK(rc == -1 && strstr(err.msg, want),
        "want \"%s\", got \"%s\"", want, err.msg);
}

static void test_damaged(void) {
  enum { N = 20 };
  uint64_t hashes[N];
  for (size_t i = 0; i < N; i++) hashes[i] = (uint64_t)i << 1;
  items its = {hashes, 1};
  mp_buf good = {0};
  mp_err err;
  uint64_t table = mp_odh_emit(&good, hashes, N, emit_item, &its, &err);
  uint64_t nb = mp_rd64(good.data + table);
  CHECK_EQ(nb, 32);

  expect_open_error(&good, good.len, 0, "is outside the file");
  expect_open_error(&good, good.len - 8, 0, "is outside the file");
  mp_buf b = {0};
  mp_buf_put(&b, good.data, good.len);
  for (uint64_t bad_nb = 0; bad_nb < 8; bad_nb++) {
    if (bad_nb == 1 || bad_nb == 2 || bad_nb == 4) continue;
    mp_buf_set_u64(&b, table, bad_nb);
    expect_open_error(&b, table, 0, "is not a power of two");
  }
  mp_buf_set_u64(&b, table, 64);
  expect_open_error(&b, table, 0, "buckets do not fit in the file");
  mp_buf_set_u64(&b, table, nb);
  mp_buf_set_u64(&b, table + 8, table / 32 + 1);
  expect_open_error(&b, table, 0, "entries do not fit in its payload");
  expect_open_error(&good, table, table + 8, "entries do not fit");

  /* a bucket offset with no room for its count before the table, or in
   * it: the lookup of a hash in that bucket fails */
  uint64_t bucket = hashes[3] & (nb - 1);
  mp_odh t;
  mp_odh_item item;
  for (int k = 0; k < 2; k++) {
    memcpy(b.data, good.data, good.len);
    mp_buf_set_u64(&b, table + 16 + 8 * bucket, k ? table + 4 : table - 1);
    CHECK(mp_odh_open(&t, b.data, b.len, table, 0, 1, "test", &err) == 0,
          "%s", err.msg);
    err.msg[0] = 0;
    CHECK(mp_odh_lookup(&t, hashes[3], &item, &err) == -1 &&
              strstr(err.msg, "is outside the payload"),
          "bucket offset %d past the payload: %s", k, err.msg);
  }

  /* an item that claims more data than the payload holds */
  memcpy(b.data, good.data, good.len);
  uint64_t first = mp_rd64(good.data + table + 16 + 8 * bucket);
  mp_buf_set_u64(&b, first + 2 + 16, table); /* item 3's data length */
  CHECK(mp_odh_open(&t, b.data, b.len, table, 0, 1, "test", &err) == 0, "%s",
        err.msg);
  err.msg[0] = 0;
  CHECK(mp_odh_lookup(&t, hashes[3], &item, &err) == -1 &&
            strstr(err.msg, "only"),
        "long item (lookup): %s", err.msg);
  mp_odh_iter it;
  int rc;
  mp_odh_iter_init(&it, &t, 0);
  err.msg[0] = 0;
  while ((rc = mp_odh_iter_next(&it, &item, &err)) == 1) {}
  CHECK(rc == -1 && strstr(err.msg, "claims"), "long item (walk): %s", err.msg);

  /* every truncation: refused with a message, or (with the table still
   * whole) walked to the end */
  for (size_t cut = 0; cut < good.len; cut++) {
    err.msg[0] = 0;
    if (mp_odh_open(&t, good.data, cut, table, 0, 1, "test", &err) != 0) {
      CHECK(err.msg[0] != 0, "cut %zu: no message", cut);
      continue;
    }
    CHECK(cut >= table + 16 + 8 * nb, "cut %zu: a table past the end opened",
          cut);
  }
  mp_buf_free(&b);
  mp_buf_free(&good);

  /* 65536 items of one hash: a bucket the u16 count cannot say */
  size_t n = 65536;
  uint64_t *same = calloc(n, sizeof *same);
  items many = {same, 0};
  mp_buf out = {0};
  err.msg[0] = 0;
  CHECK(mp_odh_emit(&out, same, n, emit_item, &many, &err) == 0 &&
            strstr(err.msg, "would hold 65536 items (max 65535)"),
        "full bucket: %s", err.msg);
  mp_buf_free(&out);
  free(same);
}

int main(void) {
  static const size_t sizes[] = {0, 1, 2, 3, 1000};
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
    for (int keylen = 0; keylen < 2; keylen++)
      round_trip(sizes[s], keylen, 1 + s * 3);
  test_llvm_bytes();
  test_damaged();
  return check_result();
}
