/* oom_message.h - the memory limit PyTorch's own out-of-memory error text states: the
 * "N GiB allowed" of a memory fraction, else the GPU's total capacity (the current
 * message and the older "(GPU 0; 79.15 GiB total capacity; ...)" one).
 * A minimal reader written for the command line's --oom-message (issue 29 item 4); the
 * advise work owns this API and may extend it. */
#ifndef FB_OOM_MESSAGE_H
#define FB_OOM_MESSAGE_H
#include <stdint.h>

struct oom_message {
  uint64_t limit;          /* the limit to use, bytes */
  uint64_t total;          /* the GPU's total capacity; 0 = not stated */
  uint64_t allowed;        /* "N allowed" (a memory fraction); 0 = not stated */
  char source[96];         /* a short phrase: where limit came from */
};

/* Reads the text from a file or "-" (stdin). 0, or 2 with err (FB_ERRLEN). */
int oom_message_read(const char *path_or_dash, struct oom_message *m, char *err);
/* The same from text in memory. */
int oom_message_parse(const char *text, struct oom_message *m, char *err);

#endif
