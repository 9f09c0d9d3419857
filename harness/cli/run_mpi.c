/* run_mpi.c - `make MPI=1`: one MPI rank per device, the way nccl-tests does it. Every
 * rank builds the same plan (plan.h); each runs the row of its slot in every group on the
 * GPU of its local rank (or sim device r): rank r of each workload, the r-th --trace
 * file, or device trace r of one snapshot; the results are gathered so that rank 0
 * writes the CSV (a row per rank and the device=all aggregate) and every rank agrees on
 * the exit status. Compiled only with MPI=1 (files ending in _mpi.c). */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include "multi.h"

static int world_rank, world_size, local_rank;

int mpi_start(int *argc, char ***argv) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &local_rank);
  MPI_Comm_free(&local);
  return world_size;
}

void mpi_stop(void) { MPI_Finalize(); }
int mpi_world(void) { return world_size; }

int mpi_rank(void) { return world_rank; }

void mpi_devices(const struct device_config *base, struct device_list *out) {
  memset(out, 0, sizeof *out);
  out->n = world_size < 64 ? world_size : 64;
  for (int i = 0; i < out->n; i++) { out->cfg[i] = *base; out->cfg[i].index = i; }
  if (world_rank < out->n && !strcmp(base->kind, "cuda")) out->cfg[world_rank].index = local_rank;
}

void mpi_exec(struct plan *p, struct plan_row *rows, int n, struct run_result *res, void *ctx) {
  (void)ctx;
  struct run_result r;
  if (world_rank < n) {
    plan_row_run(p, &rows[world_rank], &r);
    int idx = rows[world_rank].spec.device.index;
    snprintf(r.device, sizeof r.device, "%s:%d@rank%d", strcmp(rows[world_rank].spec.device.kind, "cuda") ? "sim" : "cuda", idx, world_rank);
  } else {
    run_result_init(&r);
  }
  MPI_Allgather(&r, sizeof r, MPI_BYTE, res, sizeof r, MPI_BYTE, MPI_COMM_WORLD);
}

int mpi_agree(int v) {
  int m = v;
  MPI_Allreduce(&v, &m, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return m;
}
