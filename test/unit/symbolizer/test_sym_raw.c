/* test_sym_raw.c - the symbolizer's readers of raw DWARF give libdw's
 * answers: sym_scan.c's subprogram tree equals the libdw walk's node for
 * node and range for range, and sym_lines.c's row for every address of
 * every unit equals the row of libdw's whole sorted table (the last at or
 * below the address, none on an end_sequence), file name included.  Also
 * that the raw readers are the ones used where they should be (a silent
 * fallback to libdw everywhere would pass the equality checks), and that
 * DWARF 4 line tables are left to libdw.
 *
 * Builds programs/sym_raw_prog.c with clang-22 (DWARF 5, one or many line
 * sequences; DWARF 4) and gcc (DW_AT_sibling, DW_AT_ranges).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test/unit/check.h"
#include "symbolizer/sym_internal.h"

typedef struct variant {
  const char *cc, *flags;
  int lines_raw; /* sym_lines.c must read every unit's table */
} variant;

static const variant VARIANTS[] = {
    {"clang-22", "-O2 -g", 1},
    {"clang-22", "-O2 -g -ffunction-sections", 1},
    {"clang-22", "-O1 -gdwarf-4", 0},
    {"gcc", "-O2 -g", 0},
};

/* ---- the tree ---- */

static void check_tree(sym_dwarf *d, sym_cu *cu, int *raw_units) {
  CHECK(sym_scan_code(d, cu) == 0, "sym_scan.c left a unit to libdw");
  *raw_units += 1;
  sym_ranges_finish(&cu->code);
  size_t nn = cu->nnodes, nr = cu->code.n;
  sym_node *nodes = mp_xmalloc(nn * sizeof *nodes + 1);
  sym_range *ranges = mp_xmalloc(nr * sizeof *ranges + 1);
  memcpy(nodes, cu->nodes, nn * sizeof *nodes);
  memcpy(ranges, cu->code.r, nr * sizeof *ranges);
  sym_walk_code(cu);
  sym_ranges_finish(&cu->code);
  cu->code_ready = 1;
  CHECK(nn == cu->nnodes &&
            memcmp(nodes, cu->nodes, nn * sizeof *nodes) == 0,
        "nodes: %zu read raw, %zu by libdw, or different", nn, cu->nnodes);
  CHECK(nr == cu->code.n &&
            memcmp(ranges, cu->code.r, nr * sizeof *ranges) == 0,
        "code ranges: %zu read raw, %zu by libdw, or different", nr,
        cu->code.n);
  free(nodes);
  free(ranges);
}

/* ---- the lines ---- */

static void same_row(Dwarf_Line *want, int found, const sym_line_row *got,
                     const sym_lines *t, uint64_t addr) {
  if (!want || !found) {
    CHECK((want != NULL) == (found != 0),
          "address 0x%llx: libdw %s a row, sym_lines.c %s",
          (unsigned long long)addr, want ? "has" : "has not",
          found ? "has" : "has not");
    return;
  }
  int line = 0, col = 0;
  unsigned disc = 0;
  Dwarf_Files *files;
  size_t idx;
  dwarf_lineno(want, &line);
  dwarf_linecol(want, &col);
  dwarf_linediscriminator(want, &disc);
  CHECK(got->line == line && got->column == (uint32_t)col &&
            got->discriminator == disc,
        "address 0x%llx: line %d:%u discriminator %u, libdw %d:%d %u",
        (unsigned long long)addr, got->line, got->column, got->discriminator,
        line, col, disc);
  CHECK(dwarf_line_file(want, &files, &idx) == 0 && idx == got->file &&
            got->file < t->nnames &&
            strcmp(t->names[got->file],
                   dwarf_filesrc(files, idx, NULL, NULL)) == 0,
        "address 0x%llx: file %u, libdw's %zu", (unsigned long long)addr,
        got->file, idx);
}

static void check_lines(sym_dwarf *d, sym_cu *cu, int must_be_raw,
                        int *raw_units, size_t *addresses) {
  Dwarf_Lines *lines;
  size_t n;
  Dwarf_Attribute a;
  Dwarf_Word off;
  if (dwarf_getsrclines(&cu->die, &lines, &n) != 0 || n == 0 ||
      dwarf_formudata(dwarf_attr(&cu->die, DW_AT_stmt_list, &a), &off) != 0)
    return;
  sym_dwarf_sections(d);
  sym_lines t;
  int rc = sym_lines_read(&t, &d->line, &d->line_str, &d->str, off);
  if (must_be_raw)
    CHECK(rc == 0, "sym_lines.c left a DWARF 5 table to libdw");
  if (rc != 0)
    return;
  *raw_units += 1;
  Dwarf_Addr first = 0, last = 0;
  dwarf_lineaddr(dwarf_onesrcline(lines, 0), &first);
  dwarf_lineaddr(dwarf_onesrcline(lines, n - 1), &last);
  for (uint64_t addr = first ? first - 1 : 0; addr <= last + 1; addr++) {
    sym_line_row got;
    int found = sym_lines_find(&t, addr, &got);
    same_row(sym_libdw_line_row(lines, n, addr), found, &got, &t, addr);
    ++*addresses;
  }
  sym_lines_free(&t);
}

/* ---- one build ---- */

static int build(const variant *v, const char *dir, char *exe, size_t cap) {
  const char *src_dir = getenv("MEMPROF_SOURCE_DIR");
  char cmd[2048];
  snprintf(exe, cap, "%s/prog", dir);
  snprintf(cmd, sizeof cmd, "%s %s %s/test/unit/progs/sym_raw_prog.c -o %s",
           v->cc, v->flags, src_dir ? src_dir : ".", exe);
  return system(cmd) == 0 ? 0 : -1;
}

static void check_variant(const variant *v, const char *dir) {
  char exe[600];
  if (build(v, dir, exe, sizeof exe) != 0) {
    CHECK(0, "cannot build the test program");
    return;
  }
  msym_ctx *c = msym_new();
  mp_err err;
  CHECK(msym_add_binary(c, exe, &err) == 0, "%s", err.msg);
  sym_module *m = (sym_module *)msym_module_at(c, 0);
  if (!m || !m->dwarf.dw) {
    CHECK(0, "%s %s: no DWARF", v->cc, v->flags);
    msym_free(c);
    return;
  }
  sym_dwarf *d = &m->dwarf;
  CHECK(sym_dwarf_index(d) == 0, "sym_dwarf_index");
  int tree_units = 0, line_units = 0;
  size_t addresses = 0;
  for (size_t i = 0; i < d->ncus; i++) {
    sym_cu *cu = &d->cus[i];
    if (!cu->code_ready)
      check_tree(d, cu, &tree_units);
    check_lines(d, cu, v->lines_raw, &line_units, &addresses);
  }
  printf("%s %s: %d units' trees and %d units' lines (%zu addresses) read "
         "raw\n",
         v->cc, v->flags, tree_units, line_units, addresses);
  CHECK(tree_units > 0, "no unit's tree read raw");
  CHECK(!v->lines_raw || line_units > 0, "no unit's lines read raw");
  CHECK(!strstr(v->flags, "dwarf-4") || line_units == 0,
        "a DWARF 4 line table read raw");
  msym_free(c);
}

int main(void) {
  char dir[] = "/tmp/memprof-symraw-XXXXXX";
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  for (size_t i = 0; i < sizeof VARIANTS / sizeof VARIANTS[0]; i++)
    check_variant(&VARIANTS[i], dir);
  char cmd[700];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd) != 0)
    fprintf(stderr, "could not remove %s\n", dir);
  return check_result();
}
