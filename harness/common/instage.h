/* instage.h - inputs that can be read only once: a pipe (`--trace <(zcat x.gz)`),
 * /dev/stdin or "-", a fifo. Such an input is copied once into a private temporary
 * file (same base name, in a fresh directory `fragbench-input-PID-XXXXXX` under $TMPDIR),
 * and every later reader - format detection, the device-trace pass, the replays - reads
 * that copy. Regular files are read in place. A fifo waits for its writer's first byte
 * (or end) at most INSTAGE_WAIT_S seconds (FB_FIFO_WAIT_S overrides it), then is refused
 * saying so: a late writer is waited for, a missing one never hangs the command. The
 * copies are removed at exit and on SIGINT/SIGTERM/SIGHUP/SIGPIPE; one left by a killed
 * process (its PID gone) is removed by the next command that stages an input. */
#ifndef FB_INSTAGE_H
#define FB_INSTAGE_H
#include <stddef.h>

#define INSTAGE_WAIT_S 5

/* path itself when it is a regular file (or does not exist: the reader says so), else
 * the copy's path (static storage, valid until exit). NULL with err on failure. */
const char *instage(const char *path, char *err, size_t errlen);
/* the name to show for a path instage returned: "<stdin>" or the name given for a copy,
 * else path itself */
const char *instage_shown(const char *path);

#endif
