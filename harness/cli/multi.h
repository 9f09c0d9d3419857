/* multi.h - the launchers of several devices: one thread per device (--devices), or one
 * MPI rank per device (make MPI=1). The rows are the engine's plan (plan.h: rank i of
 * world N of each workload, or its own trace, per device, plus the device=all aggregate);
 * these only run a group's rows where they belong and gather the results. */
#ifndef FB_MULTI_H
#define FB_MULTI_H
#include "cli.h"
#include "plan.h"

struct device_list {
  int n;
  struct device_config cfg[64];
};

/* "0,1" | "all" | "sim:N"; kind is what --device resolved to. 0, or 2 with a message. */
int device_list_parse(const char *text, const struct device_config *base, struct device_list *out);
/* --devices: the plan's launcher that runs a group's rows on a thread each (multi.c) */
void multi_exec_threads(struct plan *p, struct plan_row *rows, int n, struct run_result *res, void *ctx);

/* MPI (make MPI=1; run_mpi.c): world size 1, rank 0 in a build without MPI. */
int mpi_start(int *argc, char ***argv);
void mpi_stop(void);
int mpi_world(void);
int mpi_rank(void);
/* one device per rank: the GPU of the local rank, or sim device r */
void mpi_devices(const struct device_config *base, struct device_list *out);
/* the plan's launcher: each rank runs the row of its slot; every rank gets every result */
void mpi_exec(struct plan *p, struct plan_row *rows, int n, struct run_result *res, void *ctx);
/* the largest v over the ranks (every rank exits with the same status) */
int mpi_agree(int v);

#endif
