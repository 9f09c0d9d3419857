/* outfile.h - outputs that never clobber, written exactly where they are named.
 *
 * What a name stands for (outfile_resolve): "-" is standard output; a symlink is followed
 * to its target, as a shell's `>` does (the target is written, the link stays a link); a
 * name that is, or leads through a /proc magic link to (/dev/stdout, /dev/fd/N), an open
 * file, or a target that is not a regular file (/dev/null, a fifo, a terminal, a device),
 * is written in place - opened and written, never renamed over. A regular file, or a name
 * not there yet, is written to a temporary beside the target and renamed onto it only when
 * the command succeeds (outfile_finish with keep): a failed or interrupted run leaves an
 * existing file byte for byte as it was. A name longer than PATH_MAX (4096) or with a
 * component over NAME_MAX (255) is refused, never cut; an existing regular file without
 * write permission (0444) is refused, not replaced - for root too.
 *
 * The temporary is an unnamed file (O_TMPFILE) where the file system has them, named only
 * for the rename: a SIGKILL leaves nothing beside the target. Elsewhere it is
 * `.NAME.tmp-PID-XXXXXX`: removed on SIGINT/SIGTERM/SIGHUP/SIGPIPE, and one left by a
 * killed process (its PID gone) is removed by the next outfile_open of the same target.
 * (FB_OUTFILE_NAMED=1 in the environment takes the named way everywhere: for tests.)
 * A failed write, flush or close is an error (outfile_finish: -1 with a message). */
#ifndef FB_OUTFILE_H
#define FB_OUTFILE_H
#include <limits.h>
#include <stdio.h>
#include <sys/types.h>

#define OUTFILE_PATH_MAX 4096   /* PATH_MAX: the longest name taken (with its NUL) */

struct outfile {
  FILE *f;
  char path[OUTFILE_PATH_MAX];       /* the name as given */
  char target[OUTFILE_PATH_MAX];     /* where the bytes land: symlinks followed */
  char tmp[OUTFILE_PATH_MAX + 64];   /* the named temporary ("" = none, or none yet) */
  int anon;                          /* an unnamed temporary (O_TMPFILE), not yet named */
  int direct;                        /* written in place: stdout, a device, a fifo, a magic link */
  int is_stdout;                     /* "-": standard output (flushed, never closed) */
  int active;
};

/* Open path for writing ("what" names it in the message). The FILE, or NULL with a
 * message on stderr. */
FILE *outfile_open(struct outfile *o, const char *path, const char *what);
/* keep: flush, close and rename into place (0, or -1 with a message); else close and
 * remove the temporary (0). A failed write or close is -1 when keep. Nothing to do when
 * never opened. */
int outfile_finish(struct outfile *o, int keep);
void outfile_abort(struct outfile *o);
/* A name other programs can open the temporary by (gnuplot writes the picture there and
 * reads the data): an unnamed temporary is given its name now; the target itself when
 * written in place. NULL with a message when it cannot be named. */
const char *outfile_name(struct outfile *o);

/* What a name stands for: OUTFILE_RENAME (a regular file or nothing yet: target is where
 * it lands, symlinks followed), OUTFILE_IN_PLACE (standard output, a device, a fifo, a
 * magic link: written by opening the name), or -1 with err (too long, a directory, a loop
 * of links). */
enum { OUTFILE_RENAME = 0, OUTFILE_IN_PLACE = 1 };
int outfile_resolve(const char *path, char *target, size_t n, char *err, size_t errlen);
/* The name is one the system takes: at most PATH_MAX - 1 bytes, each component at most
 * NAME_MAX. 0, or -1 with err. */
int outfile_name_ok(const char *path, char *err, size_t errlen);
/* Could the name be written now (its directory there and writable; an existing regular
 * file writable by its mode, for root too)? 0, or -1 with err. */
int outfile_writable(const char *path, char *err, size_t errlen);
/* The same file? Both exist and share device and inode, or neither exists and they land
 * at the same place (directories resolved). 1 yes, 0 no. */
int outfile_same(const char *a, const char *b);

/* Is the name standard output, as "-" or under another name (/dev/stdout, /proc/self/fd/1,
 * the terminal or file it is)? Two outputs there would interleave. /dev/null is not
 * counted: it takes any number. */
int outfile_is_stdout(const char *path);

/* a temporary of this process that SIGINT/SIGTERM/SIGHUP/SIGPIPE remove (on=1), or no longer (0) */
void outfile_track(const char *path, int on);
/* is the process `pid` gone (no such process)? for leftovers named after their PID */
int outfile_pid_gone(long pid);

#endif
