/* rt_symtab.h - function names from the loaded modules' symbol tables
 * (rt_symtab.c). */
#ifndef MEMPROF_RT_SYMTAB_H
#define MEMPROF_RT_SYMTAB_H

#include "runtime/base/rt_internal.h"

/* Function name of pc (NULL if unknown) and its module/offset (rt_symtab.c). */
RT_HIDDEN const char *rt_symbolize(uintptr_t pc, const char **module_name,
                                   uintptr_t *offset);
/* Maps the file at path read-only (1), or 0; munmap *len bytes at *map. */
RT_HIDDEN int rt_symtab_map_file(const char *path, const unsigned char **map, size_t *len);
RT_HIDDEN void rt_symtab_fork_prepare(void);
RT_HIDDEN void rt_symtab_fork_parent(void);
RT_HIDDEN void rt_symtab_fork_child(void);

#endif
