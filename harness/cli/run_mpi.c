/* run_mpi.c - `make MPI=1`: one MPI rank per device, the way nccl-tests does it. Each
 * rank takes the GPU of its local rank (or a sim device), runs rank r of each workload
 * (or the r-th --trace file, or device trace r of one snapshot), and sends its rows to
 * rank 0, which writes the CSV with one row per rank and an aggregate row (device=all)
 * spanning all ranks. Compiled only with MPI=1 (files ending in _mpi.c). */
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

int cmd_run_mpi(struct cli_opts *o, const struct device_config *base) {
  static const char *default_alloc[] = {"raw"};
  const char **allocs = o->nallocators ? o->allocators : default_alloc;
  int nalloc = o->nallocators ? o->nallocators : 1;
  int ngroups = o->nworkloads + (o->ntraces ? 1 : 0);
  struct device_config cfg = *base;
  cfg.index = strcmp(cfg.kind, "cuda") ? world_rank : local_rank;
  struct output out;
  int root = world_rank == 0;
  if (root) {
    if (output_open(&out, o->out)) MPI_Abort(MPI_COMM_WORLD, 2);
    out.quiet = o->quiet;
    output_gate(&out, o);
  }
  struct run_result *rows = root ? calloc((size_t)world_size, sizeof *rows) : NULL;
  int worst = 0;
  for (int g = 0; g < ngroups; g++)
    for (int ai = 0; ai < nalloc; ai++) {
      int ncap = o->ncaps ? o->ncaps : 1;
      for (int c = 0; c < ncap; c++) {
        struct source src = {.trace_device = -1};
        if (g < o->nworkloads) src.workload = o->workloads[g];
        else if (o->ntraces > 1) src.trace = o->traces[world_rank % o->ntraces];
        else { src.trace = o->traces[0]; src.trace_device = world_rank; }
        struct run_spec s;
        cli_spec(o, &cfg, &src, &s);
        s.rank = world_rank;
        s.world = world_size;
        s.seed = o->seed + (uint64_t)world_rank * 1000003u;
        s.allocator = allocs[ai];
        s.progress = 0;
        if (o->ncaps) {
          const struct cap *cp = &o->caps[c];
          s.cap_bytes = cp->kind == CAP_BYTES ? cp->bytes
                      : (uint64_t)(cp->value * (double)(cfg.sim_total ? cfg.sim_total : SIM_TOTAL_DEFAULT));
        }
        struct run_result r;
        run_result_init(&r);
        replay_run(&s, &r);
        snprintf(r.device, sizeof r.device, "%s:%d@rank%d", strcmp(cfg.kind, "cuda") ? "sim" : "cuda", cfg.index, world_rank);
        MPI_Gather(&r, sizeof r, MPI_BYTE, rows, sizeof r, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (root) {
          for (int i = 0; i < world_size; i++) {
            output_row(&out, &rows[i]);
            if (rows[i].exit_class > worst) worst = rows[i].exit_class;
          }
          struct run_result agg;
          aggregate_rows(rows, world_size, &agg);
          output_row(&out, &agg);
        }
      }
    }
  if (root) { output_close(&out); if (out.gate_failed && worst < 1) worst = 1; }
  free(rows);
  MPI_Bcast(&worst, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return worst;
}
