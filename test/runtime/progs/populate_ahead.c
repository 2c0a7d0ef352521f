/* populate_ahead.c - test_rt_heap_layout.py: which slots and shadow pages past a growing class are resident (mincore). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

extern uintptr_t __memprof_shadow_memory_dynamic_address;

static int resident(uintptr_t a) {
  unsigned char v = 0;
  if (mincore((void *)(a & ~(uintptr_t)4095), 4096, &v))
    return -1;
  return v & 1;
}

static uintptr_t shadow(uintptr_t a) {
  return __memprof_shadow_memory_dynamic_address + ((a & ~(uintptr_t)63) >> 3);
}

/* Resident, or becomes so within 2 s (the ticker's share). */
static int resident_soon(uintptr_t a) {
  for (int i = 0; i < 2000; i++) {
    if (resident(a) == 1)
      return 1;
    usleep(1000);
  }
  return resident(a);
}

enum { N = 4096 }; /* 4 MiB: past the 2 MiB from which a class is populated */
static char *big[N];

int main(void) {
  uintptr_t hi = 0;
  for (int i = 0; i < N; i++) { /* 1000 bytes: the 1 KiB class */
    big[i] = malloc(1000);
    if ((uintptr_t)big[i] > hi)
      hi = (uintptr_t)big[i];
  }
  char *few[4];
  uintptr_t few_hi = 0;
  for (int i = 0; i < 4; i++) { /* 600 bytes: the 640-byte class */
    few[i] = malloc(600);
    if ((uintptr_t)few[i] > few_hi)
      few_hi = (uintptr_t)few[i];
  }
  enum { M = 512 }; /* 4200 bytes: the 4608-byte class, 2.25 MiB */
  static char *pages[M];
  uintptr_t pages_hi = 0;
  for (int i = 0; i < M; i++) {
    pages[i] = malloc(4200);
    if ((uintptr_t)pages[i] > pages_hi)
      pages_hi = (uintptr_t)pages[i];
  }
  printf("slots_ahead_128k %d\n", resident_soon(hi + (128 << 10)));
  printf("pages_ahead_128k %d\n", resident_soon(pages_hi + (128 << 10)));
  printf("shadow_ahead_128k %d\n", resident_soon(shadow(hi + (128 << 10))));
  printf("slots_ahead_2m %d\n", resident(hi + (2 << 20)));
  printf("shadow_ahead_2m %d\n", resident(shadow(hi + (2 << 20))));
  printf("few_ahead_16k %d\n", resident(few_hi + (16 << 10)));
  for (int i = 0; i < N; i++)
    free(big[i]);
  for (int i = 0; i < 4; i++)
    free(few[i]);
  for (int i = 0; i < M; i++)
    free(pages[i]);
  return 0;
}
