/* junk_frame_pointer.c - calls malloc with %rbp holding a value that is no
 * frame pointer (code built without frame pointers may leave anything
 * there): -16, -8, 8 and an address in the middle of nowhere.  The
 * runtime's stack walk must stop, not fault.  Prints "ok N". */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* malloc(n) with %rbp = v.  The red zone is stepped over and the stack
 * aligned to 16 bytes at the call, whatever the compiler left in %rsp. */
static __attribute__((noinline)) void *malloc_with_rbp(uintptr_t v, size_t n) {
  void *r;
  __asm__ volatile("mov %%rsp, %%r12\n\t"
                   "sub $128, %%rsp\n\t"
                   "and $-16, %%rsp\n\t"
                   "push %%rbp\n\t"
                   "sub $8, %%rsp\n\t"
                   "mov %[v], %%rbp\n\t"
                   "call malloc@PLT\n\t"
                   "add $8, %%rsp\n\t"
                   "pop %%rbp\n\t"
                   "mov %%r12, %%rsp"
                   : "=a"(r), "+D"(n)
                   : [v] "b"(v)
                   : "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "r12", "memory", "cc",
                     "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
                     "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",
                     "xmm15");
  return r;
}

int main(void) {
  static const uintptr_t junk[] = {(uintptr_t)-16, (uintptr_t)-8, 8,
                                   (uintptr_t)0x7ff0deadbee0ULL};
  int ok = 0;
  for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
    void *p = malloc_with_rbp(junk[i], 40 + i);
    ok += p != NULL;
    free(p);
  }
  printf("ok %d\n", ok);
  return 0;
}
