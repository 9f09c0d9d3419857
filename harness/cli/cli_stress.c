/* cli_stress.c - `fragbench stress`: N threads on one allocator instance (stress.c),
 * run in a child process watched by this one, so that a crash (a signal) or a hang is
 * reported and exits 1 like any other failure. Prints a per-thread report on stdout. */
#include "cli.h"
#include "options.h"
#include <errno.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include "stress.h"

static void print_report(const struct stress_spec *s, const struct stress_result *r) {
  char b[32];
  printf("fragbench stress: %s%s%s on %s\n", r->allocator, r->params[0] ? ":" : "", r->params, r->device_name);
  printf("  pattern: %s\n", r->pattern);
  printf("  %d thread%s x %.3g s, fail-rate %g, cap %s, validate %s\n", s->threads, s->threads > 1 ? "s" : "",
         s->seconds, s->fail_rate, s->cap_bytes ? fmt_bytes(s->cap_bytes, b, sizeof b) : "none", s->validate ? "on" : "off");
  printf("%6s %6s %11s %12s %10s %10s %7s %8s %8s %7s\n", "thread", "stream", "ops", "ops/s", "allocs", "frees",
         "ooms", "flushes", "injected", "passes");
  struct stress_thread tot = {0};
  for (int i = 0; i < r->threads; i++) {
    const struct stress_thread *t = &r->t[i];
    double rate = t->seconds > 0 ? (double)t->ops / t->seconds : 0;
    printf("%6d %6llu %11llu %12.0f %10llu %10llu %7llu %8llu %8llu %7llu\n", i, (unsigned long long)t->stream,
           (unsigned long long)t->ops, rate, (unsigned long long)t->allocs, (unsigned long long)t->frees,
           (unsigned long long)t->ooms, (unsigned long long)t->flushes, (unsigned long long)t->injected,
           (unsigned long long)t->passes);
    tot.ops += t->ops; tot.allocs += t->allocs; tot.frees += t->frees; tot.ooms += t->ooms;
    tot.flushes += t->flushes; tot.injected += t->injected; tot.passes += t->passes;
    if (t->seconds > tot.seconds) tot.seconds = t->seconds;
  }
  printf("%6s %6s %11llu %12.0f %10llu %10llu %7llu %8llu %8llu %7llu\n", "total", "", (unsigned long long)tot.ops,
         tot.seconds > 0 ? (double)tot.ops / tot.seconds : 0, (unsigned long long)tot.allocs, (unsigned long long)tot.frees,
         (unsigned long long)tot.ooms, (unsigned long long)tot.flushes, (unsigned long long)tot.injected,
         (unsigned long long)tot.passes);
  printf("peak reserved %s, injected device failures %llu, validator: %s", fmt_bytes(r->peak_reserved, b, sizeof b),
         (unsigned long long)r->injected_failures, r->validator);
  if (s->validate) printf(" (%llu full checks)", (unsigned long long)r->checks);
  printf("\nresult: %s\n", r->status);
}

static int stress_child(struct cli_opts *o) {
  struct stress_spec s;
  memset(&s, 0, sizeof s);
  s.allocator = o->allocators[0];
  s.workload = o->nworkloads ? o->workloads[0] : NULL;
  s.trace = o->ntraces ? o->traces[0] : NULL;
  s.trace_device = o->trace_device;
  s.threads = o->threads;
  s.seconds = o->seconds;
  s.fail_rate = o->fail_rate;
  s.validate = o->validate;
  s.seed = o->seed;
  if (cli_pick_device(o, &s.device)) return 1;
  if (o->ncaps) {
    if (o->caps[0].kind == CAP_FRACTION && !limit_device_total(&s.device)) {
      char err[FB_ERRLEN];
      struct device d;
      if (device_open(&d, &s.device, err)) { fprintf(stderr, "fragbench stress: %s\n", err); return 1; }
      device_close(&d);
    }
    s.cap_bytes = cli_limit_on(o, &s.device);   /* on the device stress runs on */
    cli_say_limit(o, &(struct limit){.from = LIMIT_GIVEN, .bytes = s.cap_bytes});   /* said back, as every command does */
  }
  struct stress_result *r = malloc(sizeof *r);
  if (!r) { fprintf(stderr, "fragbench stress: out of host memory\n"); return 1; }
  int cls = stress_run(&s, r);
  if (!strncmp(r->status, "skipped", 7)) {
    fprintf(stderr, "fragbench stress: %s: %s\n", r->allocator, r->status);
  } else if (cls == 2 && !r->allocator[0]) {
    fprintf(stderr, "fragbench stress: %s\n", r->status + 7);
  } else {
    print_report(&s, r);
    if (cls) fprintf(stderr, "fragbench stress: %s: %s\n", r->allocator, r->status);
  }
  free(r);
  return cls;
}

/* the flags it takes (flags.def) */
static const char *const stress_opts[] = {
  FLAGS_SELECTION, FLAGS_STRATEGY, FLAGS_DEVICE, "--cap", "--limit", "--cap-bytes", "--threads", "--seconds",
  "--fail-rate", "--seed", "--validate", "--quiet",
  NULL,
};

const struct cmd_def cmd_stress_def = {
  "stress", "--allocator A [--workload W | --trace F] [--threads N] [--seconds S] [--fail-rate P]",
  "N threads on one allocator instance, in a child process watched by this one: a crash or\n"
  "a hang is reported and exits 1. A per-thread report on stdout.\n",
  stress_opts, cmd_stress, NULL, NULL,
};

int cmd_stress(struct cli_opts *o) {
  if (o->nallocators != 1) {
    fprintf(stderr, "fragbench stress: give exactly one --allocator NAME (see fragbench list)\n");
    return 2;
  }
  if (o->nworkloads + o->ntraces > 1) {
    fprintf(stderr, "fragbench stress: give at most one --workload or --trace (none: random sizes)\n");
    return 2;
  }
  if (o->ncaps > 1 || (o->ncaps && o->caps[0].kind == CAP_X)) {
    fprintf(stderr, "fragbench stress: one --cap F or --cap-bytes N at most (--cap-x is for run)\n");
    return 2;
  }
  if (o->out || o->timeline || o->devices || o->on_oom == ON_OOM_SKIP || o->strict || o->verify || o->touch || o->no_touch) {
    fprintf(stderr, "fragbench stress: --out, --timeline, --devices, --on-oom, --strict, --verify, --touch and --no-touch are for run\n");
    return 2;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) return stress_child(o);   /* no process to spare: run here, unwatched */
  if (pid == 0) {
    int rc = stress_child(o);
    fflush(stdout);
    fflush(stderr);
    exit(rc);
  }
  /* the watchdog: the child's own run plus generous time for setup and the final checks */
  double limit_s = 2 * o->seconds + 120;
  struct timespec nap = {0, 20 * 1000 * 1000};
  int status = 0;
  for (double waited = 0;; waited += 0.02) {
    pid_t got = waitpid(pid, &status, WNOHANG);
    if (got == pid) break;
    if (got < 0 && errno != EINTR) { perror("fragbench stress: waitpid"); return 1; }
    if (waited > limit_s) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      fprintf(stderr, "fragbench stress: %s: hung: no end after %.0f s; killed\n", o->allocators[0], limit_s);
      return 1;
    }
    nanosleep(&nap, NULL);
  }
  if (WIFSIGNALED(status)) {
    fprintf(stderr, "fragbench stress: %s: crashed: signal %d (%s)\n", o->allocators[0], WTERMSIG(status),
            strsignal(WTERMSIG(status)));
    return 1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
