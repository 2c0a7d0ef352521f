/* sym_debuginfod.c - a separate debug file from the debuginfod servers in
 * $DEBUGINFOD_URLS, by build id: the last place looked, after the debug
 * directories (as gdb and libdwfl do).  libdebuginfod keeps what it
 * fetches in its cache ($DEBUGINFOD_CACHE_PATH, else ~/.cache/debuginfod_client)
 * and we read the cached file.
 *
 * The library is dlopen'd the first time a server is to be asked: linking
 * it would load libcurl and its dependencies at every start of the tool,
 * and most runs never need a server.  Without the library, or without
 * $DEBUGINFOD_URLS, nothing is asked.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <unistd.h>

#include "sym_internal.h"

typedef struct debuginfod_client debuginfod_client;

static struct {
  int tried;
  debuginfod_client *(*begin)(void);
  int (*find_debuginfo)(debuginfod_client *, const unsigned char *, int,
                        char **);
  void (*end)(debuginfod_client *);
} lib;

static int load(void) {
  if (lib.tried)
    return lib.begin != NULL;
  lib.tried = 1;
  void *h = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!h)
    return 0;
  *(void **)&lib.begin = dlsym(h, "debuginfod_begin");
  *(void **)&lib.find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
  *(void **)&lib.end = dlsym(h, "debuginfod_end");
  if (!lib.begin || !lib.find_debuginfo || !lib.end) {
    lib.begin = NULL;
    return 0;
  }
  return 1;
}

int sym_debuginfod_find(const uint8_t *id, size_t len, sym_elf_file *dbg) {
  const char *urls = getenv("DEBUGINFOD_URLS");
  if (!urls || !*urls || len == 0 || !load())
    return -1;
  debuginfod_client *c = lib.begin();
  if (!c)
    return -1;
  char *path = NULL;
  int fd = lib.find_debuginfo(c, id, (int)len, &path);
  lib.end(c);
  if (fd < 0) {
    free(path);
    return -1;
  }
  close(fd);
  int rc = path ? sym_elf_open_debug_by_id(path, id, len, dbg) : -1;
  free(path);
  return rc;
}
