/* instage.h - inputs that can be read only once: a pipe (`--trace <(zcat x.gz)`),
 * /dev/stdin or "-", a fifo. Such an input is copied once into a private temporary
 * file (same base name, in a fresh directory under $TMPDIR), and every later reader -
 * format detection, the device-trace pass, the replays - reads that copy. Regular files
 * are read in place. A fifo with no writer gives an empty copy (an error downstream),
 * never a hang. The copies are removed at exit or on SIGINT/SIGTERM/SIGHUP. */
#ifndef FB_INSTAGE_H
#define FB_INSTAGE_H
#include <stddef.h>

/* path itself when it is a regular file (or does not exist: the reader says so), else
 * the copy's path (static storage, valid until exit). NULL with err on failure. */
const char *instage(const char *path, char *err, size_t errlen);

#endif
