/* status.h - what a row's status says (the results CSV's status column, run_result.status):
 * "ok", "oom", "skipped: ...", "error: ...", and after "ok" or "oom" the features of the
 * input the replay could not honour: "ok; not modelled: private memory pools (...)". A
 * row that completed is "ok" whatever its notes; readers ask through these. */
#ifndef FB_STATUS_H
#define FB_STATUS_H
#include <string.h>

/* the status is `word` ("ok", "oom"), with or without "; not modelled: ..." notes */
static inline int status_is(const char *status, const char *word) {
  size_t n = strlen(word);
  return !strncmp(status, word, n) && (status[n] == 0 || !strncmp(status + n, "; ", 2));
}

#define STATUS_NOT_MODELLED "; not modelled: "

#endif
