/* trace_hold.c - a trace file held in memory for a command that reads it more than once
 * (explain: its events, then its allocation frames, only where asked): src_hold reads the
 * file once, whole; while it is held, src_open_path reads those bytes (through fmemopen,
 * the same gzip and CSV paths as a file) instead of opening the file again. Nothing is
 * held unless a command asks; src_release_all ends it. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "trace_src.h"

#define HOLD_MAX 8

static struct held { char *path; void *buf; size_t n; } held[HOLD_MAX];
static int nheld;
static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;

int src_hold(const char *path, size_t max_bytes, char *err) {
  struct stat st;
  if (stat(path, &st)) { snprintf(err, FB_ERRLEN, "%s: cannot open: %s", path, strerror(errno)); return -1; }
  if (!S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size > max_bytes) return 1;   /* a pipe is read once, by its reader */
  FILE *f = fopen(path, "rb");
  if (!f) { snprintf(err, FB_ERRLEN, "%s: cannot open: %s", path, strerror(errno)); return -1; }
  int rc = 1;
  void *buf = NULL;
  long n = -1;
  if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) >= 0 && (size_t)n <= max_bytes && !fseek(f, 0, SEEK_SET) && n > 0 &&
      (buf = malloc((size_t)n)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
    pthread_mutex_lock(&hold_lock);
    char *p = nheld < HOLD_MAX ? strdup(path) : NULL;
    if (p) {
      held[nheld++] = (struct held){p, buf, (size_t)n};
      buf = NULL;
      rc = 0;
    }
    pthread_mutex_unlock(&hold_lock);
  }
  free(buf);   /* not held (too large, empty, unreadable): its readers open it themselves */
  fclose(f);
  return rc;
}

FILE *src_held_open(const char *path) {
  FILE *f = NULL;
  pthread_mutex_lock(&hold_lock);
  for (int i = 0; i < nheld && !f; i++)
    if (!strcmp(held[i].path, path)) f = fmemopen(held[i].buf, held[i].n, "rb");
  pthread_mutex_unlock(&hold_lock);
  return f;
}

void src_release_all(void) {
  pthread_mutex_lock(&hold_lock);
  for (int i = 0; i < nheld; i++) {
    free(held[i].path);
    free(held[i].buf);
  }
  nheld = 0;
  pthread_mutex_unlock(&hold_lock);
}
