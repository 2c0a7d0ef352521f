/* tiny_elf.c - source of corpus/elf/: clang-22 -g -O1 -nostdlib -static
 * -Wl,--build-id tiny_elf.c -o tiny-dwarf5 (-gdwarf-4: tiny-dwarf4; strip:
 * tiny-stripped; -gz=zstd: tiny-zstd; -gsplit-dwarf, .dwo not kept:
 * tiny-split).  Small ELF files with inline frames for fuzz_elf. */
static inline __attribute__((always_inline)) int add(int a, int b) { return a * b + 1; }
__attribute__((noinline)) int work(int x) { return add(x, 3) + add(x, 5); }
void _start(void) {
  volatile int r = work(7);
  (void)r;
  __asm__ volatile("mov $60, %eax\n xor %edi, %edi\n syscall");
}
