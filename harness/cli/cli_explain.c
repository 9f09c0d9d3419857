/* cli_explain.c - `fragbench explain --trace FILE [--at oom|peak|EVENT] [--allocator A]...
 * [--plot FILE.png|.svg] [--html FILE.html] [--blocks-csv FILE.csv]`: the memory at one
 * moment, in words on stdout (explain.c computes it), as a picture (explain_plot.c,
 * through gnuplot), as a page to hover (html_explain.c) and as a list of its blocks
 * (explain_csv.c); --allocator repeated explains the same moment under each. */
#include "trace_src.h"
#include "cli.h"
#include "options.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "explain.h"
#include "explain_plot.h"
#include "html_explain.h"
#include "outfile.h"
#include "limit.h"

/* the flags it takes (flags.def) */
static const char *const explain_opts[] = {
  "--trace", "--trace-device", "--at", "--allocator", "--alloc-conf", FLAGS_LIMIT, "--device", "--sim-total",
  "--plot", "--html", "--blocks-csv",
  NULL,
};

const struct cmd_def cmd_explain_def = {
  "explain", "--trace FILE [--at oom|peak|EVENT] [--allocator A]... [--plot FILE.png|.svg] [--html FILE.html]   the memory at that moment",
  "What did the memory look like at that moment? Replays the trace on the simulated device\n"
  "under one strategy up to the moment, then prints every segment with its blocks\n"
  "(allocated / free / inactive: a free piece of a split segment, which release-and-retry\n"
  "cannot give back), reserved, allocated, the free bytes inside reserved and in how many\n"
  "pieces, the largest free block, and the request made at that moment: whether it fits,\n"
  "and if not why (the largest free block against the rounded request, the new segment\n"
  "it needs against the cap, what releasing the cache could give back). The limit defaults\n"
  "to the one the job ran under when the snapshot ended in an OOM (--no-infer-cap: none).\n"
  "\n"
  "--trace FILE: the snapshot (or any trace) to explain (required, once). --allocator:\n"
  "caching and expandable list their segments, others give totals only; repeated, the same\n"
  "moment under each, one after another. --plot: one bar per segment, blocks coloured by\n"
  "state, the request drawn beside them.\n",
  explain_opts, cmd_explain,
  "If the strategy fails before the moment asked for, the moment shown is its failure.\n"
  "exit status: 0 shown; 2 bad usage or input (--at past the end or not an alloc, --at oom\n"
  "on a trace without an OOM); 1 a device error.\n", NULL,
};



#define MAX_SEGS_SHOWN 40
#define MAX_BLOCKS_SHOWN 12

static void print_segments(FILE *o, const struct explain_state *st) {
  char a[32], b[32];
  fprintf(o, "\nsegments (%llu, address order; blocks: size and state):\n", (unsigned long long)st->nsegments);
  uint64_t seg = 0;
  for (size_t i = 0; i < st->nblocks;) {
    size_t j = i;
    while (j < st->nblocks && st->blocks[j].seg_addr == st->blocks[i].seg_addr) j++;
    seg++;
    if (seg <= MAX_SEGS_SHOWN) {
      const struct seg_block *s0 = &st->blocks[i];
      uint64_t used = 0, unmapped = 0;
      for (size_t k = i; k < j; k++) {
        if (st->blocks[k].state == SEG_ALLOCATED) used += st->blocks[k].size;
        if (st->blocks[k].state == SEG_UNMAPPED) unmapped += st->blocks[k].size;
      }
      char pool[48] = "";
      if (s0->pool) snprintf(pool, sizeof pool, " of private pool %u%s", s0->pool, s0->pool_live ? "" : " (released)");
      fprintf(o, "  #%-3llu %#llx %10s%s %s pool%s, stream %llu, %s allocated:", (unsigned long long)seg, (unsigned long long)s0->seg_addr,
             fmt_bytes(s0->seg_size - unmapped, a, sizeof a), unmapped ? " mapped" : "", s0->small_pool ? "small" : "large", pool,
             (unsigned long long)s0->stream, fmt_bytes(used, b, sizeof b));
      for (size_t k = i; k < j && k < i + MAX_BLOCKS_SHOWN; k++)
        fprintf(o, " [%s %s]", fmt_bytes(st->blocks[k].size, a, sizeof a), explain_state_name(st->blocks[k].state));
      if (j - i > MAX_BLOCKS_SHOWN) fprintf(o, " ... %zu more blocks", j - i - MAX_BLOCKS_SHOWN);
      fprintf(o, "\n");
    }
    i = j;
  }
  if (seg > MAX_SEGS_SHOWN) fprintf(o, "  ... %llu more segments (all in --plot and --html)\n", (unsigned long long)(seg - MAX_SEGS_SHOWN));
  fprintf(o, "  %zu block%s in %llu segment%s (every one drawn by --html, listed by --blocks-csv)\n", st->nblocks, st->nblocks == 1 ? "" : "s",
          (unsigned long long)seg, seg == 1 ? "" : "s");
}

/* the largest blocks live at the OOM and where they were allocated (explain_frames.c) */
static void print_live_frames(FILE *o, const struct explain_state *st) {
  char a[32];
  if (!st->frames_known) return;
  if (!st->live_with_frames && !st->info.oom_frames[0]) {
    fprintf(o, "to see where memory was allocated, record stack frames before the run:\n"
           "  torch.cuda.memory._record_memory_history(enabled='all', context='all', stacks='python', max_entries=1000000)\n"
           "(context='alloc' or 'all' keeps each allocation's stack; stacks='all' adds C++ frames)\n");
    return;
  }
  if (st->live_at_oom == 1) fprintf(o, "the one block live at the OOM, where it was allocated:\n");
  else fprintf(o, "the largest of the %llu blocks live at the OOM, where they were allocated:\n", (unsigned long long)st->live_at_oom);
  for (int i = 0; i < st->ntop; i++)
    fprintf(o, "  %10s  %s\n", fmt_bytes(st->top[i].size, a, sizeof a), st->top[i].frames[0] ? st->top[i].frames : "(no stack recorded)");
}

static void print_why(FILE *o, const struct explain_state *st) {
  char a[32], b[32], c[32], d[32];
  fprintf(o, "\nthe request: %s (rounded %s) on stream %llu", fmt_bytes(st->request, a, sizeof a), fmt_bytes(st->rounded, b, sizeof b),
         (unsigned long long)st->stream);
  if (st->at_oom)
    fprintf(o, "; PyTorch recorded %s on stream %llu with %s free on the device", fmt_bytes(st->info.oom_request, c, sizeof c),
           (unsigned long long)st->info.oom_stream, fmt_bytes(st->info.oom_device_free, d, sizeof d));
  fprintf(o, "\n");
  if (st->at_oom) {
    if (st->info.oom_frames[0]) {
      fprintf(o, "its stack, as the snapshot holds it:\n");
      for (const char *f = st->info.oom_frames; *f;) {
        const char *e = strstr(f, "; ");
        int len = e ? (int)(e - f) : (int)strlen(f);
        fprintf(o, "  %.*s\n", len, f);
        f = e ? e + 2 : f + len;
      }
    } else {
      fprintf(o, "(the snapshot holds no stack frames for it)\n");
    }
    print_live_frames(o, st);
  }
  if (st->fits) {
    fprintf(o, "it fits: %s places it%s\n", st->allocator,
           st->largest_free >= st->rounded ? " in a free block" : " in a new segment");
    return;
  }
  fprintf(o, "why nothing fit:\n");
  fprintf(o, "  the largest free block is %s, the rounded request %s%s\n", fmt_bytes(st->largest_free, a, sizeof a),
         fmt_bytes(st->rounded, b, sizeof b), st->largest_free >= st->rounded ? " (it would fit, but a block that size is not "
         "taken for it: max_split_size or the oversize rule)" : ": no free block is large enough");
  if (st->cap) {
    fprintf(o, "  a new segment of %s would bring reserved to %s, over the cap of %s\n", fmt_bytes(st->segment, a, sizeof a),
           fmt_bytes(st->reserved + st->segment, b, sizeof b), fmt_bytes(st->cap, c, sizeof c));
    if (st->has_segments) {
      uint64_t after = st->reserved - st->releasable + st->segment;
      fprintf(o, "  release-and-retry could give back %s (%llu wholly free segment%s): %s + %s = %s, %s the cap\n",
             fmt_bytes(st->releasable, a, sizeof a), (unsigned long long)st->releasable_segments,
             st->releasable_segments == 1 ? "" : "s", fmt_bytes(st->reserved - st->releasable, b, sizeof b),
             fmt_bytes(st->segment, c, sizeof c), fmt_bytes(after, d, sizeof d), after > st->cap ? "still over" : "within");
      uint64_t stuck = st->free_inside > st->releasable ? st->free_inside - st->releasable : 0;
      if (stuck) fprintf(o, "  %s is free but inside split segments (inactive): it cannot be given back while their other blocks live\n",
                        fmt_bytes(stuck, a, sizeof a));
    }
  } else {
    fprintf(o, "  no cap: the device itself had no room for a new segment of %s\n", fmt_bytes(st->segment, a, sizeof a));
  }
}

/* the text of the moment under one strategy: stdout's, and --html's beside the drawing
 * (which draws the segments instead of listing them) */
static void print_text(FILE *o, const struct cli_opts *opt, const struct explain_state *st, int with_segments) {
  char a[32], b[32], c[32], d[32];
  fprintf(o, "%s, %s (%s), ", opt->traces[0], st->allocator, st->params[0] ? st->params : "defaults");
  if (st->at_peak) fprintf(o, "at its peak reserved (before event %lld of %llu)", (long long)st->event, (unsigned long long)st->events);
  else fprintf(o, "before event %lld of %llu%s", (long long)st->event, (unsigned long long)st->events, st->at_oom ? " (PyTorch's OOM)" : "");
  if (st->cap) fprintf(o, ", cap %s (%s)", fmt_bytes(st->cap, a, sizeof a), st->cap_source);
  fprintf(o, "\n");
  if (st->ci.has_oom) {
    char line[1024];
    /* where it died and the interval; which limit was replayed is the limit sentence's */
    cap_infer_evidence(&st->ci, line, sizeof line);
    fprintf(o, "the snapshot %s\n", line);
    if (st->ci.has_oom && st->at_oom && st->info.oom_released)
      fprintf(o, "PyTorch released %s of cached segments right before it failed (release-and-retry)\n",
              fmt_bytes(st->info.oom_released, a, sizeof a));
  }
  if (st->asked_event >= 0)
    fprintf(o, "note: %s fails earlier under this cap, at event %lld: shown there instead of %s\n", st->allocator,
            (long long)st->event, st->asked_event == (int64_t)st->events ? "its peak" : "the event asked for");
  fprintf(o, "\nreserved %s, allocated %s (requested %s), free inside reserved %s", fmt_bytes(st->reserved, a, sizeof a),
          fmt_bytes(st->allocated, b, sizeof b), fmt_bytes(st->requested_live, c, sizeof c), fmt_bytes(st->free_inside, d, sizeof d));
  if (st->has_segments) fprintf(o, " in %llu piece%s", (unsigned long long)st->free_pieces, st->free_pieces == 1 ? "" : "s");
  fprintf(o, ", largest free block %s\n", fmt_bytes(st->largest_free, a, sizeof a));
  if (st->has_segments && with_segments) print_segments(o, st);
  else if (!st->has_segments) fprintf(o, "(the segment view is not available for %s: only caching and expandable list their segments)\n", st->allocator);
  if (st->has_request) print_why(o, st);
}

static int ends_with(const char *s, const char *tail) {
  size_t n = strlen(s), k = strlen(tail);
  return n > k && !strcmp(s + n - k, tail);
}

/* --html and --blocks-csv, each written whole or not at all: 0, or 2 with a message */
static int write_outputs(const struct cli_opts *o, struct explain_state *st, char **text, int n) {
  struct outfile of;
  if (o->html) {
    struct html_explain_panel *p = calloc((size_t)n, sizeof *p);
    if (!p) { fprintf(stderr, "fragbench explain: out of memory\n"); return 2; }
    for (int k = 0; k < n; k++) p[k] = (struct html_explain_panel){&st[k], text[k]};
    FILE *f = outfile_open(&of, o->html, "the page");
    if (!f) { free(p); return 2; }
    html_explain_write(f, o->traces[0], p, n);
    free(p);
    if (ferror(f) || outfile_finish(&of, 1)) {
      if (ferror(f)) outfile_abort(&of);
      fprintf(stderr, "fragbench explain: %s: cannot write the page\n", o->html);
      return 2;
    }
    fprintf(stderr, "fragbench explain: wrote %s\n", o->html);
  }
  if (o->blocks_csv) {
    FILE *f = outfile_open(&of, o->blocks_csv, "the blocks");
    if (!f) return 2;
    explain_blocks_csv(f, st, n);
    if (ferror(f) || outfile_finish(&of, 1)) {
      if (ferror(f)) outfile_abort(&of);
      fprintf(stderr, "fragbench explain: %s: cannot write the blocks\n", o->blocks_csv);
      return 2;
    }
  }
  return 0;
}

static int explain_cmd(struct cli_opts *o) {
  if (o->ntraces != 1) {
    fprintf(stderr, "fragbench explain: give one --trace FILE\n(see fragbench explain --help)\n");
    return 2;
  }
  if (o->ncaps > 1) {
    fprintf(stderr, "fragbench explain: one limit (--limit or --cap-bytes) at most\n(see fragbench explain --help)\n");
    return 2;
  }
  if (o->nallocators > 1 && o->plot) {
    fprintf(stderr, "fragbench explain: --plot draws one strategy; give one --allocator with it (--html shows several side by side)\n");
    return 2;
  }
  if (!strcmp(o->device, "cuda")) {
    fprintf(stderr, "fragbench explain: explain replays on the simulated device\n");
    return 2;
  }
  if (o->plot && (strlen(o->plot) < 5 || (!ends_with(o->plot, ".png") && !ends_with(o->plot, ".svg")))) {
    fprintf(stderr, "fragbench explain: --plot '%s': expected a file name ending in .png or .svg\n", o->plot);
    return 2;
  }
  if (o->html && !ends_with(o->html, ".html") && !ends_with(o->html, ".htm")) {
    fprintf(stderr, "fragbench explain: --html '%s': expected a file name ending in .html\n", o->html);
    return 2;
  }
  /* --html and --blocks-csv with the other outputs: checked once, in cli_check_files (options.c) */
  char err[FB_ERRLEN];
  struct device_config sim = {.kind = "sim", .sim_total = o->sim_total};
  uint64_t cap = cli_limit_on(o, &sim);   /* the limit given, on the simulated device explain replays on */
  const uint64_t given = cap;
  if (!cap) {   /* --oom-message, else capture.py's side file beside the snapshot (limit.h) */
    struct limit lim;
    struct limit_ask ask = {.oom_message = o->oom_message, .trace = o->traces[0], .trace_device = o->trace_device,
                            .no_infer = 1, .trust_message = o->trust_message};
    if (limit_resolve(&ask, &lim, err)) { fprintf(stderr, "fragbench explain: %s\n", err); return 2; }
    cap = lim.bytes;
    if (lim.from == LIMIT_OOM_MESSAGE) snprintf(o->oom_message_source, sizeof o->oom_message_source, "%s", lim.source);
  }
  if (!o->nallocators && cli_side_file_conf(o, "explain")) return 2;   /* the job's PYTORCH_CUDA_ALLOC_CONF, if recorded */
  /* one moment per strategy (--allocator repeated): each explained, its text printed */
  int n = o->nallocators ? o->nallocators : 1, rc = 0, done = 0;
  struct explain_state *st = calloc((size_t)n, sizeof *st);
  char **text = calloc((size_t)n, sizeof *text);
  if (!st || !text) { free(st); free(text); fprintf(stderr, "fragbench explain: out of memory\n"); return 1; }
  for (; done < n; done++) {
    struct explain_opts eo = {.trace = o->traces[0], .trace_device = o->trace_device, .at = o->at,
                              .allocator = o->nallocators ? o->allocators[done] : NULL,
                              .cap = cap, .no_infer_cap = o->no_infer_cap, .block_frames = o->html || o->blocks_csv};
    rc = explain_run(&eo, &st[done], err);
    if (rc) {
      fprintf(stderr, "fragbench explain: %s\n", err);
      explain_free(&st[done]);
      break;
    }
    if (!done) {   /* where the limit came from: the sentence every command prints */
      struct limit lim = {.from = !st[0].cap ? LIMIT_NONE : given ? LIMIT_GIVEN : o->oom_message_source[0] ? LIMIT_OOM_MESSAGE : LIMIT_INFERRED,
                          .bytes = st[0].cap, .ci = st[0].ci};
      snprintf(lim.source, sizeof lim.source, "%s", lim.from == LIMIT_OOM_MESSAGE ? o->oom_message_source : "");
      cli_say_limit(o, &lim);
    }
    if (done) printf("\n");
    print_text(stdout, o, &st[done], 1);
    size_t len = 0;
    FILE *m = open_memstream(&text[done], &len);
    if (!m) { fprintf(stderr, "fragbench explain: out of memory\n"); done++; rc = 1; break; }
    print_text(m, o, &st[done], 0);
    fclose(m);
  }
  if (!rc && o->plot) {
    char perr[FB_ERRLEN];
    /* drawn only once the moment is explained, into temporaries renamed into place when
     * gnuplot succeeded (explain_plot.h): a failed explain or gnuplot leaves an old
     * picture, its .dat and .gp as they were */
    int prc = explain_plot(&st[0], o->traces[0], o->plot, perr);
    if (prc == 0) fprintf(stderr, "fragbench explain: wrote %s\n", o->plot);
    else fprintf(stderr, "fragbench explain: %s\n", perr);
    if (prc == 2) rc = 2;
  }
  if (!rc) rc = write_outputs(o, st, text, n);
  for (int k = 0; k < done; k++) { explain_free(&st[k]); free(text[k]); }
  free(st);
  free(text);
  return rc;
}

/* the snapshot read once: held in memory for the events and, where asked, the frames
 * (the OOM's largest blocks, --html, --blocks-csv), which are read from it a second time */
#define EXPLAIN_HOLD_MAX (1ull << 30)

int cmd_explain(struct cli_opts *o) {
  char err[FB_ERRLEN];
  if (o->ntraces == 1) (void)src_hold(o->traces[0], EXPLAIN_HOLD_MAX, err);   /* not held: each pass opens it, as before */
  int rc = explain_cmd(o);
  src_release_all();
  return rc;
}
