/* rt_libc.c - the byte and string primitives the runtime and its
 * interceptors do their work with (rt_libc, called through rt_memcpy & co.
 * in rt_libc.h).
 *
 * The runtime defines the public memcpy, strlen, ... as counting
 * interceptors, so it cannot call them for its own work.  The table starts
 * with self-contained fallbacks (no libc, no interceptor, no allocation;
 * safe before init); once the dynamic loader can be asked (rt_libc_resolve,
 * from the lifecycle installation) each entry is replaced with glibc's own
 * implementation (dlsym RTLD_NEXT: the definition after ours, with its
 * IFUNC resolved for this CPU), which is several times faster on small and
 * medium sizes than word loops or `rep movsb`.  The runtime is built with
 * -fno-builtin, so the compiler does not turn the fallback loops back into
 * calls to memcpy/memset.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>

#include "rt_libc.h"

/* Unaligned, alias-free 8-byte word. */
typedef uint64_t __attribute__((aligned(1), may_alias)) rt_word;

#define RT_REP_THRESHOLD 64

static void *own_memcpy(void *d, const void *s, size_t n) {
  unsigned char *dp = d;
  const unsigned char *sp = s;
  if (n >= RT_REP_THRESHOLD) {
    __asm__ volatile("rep movsb" : "+D"(dp), "+S"(sp), "+c"(n) : : "memory");
    return d;
  }
  for (; n >= 8; n -= 8, dp += 8, sp += 8)
    *(rt_word *)dp = *(const rt_word *)sp;
  for (; n; n--)
    *dp++ = *sp++;
  return d;
}

/* Copy downwards, for an overlapping destination above the source. */
static void copy_backward(unsigned char *d, const unsigned char *s, size_t n) {
  while (n >= 8) {
    n -= 8;
    *(rt_word *)(d + n) = *(const rt_word *)(s + n);
  }
  while (n) {
    n--;
    d[n] = s[n];
  }
}

static void *own_memmove(void *d, const void *s, size_t n) {
  uintptr_t du = (uintptr_t)d, su = (uintptr_t)s;
  if (du == su || n == 0)
    return d;
  /* Copy forwards unless the destination starts inside the source.  A
   * forward word loop is safe for any overlap with d < s (each word is
   * read before the write that could clobber it); `rep movsb` is used
   * only without overlap. */
  if (du < su || du - su >= n) {
    if (du < su && su - du < n) {
      unsigned char *dp = d;
      const unsigned char *sp = s;
      for (; n >= 8; n -= 8, dp += 8, sp += 8)
        *(rt_word *)dp = *(const rt_word *)sp;
      for (; n; n--)
        *dp++ = *sp++;
      return d;
    }
    return own_memcpy(d, s, n);
  }
  copy_backward(d, s, n);
  return d;
}

static void *own_memset(void *d, int c, size_t n) {
  unsigned char *dp = d;
  if (n >= RT_REP_THRESHOLD) {
    __asm__ volatile("rep stosb" : "+D"(dp), "+c"(n) : "a"(c) : "memory");
    return d;
  }
  uint64_t w = 0x0101010101010101ull * (unsigned char)c;
  for (; n >= 8; n -= 8, dp += 8)
    *(rt_word *)dp = w;
  for (; n; n--)
    *dp++ = (unsigned char)c;
  return d;
}

static int own_memcmp(const void *a, const void *b, size_t n) {
  const unsigned char *x = a, *y = b;
  for (; n >= 8; n -= 8, x += 8, y += 8)
    if (*(const rt_word *)x != *(const rt_word *)y)
      break;
  for (; n; n--, x++, y++)
    if (*x != *y)
      return *x < *y ? -1 : 1;
  return 0;
}

static size_t own_strlen(const char *s) {
  const char *p = s;
  /* Byte steps up to an 8-byte boundary, then whole aligned words: an
   * aligned word never crosses a page, so reading past the NUL is safe. */
  for (; (uintptr_t)p & 7; p++)
    if (!*p)
      return (size_t)(p - s);
  const uint64_t lo = 0x0101010101010101ull, hi = 0x8080808080808080ull;
  for (;;) {
    uint64_t w = *(const rt_word *)p;
    if ((w - lo) & ~w & hi)
      break;
    p += 8;
  }
  while (*p)
    p++;
  return (size_t)(p - s);
}

static size_t own_strnlen(const char *s, size_t max) {
  size_t i = 0;
  while (i < max && s[i])
    i++;
  return i;
}

static void *own_memchr(const void *s, int c, size_t n) {
  const unsigned char *p = s;
  for (; n; n--, p++)
    if (*p == (unsigned char)c)
      return (void *)p;
  return NULL;
}

static char *own_strchrnul(const char *s, int c) {
  while (*s && *s != (char)c)
    s++;
  return (char *)s;
}

/* Length of the prefix of s made of bytes in (accept) / not in (!accept)
 * the set. */
static size_t span(const char *s, const char *set, int accept) {
  size_t i = 0;
  for (; s[i]; i++) {
    const char *p = set;
    while (*p && *p != s[i])
      p++;
    if ((*p != '\0') != accept)
      break;
  }
  return i;
}

static size_t own_strspn(const char *s, const char *set) { return span(s, set, 1); }
static size_t own_strcspn(const char *s, const char *set) { return span(s, set, 0); }

rt_libc_fns rt_libc = {
#define RT_LIBC_FN(name, ret, args) own_##name,
#include "rt_libc_fns.inc"
#undef RT_LIBC_FN
};

/* glibc's definition of `name`, or NULL if the loader has none besides ours. */
void *rt_next_definition(const char *name, void *ours) {
  void *p = dlsym(RTLD_NEXT, name);
  return p && p != ours ? p : NULL;
}

/* Whether code address p is in this copy of the runtime.  (Its own
 * functions' addresses, taken in a shared object, are those the loader
 * bound: another module's, when that one defines them first.) */
static int in_this_copy(void *p) {
  Dl_info at, self;
  return dladdr(p, &at) && dladdr((void *)&rt_serving_definition, &self) &&
         at.dli_fbase == self.dli_fbase;
}

void *rt_serving_definition(const char *name, void *ours) {
  void *p = dlsym(RTLD_DEFAULT, name);
  return p && !in_this_copy(p) ? p : rt_next_definition(name, ours);
}

void rt_libc_resolve(const rt_libc_fns *ours) {
  static int done;
  if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL))
    return;
  void *p;
#define RT_LIBC_FN(name, ret, args)                                         \
  if ((p = rt_next_definition(#name, (void *)ours->name)) != NULL)                  \
    __atomic_store_n((void **)&rt_libc.name, p, __ATOMIC_RELEASE);
#include "rt_libc_fns.inc"
#undef RT_LIBC_FN
}
