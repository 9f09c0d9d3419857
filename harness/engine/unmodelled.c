/* unmodelled.c - see unmodelled.h. */
#include "unmodelled.h"
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "status.h"

#define SEEN_MAX 32

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char seen[SEEN_MAX][200];
static int nseen;

void unmodelled_note(char *status, size_t len, const char *source, const char *what, int quiet, FILE *to) {
  char note[400];
  snprintf(note, sizeof note, "%s%s", STATUS_NOT_MODELLED, what);
  if (!strstr(status, note)) {
    size_t k = strlen(status);
    if (k + strlen(note) < len) memcpy(status + k, note, strlen(note) + 1);
  }
  if (quiet) return;
  if (to) {   /* a row's own buffer: every time, its writer says each once */
    fprintf(to, "fragbench: warning: %s: not modelled: %s\n", source, what);
    return;
  }
  pthread_mutex_lock(&lock);
  int printed = 0;
  for (int i = 0; i < nseen && !printed; i++) printed = !strncmp(seen[i], what, sizeof seen[i] - 1);
  if (!printed) {
    if (nseen < SEEN_MAX) snprintf(seen[nseen++], sizeof seen[0], "%s", what);
    fprintf(stderr, "fragbench: warning: %s: not modelled: %s\n", source, what);
  }
  pthread_mutex_unlock(&lock);
}

void unmodelled_pool_blind(char *out, size_t len, const char *strategy) {
  snprintf(out, len, "private memory pools (CUDA graphs or MemPool): %s replays their allocations in the general pool", strategy);
}
