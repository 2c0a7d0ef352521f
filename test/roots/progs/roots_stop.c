/* roots_stop.c - threads whose pointers only a stopped thread's registers
 * or stack pointer tell apart, for the censuses that stop the other
 * threads (roots_stop_threads; test/roots/test_roots_stop.py).  x86-64.
 *
 * Usage: roots_stop hold | clone | block | stress T N
 *   hold    a worker keeps a 4444-byte block only in r12 and a 5555-byte
 *           block only in a dead stack slot 16 KiB below its stack
 *           pointer (everything else it wrote below the pointer zeroed,
 *           the caller-saved registers cleared), and spins; the main
 *           thread takes a census, then lets it free the first block.
 *   clone   as hold, for a thread started by a raw clone (sharing the
 *           main thread's TLS, on a stack of its own mapping): the main
 *           thread allocates a 7777-byte block, the thread keeps it only
 *           in r12 and spins; the main thread takes a census, lets the
 *           thread end and waits for it (the block is then lost).
 *   block   a worker blocks the census's signal (SIGRTMAX-3) and waits
 *           while the main thread takes two censuses.
 *   stress  T threads (at most 16) each make N random mallocs and frees
 *           of 16..4015 bytes, into an array on their own stack, taking a
 *           census every 64 steps, between two barriers (no thread starts
 *           or ends while one runs), and free all they hold.
 * Calls __memprof_heap_census through a weak declaration (the runtime may
 * be preloaded).  Allocates nothing else (no stdio). */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void __memprof_heap_census(void) __attribute__((weak));

static volatile int ready, done;

/* hold_blocks(&ready, &done): see "hold" above. */
void hold_blocks(volatile int *ready_flag, volatile int *done_flag);
__asm__(".text\n"
        ".globl hold_blocks\n"
        ".type hold_blocks,@function\n"
        "hold_blocks:\n"
        "  push %rbp\n"
        "  mov %rsp, %rbp\n"
        "  push %rbx\n"
        "  push %r12\n"
        "  push %r13\n"
        "  push %r14\n"
        "  mov %rdi, %rbx\n"
        "  mov %rsi, %r13\n"
        "  mov $4444, %edi\n"
        "  call malloc@PLT\n"
        "  mov %rax, %r12\n"
        "  mov $5555, %edi\n"
        "  call malloc@PLT\n"
        "  mov %rax, %r14\n"
        /* zero the 64 KiB below the stack pointer: malloc's dead frames */
        "  lea -65536(%rsp), %rdi\n"
        "  mov $65536, %ecx\n"
        "  xor %eax, %eax\n"
        "  rep stosb\n"
        "  mov %r14, -16384(%rsp)\n"
        "  xor %r14d, %r14d\n"
        "  xor %ecx, %ecx\n"
        "  xor %edx, %edx\n"
        "  xor %esi, %esi\n"
        "  xor %edi, %edi\n"
        "  xor %r8d, %r8d\n"
        "  xor %r9d, %r9d\n"
        "  xor %r10d, %r10d\n"
        "  xor %r11d, %r11d\n"
        "  movl $1, (%rbx)\n"
        "1:\n"
        "  pause\n"
        "  cmpl $0, (%r13)\n"
        "  je 1b\n"
        "  mov %r12, %rdi\n"
        "  call free@PLT\n"
        "  xor %r12d, %r12d\n"
        "  pop %r14\n"
        "  pop %r13\n"
        "  pop %r12\n"
        "  pop %rbx\n"
        "  pop %rbp\n"
        "  ret\n"
        ".size hold_blocks, .-hold_blocks\n");

/* hold_given(&given, &ready, &done): takes *given into r12 alone, clears
 * it, says ready, spins until done. */
void hold_given(void *volatile *given_slot, volatile int *ready_flag, volatile int *done_flag);
__asm__(".text\n"
        ".globl hold_given\n"
        ".type hold_given,@function\n"
        "hold_given:\n"
        "  push %r12\n"
        "  mov (%rdi), %r12\n"
        "  movq $0, (%rdi)\n"
        "  xor %eax, %eax\n"
        "  movl $1, (%rsi)\n"
        "1:\n"
        "  pause\n"
        "  cmpl $0, (%rdx)\n"
        "  je 1b\n"
        "  xor %r12d, %r12d\n"
        "  pop %r12\n"
        "  ret\n"
        ".size hold_given, .-hold_given\n");

static void *volatile given;

static int cloned(void *arg) {
  (void)arg;
  hold_given(&given, &ready, &done);
  return 0;
}

/* A thread the runtime does not start: clone(2) with no new TLS, on a
 * stack mapped for it; waits for it to end through the kernel's clearing
 * of its id. */
static int clone_worker(void) {
  size_t size = 256 << 10;
  char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (stack == MAP_FAILED)
    return 1;
  static volatile pid_t child;
  given = malloc(7777);
  int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD |
              CLONE_SYSVSEM | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
  if (clone(cloned, stack + size, flags, NULL, &child, NULL, &child) < 0)
    return 1;
  while (!ready)
    usleep(1000);
  if (__memprof_heap_census)
    __memprof_heap_census();
  done = 1;
  for (pid_t t; (t = child) != 0;)
    syscall(SYS_futex, &child, FUTEX_WAIT, t, NULL, NULL, 0);
  munmap(stack, size);
  return 0;
}

static void *holder(void *arg) {
  (void)arg;
  hold_blocks(&ready, &done);
  return NULL;
}

static void *blocker(void *arg) {
  (void)arg;
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGRTMAX - 3);
  pthread_sigmask(SIG_BLOCK, &s, NULL);
  ready = 1;
  while (!done)
    usleep(1000);
  return NULL;
}

static pthread_barrier_t start, end;
static int steps;

static void *churn(void *arg) {
  unsigned seed = (unsigned)(long)arg;
  void *mine[64];
  memset(mine, 0, sizeof mine);
  pthread_barrier_wait(&start);
  for (int i = 0; i < steps; i++) {
    int k = (int)(rand_r(&seed) % 64);
    if (mine[k]) {
      free(mine[k]);
      mine[k] = NULL;
    } else {
      mine[k] = malloc(16 + rand_r(&seed) % 4000);
    }
    if (i % 64 == 63 && __memprof_heap_census)
      __memprof_heap_census();
  }
  for (int k = 0; k < 64; k++)
    free(mine[k]);
  pthread_barrier_wait(&end);
  return NULL;
}

static int one_worker(void *(*fn)(void *), int censuses) {
  pthread_t t;
  if (pthread_create(&t, NULL, fn, NULL))
    return 1;
  while (!ready)
    usleep(1000);
  for (int i = 0; i < censuses && __memprof_heap_census; i++)
    __memprof_heap_census();
  done = 1;
  pthread_join(t, NULL);
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "hold"))
    return one_worker(holder, 1);
  if (argc > 1 && !strcmp(argv[1], "clone"))
    return clone_worker();
  if (argc > 1 && !strcmp(argv[1], "block"))
    return one_worker(blocker, 2);

  if (argc < 4 || strcmp(argv[1], "stress"))
    return 2;
  int t = atoi(argv[2]);
  steps = atoi(argv[3]);
  if (t < 1 || t > 16)
    return 2;
  pthread_t th[16];
  pthread_barrier_init(&start, NULL, (unsigned)t);
  pthread_barrier_init(&end, NULL, (unsigned)t);
  for (int i = 0; i < t; i++)
    if (pthread_create(&th[i], NULL, churn, (void *)(long)(i + 1)))
      return 1;
  for (int i = 0; i < t; i++)
    pthread_join(th[i], NULL);
  return 0;
}
