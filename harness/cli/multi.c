/* multi.c - --devices: the device list ("0,1", "all", "sim:N"), and the launcher that
 * runs each group of the plan's rows on a thread per device; see multi.h. */
#include "multi.h"
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

int device_list_parse(const char *text, const struct device_config *base, struct device_list *out) {
  memset(out, 0, sizeof *out);
  char err[FB_ERRLEN];
  if (!strncmp(text, "sim:", 4)) {
    uint64_t n;
    if (parse_u64(text + 4, &n) || n < 1 || n > 64) {
      fprintf(stderr, "fragbench: --devices '%s': expected sim:N with N in 1..64\n", text);
      return 2;
    }
    for (int i = 0; i < (int)n; i++) {
      out->cfg[i] = *base;
      out->cfg[i].kind = "sim";
      out->cfg[i].index = i;
    }
    out->n = (int)n;
    return 0;
  }
  int avail = strcmp(base->kind, "cuda") ? 64 : cuda_device_count(err);
  if (!strcmp(text, "all")) {
    if (!strcmp(base->kind, "sim")) {
      fprintf(stderr, "fragbench: --devices all: on the simulated device say how many: sim:N\n");
      return 2;
    }
    if (avail <= 0) { fprintf(stderr, "fragbench: --devices all: no GPU: %s\n", err); return 1; }
    for (int i = 0; i < avail && i < 64; i++) { out->cfg[i] = *base; out->cfg[i].index = i; }
    out->n = avail < 64 ? avail : 64;
    return 0;
  }
  char buf[512];
  snprintf(buf, sizeof buf, "%s", text);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    uint64_t idx;
    if (parse_u64(tok, &idx) || idx > 63 || out->n >= 64) {
      fprintf(stderr, "fragbench: --devices '%s': expected a list of device indices such as 0,1, or all, or sim:N\n", text);
      return 2;
    }
    if ((int)idx >= avail) {
      fprintf(stderr, "fragbench: --devices %s: device %llu does not exist (%d visible)\n", text, (unsigned long long)idx, avail);
      return 1;
    }
    for (int k = 0; k < out->n; k++)
      if (out->cfg[k].index == (int)idx) {
        fprintf(stderr, "fragbench: --devices '%s': device %llu named twice (it would count twice in the aggregate)\n", text,
                (unsigned long long)idx);
        return 2;
      }
    out->cfg[out->n] = *base;
    out->cfg[out->n].index = (int)idx;
    out->n++;
  }
  return out->n ? 0 : 2;
}

#ifndef FB_HAVE_MPI
int mpi_start(int *argc, char ***argv) { (void)argc; (void)argv; return 1; }
void mpi_stop(void) {}
int mpi_world(void) { return 1; }
int mpi_rank(void) { return 0; }
void mpi_devices(const struct device_config *base, struct device_list *out) { out->n = 1; out->cfg[0] = *base; }
void mpi_exec(struct plan *p, struct plan_row *rows, int n, struct run_result *res, void *ctx) { plan_exec_here(p, rows, n, res, ctx); }
int mpi_agree(int v) { return v; }
#endif

struct job { struct plan *p; struct plan_row *row; struct run_result *res; pthread_t th; };

static void *job_main(void *a) {
  struct job *j = a;
  plan_row_run(j->p, j->row, j->res);
  return NULL;
}

/* a thread per row of the group: each its own device, workload rank and allocator
 * instance; they share nothing but the plan's per-slot caches, one slot each */
void multi_exec_threads(struct plan *p, struct plan_row *rows, int n, struct run_result *res, void *ctx) {
  (void)ctx;
  struct job jobs[PLAN_MAX];
  int started = 0;
  for (int i = 0; i < n; i++) {
    jobs[i] = (struct job){.p = p, .row = &rows[i], .res = &res[i]};
    if (pthread_create(&jobs[i].th, NULL, job_main, &jobs[i])) { job_main(&jobs[i]); jobs[i].p = NULL; }
    else started++;
  }
  for (int i = 0; i < n; i++) if (jobs[i].p) pthread_join(jobs[i].th, NULL);
  (void)started;
}
