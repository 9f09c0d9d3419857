/* outfile.h - outputs that never clobber: each is written to a temporary file beside its
 * target and renamed into place only when the command succeeds (outfile_finish with
 * keep), so a failed or interrupted run leaves an existing file byte for byte as it was;
 * and an output that is the same file as an input (same device and inode), or as another
 * output, is refused before anything is opened for writing. A target that exists and is
 * not a regular file (/dev/null, a fifo, a terminal) is written directly. */
#ifndef FB_OUTFILE_H
#define FB_OUTFILE_H
#include <stdio.h>

struct outfile {
  FILE *f;
  char path[1024];      /* the target */
  char tmp[1100];       /* the temporary beside it ("" = writing the target directly) */
  int active;
};

/* Open a temporary beside path ("what" names it in the message). The FILE, or NULL with a
 * message on stderr. */
FILE *outfile_open(struct outfile *o, const char *path, const char *what);
/* keep: close and rename into place (0, or -1 with a message); else close and remove the
 * temporary (0). Nothing to do when never opened. */
int outfile_finish(struct outfile *o, int keep);
void outfile_abort(struct outfile *o);
/* Every output (flags[i] names outs[i]; NULL outs skipped) against every input and the
 * other outputs: 0, or 2 with a message naming both ("fragbench CMD: ..."). */
int outfile_check(const char *cmd, const char *const *flags, const char *const *outs, int nout,
                  const char *const *ins, int nin);

/* a temporary of this process that SIGINT/SIGTERM/SIGHUP remove (on=1), or no longer (0) */
void outfile_track(const char *path, int on);

#endif
