/* sym_raw_prog.c - a program for test_sym_raw.c: functions with inlined
 * calls several levels deep, a type with members (a subtree the walk
 * skips), static and external functions, a loop and a switch, so that the
 * line table has many rows and the DIE tree has every shape sym_scan.c
 * reads. */
#include <stdlib.h>

struct node {
  struct node *next;
  int value;
  unsigned char tag[3];
};

volatile int sink;

static inline __attribute__((always_inline)) int leaf(int x) {
  return x * 3 + 1;
}

static inline __attribute__((always_inline)) int middle(int x) {
  int s = 0;
  for (int i = 0; i < x; i++)
    s += leaf(i) ^ leaf(s);
  return s;
}

static __attribute__((noinline)) struct node *push(struct node *head, int v) {
  struct node *n = malloc(sizeof *n);
  n->next = head;
  n->value = middle(v);
  n->tag[0] = (unsigned char)v;
  return n;
}

__attribute__((noinline)) int classify(int v) {
  switch (v % 5) {
  case 0: return leaf(v);
  case 1: return middle(v) + 2;
  case 2: return -v;
  case 3: return leaf(middle(v));
  default: return 7;
  }
}

int main(int argc, char **argv) {
  (void)argv;
  struct node *head = NULL;
  for (int i = 0; i < argc * 10; i++)
    head = push(head, classify(i));
  while (head) {
    struct node *next = head->next;
    sink += head->value;
    free(head);
    head = next;
  }
  return 0;
}
