/* lookup.h - the one message for a name that is not in a table:
 * "unknown WHAT 'NAME'; known: a b c". Every lookup (workloads, allocators, commands,
 * options, trace devices) writes it through these three calls. */
#ifndef FB_LOOKUP_H
#define FB_LOOKUP_H
#include <stddef.h>

struct lookup { char *buf; size_t cap, len; };

/* start "unknown WHAT 'NAME'; known:" in buf */
void lookup_begin(struct lookup *l, char *buf, size_t cap, const char *what, const char *name);
/* append " KNOWN" (NULL or "" adds nothing) */
void lookup_known(struct lookup *l, const char *known);
/* the message built so far */
const char *lookup_text(const struct lookup *l);

#endif
