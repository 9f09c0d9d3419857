/* multi.h - several devices at once: one thread per device (--devices), or one MPI rank
 * per device (make MPI=1). Each device runs its own workload instance (rank i of world
 * N) or its own trace, with its own allocator instance; one row per device, plus an
 * aggregate row with device=all. */
#ifndef FB_MULTI_H
#define FB_MULTI_H
#include "cli.h"

struct device_list {
  int n;
  struct device_config cfg[64];
};

/* "0,1" | "all" | "sim:N"; kind is what --device resolved to. 0, or 2 with a message. */
int device_list_parse(const char *text, const struct device_config *base, struct device_list *out);
/* The aggregate row of n per-device rows: peaks are the largest device's, imbalance =
 * max/min peak_reserved, wall = the slowest device's; counts summed. */
void aggregate_rows(const struct run_result *rows, int n, struct run_result *agg);
/* Run `run` with --devices. */
int cmd_run_multi(struct cli_opts *o, const struct device_config *base);

/* MPI (make MPI=1; run_mpi.c): world size 1 in a build without MPI. */
int mpi_start(int *argc, char ***argv);
void mpi_stop(void);
int mpi_world(void);
int cmd_run_mpi(struct cli_opts *o, const struct device_config *base);

#endif
