/* spin.c - 300 million multiply-adds on one register, no memory traffic: how fast the core
 * itself runs right now (host_spells.sh sets it beside a percall that reads memory). */
#include <stdio.h>
#include <time.h>

int main(void) {
  struct timespec a, b;
  volatile unsigned long x = 1;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (unsigned long i = 0; i < 300000000UL; i++) x = x * 2862933555777941757UL + 3037000493UL;
  clock_gettime(CLOCK_MONOTONIC, &b);
  printf("spin %.1f ms\n", (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6);
  return 0;
}
