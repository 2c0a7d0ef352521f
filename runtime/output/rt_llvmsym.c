/* rt_llvmsym.c - an external llvm-symbolizer process, which names frames
 * (function, file:line:column, inlined frames) for the text profile and the
 * error reports, as LLVM's runtime does.
 *
 * Found as $MEMPROF_SYMBOLIZER_PATH (LLVM's variable), else the
 * external_symbolizer_path option, else llvm-symbolizer on PATH.  It runs
 * for one text profile or report at a time, never on the malloc path (a
 * report of a failed allocation ends the process).  The process:
 *  - is started with clone(CLONE_VM | CLONE_VFORK) and no exit signal, and
 *    reaped with __WCLONE: the program's SIGCHLD handler and its wait()
 *    calls never see it;
 *  - talks over a socketpair, written with MSG_NOSIGNAL: a symbolizer that
 *    dies must not kill the program with SIGPIPE;
 *  - gets the program's environment without LD_PRELOAD, which may be
 *    preloading this very runtime, and none of its file descriptors.
 * Queries go in batches of at most RT_LLVMSYM_BATCH, all of which fit in
 * the socket's buffer, and the answers are read before the next batch: the
 * two sides never wait for each other. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt_llvmsym.h"
#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_libc.h"
#include "runtime/base/rt_state.h"
#include "runtime/base/rt_sys.h"

#define CHILD_STACK (64u << 10)
#define MAX_ENV 4096

extern char **__environ;

typedef struct spawn_args {
  const char *path;
  char *const *argv;
  char *const *envp;
  int fd;
} spawn_args;

static int starts_with(const char *s, const char *prefix) {
  while (*prefix)
    if (*s++ != *prefix++)
      return 0;
  return 1;
}

static int executable(const char *path) {
  return rt_syscall(SYS_access, path, X_OK, 0) == 0;
}

/* PATH lookup of `name` into out; 0 if not found. */
static int search_path(const char *name, char *out, size_t cap) {
  const char *p = getenv("PATH");
  while (p && *p) {
    const char *end = p;
    while (*end && *end != ':')
      end++;
    size_t dir = (size_t)(end - p), len = rt_strlen(name);
    if (dir && dir + len + 2 <= cap) {
      rt_memcpy(out, p, dir);
      out[dir] = '/';
      rt_memcpy(out + dir + 1, name, len + 1);
      if (executable(out))
        return 1;
    }
    p = *end ? end + 1 : end;
  }
  return 0;
}

static int find_symbolizer(char *out, size_t cap) {
  const char *p = getenv("MEMPROF_SYMBOLIZER_PATH");
  if (!p || !*p)
    p = rt_flags.external_symbolizer_path;
  if (p && *p) {
    size_t n = rt_format(out, cap, "%s", p);
    return n + 1 < cap && executable(out);
  }
  return search_path("llvm-symbolizer", out, cap);
}

/* The child: its end of the socket as stdin and stdout, nothing else. */
static int child_main(void *arg) {
  const spawn_args *a = arg;
  rt_syscall(SYS_dup2, a->fd, 0, 0);
  rt_syscall(SYS_dup2, a->fd, 1, 0);
  rt_syscall(SYS_close_range, 3, ~0U, 0);
  rt_syscall(SYS_execve, a->path, a->argv, a->envp);
  rt_syscall(SYS_exit, 127, 0, 0);
  return 127;
}

int rt_llvmsym_start(rt_llvmsym *s) {
  s->fd = s->pid = -1;
  s->pending = 0;
  if (!rt_flags.symbolize || rt_nonblocking)
    return 0;
  char path[4096];
  if (!find_symbolizer(path, sizeof path))
    return 0;
  size_t env_bytes = MAX_ENV * sizeof(char *);
  char **envp = rt_mmap_anon(env_bytes, 0);
  char *stack = rt_mmap_anon(CHILD_STACK, 0);
  int sv[2];
  if (!envp || !stack ||
      rt_syscall6(SYS_socketpair, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, (long)sv, 0, 0) < 0) {
    if (envp)
      rt_munmap(envp, env_bytes);
    if (stack)
      rt_munmap(stack, CHILD_STACK);
    return 0;
  }
  size_t n = 0;
  for (char **e = __environ; e && *e && n + 1 < MAX_ENV; e++)
    if (!starts_with(*e, "LD_PRELOAD="))
      envp[n++] = *e;
  envp[n] = NULL;
  char *argv[] = {path, "--inlines", "--default-arch=x86_64", NULL};
  spawn_args a = {path, argv, envp, sv[1]};
  /* CLONE_VFORK: this thread waits until the child has exec'd, so its
   * stack and the strings it uses stay valid. */
  int pid = clone(child_main, stack + CHILD_STACK, CLONE_VM | CLONE_VFORK, &a);
  rt_close(sv[1]);
  rt_munmap(stack, CHILD_STACK);
  rt_munmap(envp, env_bytes);
  if (pid <= 0) {
    rt_close(sv[0]);
    return 0;
  }
  s->fd = sv[0];
  s->pid = pid;
  return 1;
}

void rt_llvmsym_stop(rt_llvmsym *s) {
  if (s->fd >= 0)
    rt_close(s->fd); /* end of input: the symbolizer exits */
  if (s->pid > 0) {
    int st;
    while (rt_syscall6(SYS_wait4, s->pid, (long)&st, __WCLONE, 0, 0, 0) == -4 /* EINTR */)
      ;
  }
  s->fd = s->pid = -1;
}

/* Queue one query ("CODE <module> 0x<offset>"); the caller sends at most
 * RT_LLVMSYM_BATCH before reading their answers. */
void rt_llvmsym_query(rt_llvmsym *s, const char *module, uintptr_t offset) {
  char line[4200];
  size_t n = rt_format(line, sizeof line, "CODE \"%s\" 0x%lx\n", module, (unsigned long)offset);
  rt_buf_append(&s->out, line, n);
  s->pending++;
}

static int send_all(int fd, const char *p, size_t n) {
  while (n) {
    long r = rt_syscall6(SYS_sendto, fd, (long)p, n, MSG_NOSIGNAL, 0, 0);
    if (r == -4 /* EINTR */)
      continue;
    if (r <= 0)
      return 0;
    p += r;
    n -= (size_t)r;
  }
  return 1;
}

/* Answers end with an empty line: count the "\n\n" from `from` on. */
static size_t count_answers(const rt_buf *b, size_t from) {
  size_t k = 0;
  for (size_t i = from ? from : 1; i < b->len; i++)
    if (b->p[i] == '\n' && b->p[i - 1] == '\n')
      k++;
  return k;
}

int rt_llvmsym_answers(rt_llvmsym *s, rt_buf *in) {
  size_t want = s->pending, have = 0, scanned = in->len;
  int ok = s->fd >= 0 && !s->out.failed && send_all(s->fd, s->out.p, s->out.len);
  s->out.len = 0;
  s->pending = 0;
  char chunk[16384];
  while (ok && have < want) {
    long r = rt_syscall(SYS_read, s->fd, chunk, sizeof chunk);
    if (r == -4 /* EINTR */)
      continue;
    if (r <= 0)
      break;
    size_t from = scanned;
    rt_buf_append(in, chunk, (size_t)r);
    if (in->failed)
      break;
    have += count_answers(in, from);
    scanned = in->len;
  }
  if (have >= want)
    return 1;
  rt_llvmsym_stop(s); /* a symbolizer that died or stalled: do without */
  return 0;
}

void rt_llvmsym_free(rt_llvmsym *s) {
  rt_llvmsym_stop(s);
  rt_buf_free(&s->out);
}
