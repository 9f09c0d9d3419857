/* fit.c - the largest value of a parameter that fits under a limit; see fit.h.
 *
 * The search, for one generator x allocator:
 *   1. `from` under the cap (limit - margin): if it fails, nothing fits (answer none;
 *      what `from` needs is still reported), and from+1 .. from+FIT_CHECK_ABOVE are
 *      tried: one that completes is reported (non-monotonic) - the answer stays none.
 *   2. gallop: from, 2*from, 4*from ... (clamped to `to`) until one fails;
 *   3. bisect between the last completing and the first failing value;
 *   4. the check: every value below the answer completes (all of them when there are
 *      few, else an even sample of FIT_CHECK_BELOW), and answer+1 .. answer+FIT_CHECK_ABOVE
 *      fail. A value above that completes is reported (the answer stands: the next value
 *      fails); a value below that fails is reported and the answer becomes the largest
 *      value below it that completed;
 *   5. what the next value needs: its mincap (mincap.c) plus the margin. */
#include "status.h"
#include "fit.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mincap.h"
#include "model_bound.h"

#define FIT_CHECK_BELOW 48
#define FIT_CHECK_ABOVE 3

uint64_t fit_default_margin(uint64_t limit) {
  return FIT_WORKSPACE_BYTES + (uint64_t)(FIT_ERROR_FRACTION * (double)limit);
}

int fit_spec(const char *spec, const char *key, uint64_t value, char *buf, size_t len) {
  const char *colon = strchr(spec, ':');
  size_t klen = strlen(key);
  size_t k = 0;
  int n = snprintf(buf, len, "%.*s:%s=%llu", colon ? (int)(colon - spec) : (int)strlen(spec), spec, key,
                   (unsigned long long)value);
  if (n < 0 || (size_t)n >= len) return -1;
  k = (size_t)n;
  if (!colon) return 0;
  /* copy the other k=v items; commas inside [...] belong to a value */
  const char *p = colon + 1;
  while (*p) {
    const char *start = p;
    int depth = 0;
    while (*p && (depth || *p != ',')) {
      if (*p == '[') depth++;
      else if (*p == ']' && depth) depth--;
      p++;
    }
    size_t ilen = (size_t)(p - start);
    int same = ilen > klen && !strncmp(start, key, klen) && start[klen] == '=';
    if (ilen && !same) {
      if (k + 1 + ilen >= len) return -1;
      buf[k++] = ',';
      memcpy(buf + k, start, ilen);
      k += ilen;
      buf[k] = 0;
    }
    if (*p == ',') p++;
  }
  return 0;
}

static int completes(const struct run_result *r) {
  return r->exit_class == 0 && r->completed && status_is(r->status, "ok");
}

struct search {
  const struct run_spec *base;
  const char *vary;
  uint64_t cap;
  int progress;
  struct fit_report *rep;
  char spec[512];
};

/* one replay at value v under cap (0 = uncapped) into r */
static int replay_value(const struct run_spec *base, const char *vary, uint64_t v, uint64_t cap, char *spec,
                        size_t speclen, struct run_result *r) {
  run_result_init(r);
  if (fit_spec(base->workload, vary, v, spec, speclen)) {
    snprintf(r->status, sizeof r->status, "error: workload spec too long with %s=%llu", vary, (unsigned long long)v);
    r->exit_class = 2;
    return 2;
  }
  struct run_spec s = mincap_probe_spec(base, cap);
  s.workload = spec;
  int cls = replay_run(&s, r);
  if (!cls) model_bound_row(&s, r);   /* the row may be the one fit writes */
  return cls;
}

/* Probe v under the cap. 1 completes, 0 fails, -1 an error (its status in r). */
static int probe(struct search *S, uint64_t v, struct run_result *r) {
  struct fit_report *rep = S->rep;
  int cls = replay_value(S->base, S->vary, v, S->cap, S->spec, sizeof S->spec, r);
  rep->runs++;
  if (S->progress)
    fprintf(stderr, "fit: %s x %s: %s=%llu: %s\n", S->base->workload, S->base->allocator, S->vary,
            (unsigned long long)v, cls ? r->status : completes(r) ? "completes" : r->status);
  if (cls) return -1;
  int ok = completes(r);
  if (rep->npoints < FIT_MAX_POINTS) {
    struct fit_point *pt = &rep->pts[rep->npoints++];
    pt->value = v;
    pt->ok = ok;
    pt->peak_reserved = r->peak_reserved;
    pt->peak_requested = r->peak_requested;
  }
  return ok;
}

int fit_point_uncapped(const struct run_spec *base, const char *vary, uint64_t v, struct run_result *r) {
  char spec[512];
  return replay_value(base, vary, v, 0, spec, sizeof spec, r);
}

/* the bisection and the check: best holds the run at the current answer */
static int search_up(struct search *S, uint64_t from, uint64_t to, struct run_result *best, struct run_result *scratch) {
  struct fit_report *rep = S->rep;
  uint64_t lo = from, hi = 0;   /* lo completes; hi fails (0 = none seen) */
  while (lo < to) {             /* 2. gallop */
    uint64_t v = lo > to / 2 ? to : lo * 2;
    int rc = probe(S, v, scratch);
    if (rc < 0) return -1;
    if (!rc) { hi = v; break; }
    lo = v;
    *best = *scratch;
  }
  while (hi && hi - lo > 1) {   /* 3. bisect */
    uint64_t mid = lo + (hi - lo) / 2;
    int rc = probe(S, mid, scratch);
    if (rc < 0) return -1;
    if (rc) { lo = mid; *best = *scratch; }
    else hi = mid;
  }
  /* 4. below: the lowest failing value caps the answer */
  uint64_t n = lo - from, step = n <= FIT_CHECK_BELOW ? 1 : (n + FIT_CHECK_BELOW - 1) / FIT_CHECK_BELOW;
  for (uint64_t v = from + step; v < lo; v += step) {
    int seen = 0;
    for (int i = 0; i < rep->npoints && !seen; i++) seen = rep->pts[i].value == v && rep->pts[i].ok;
    if (seen) continue;
    int rc = probe(S, v, scratch);
    if (rc < 0) return -1;
    if (rc) continue;
    rep->nonmono_value = v;   /* fails below a completing value */
    rep->nonmono_completes = 0;
    hi = v;
    lo = from;
    for (int i = 0; i < rep->npoints; i++)
      if (rep->pts[i].ok && rep->pts[i].value < v && rep->pts[i].value > lo) lo = rep->pts[i].value;
    while (hi - lo > 1) {   /* the largest completing value below the failure */
      uint64_t mid = lo + (hi - lo) / 2;
      rc = probe(S, mid, scratch);
      if (rc < 0) return -1;
      if (rc) lo = mid; else hi = mid;
    }
    break;
  }
  if (rep->nonmono_value) {
    int rc = probe(S, lo, best);   /* the answer's own run (after a fallback) */
    if (rc < 0) return -1;
  }
  rep->max_value = lo;
  rep->at_to = lo == to;
  /* above: answer+2.. must fail too (answer+1 failed, or is beyond `to`) */
  for (uint64_t v = lo + 2; v <= lo + 1 + FIT_CHECK_ABOVE && v <= to && !rep->nonmono_value; v++) {
    int rc = probe(S, v, scratch);
    if (rc < 0) return -1;
    if (rc) {
      rep->nonmono_value = v;
      rep->nonmono_completes = 1;
    }
  }
  return 0;
}

int fit_find(const struct run_spec *base, const char *vary, uint64_t limit, uint64_t margin, uint64_t from,
             uint64_t to, int progress, struct run_result *out, struct fit_report *rep_out) {
  struct fit_report *rep = rep_out ? rep_out : malloc(sizeof *rep);
  struct run_result *rr = malloc(2 * sizeof *rr);
  struct search *S = calloc(1, sizeof *S);
  run_result_init(out);
  if (!rep || !rr || !S || !base->workload) {
    snprintf(out->status, sizeof out->status, !base->workload ? "error: fit needs a generator (--workload)"
                                                                : "error: out of host memory");
    out->exit_class = base->workload ? 1 : 2;
    goto done;
  }
  memset(rep, 0, sizeof *rep);
  rep->limit = limit;
  rep->margin = margin;
  if (!from) from = 1;
  if (!to) to = FIT_TO_DEFAULT;
  if (margin >= limit || from > to) {
    snprintf(out->status, sizeof out->status, margin >= limit ? "error: the margin leaves nothing of the limit"
                                                              : "error: --from is above --to");
    out->exit_class = 2;
    goto done;
  }
  S->base = base;
  S->vary = vary;
  S->cap = limit - margin;
  S->progress = progress;
  S->rep = rep;
  struct run_result *best = &rr[0], *scratch = &rr[1];
  int rc = probe(S, from, best);   /* 1. */
  if (rc < 0) { *out = *best; goto done; }
  if (rc) {
    rep->found = 1;
    if (search_up(S, from, to, best, scratch) < 0) { *out = *scratch; goto done; }
    *out = *best;
    rep->headroom = limit > out->peak_reserved ? limit - out->peak_reserved : 0;
    rep->next_value = rep->at_to ? 0 : rep->max_value + 1;
  } else {
    *out = *best;
    rep->next_value = from;
    for (uint64_t v = from + 1; v <= from + FIT_CHECK_ABOVE && v <= to; v++) {   /* the check, above `from` */
      rc = probe(S, v, scratch);
      if (rc < 0) { *out = *scratch; goto done; }
      if (rc) {
        rep->nonmono_value = v;
        rep->nonmono_completes = 1;
        break;
      }
    }
  }
  if (rep->next_value) {   /* 5. what the next value needs */
    struct run_result *nr = scratch;
    if (fit_point_uncapped(base, vary, rep->next_value, nr)) { *out = *nr; goto done; }
    rep->runs++;
    rep->next_reserved = nr->peak_reserved;
    if (completes(nr)) {
      char spec[512];
      fit_spec(base->workload, vary, rep->next_value, spec, sizeof spec);
      struct run_spec s = *base;
      s.workload = spec;
      struct mincap_report mr;
      if (mincap_find(&s, 0.001, 0, nr, &mr)) { *out = *nr; goto done; }
      rep->runs += mr.runs;
      if (nr->mincap_bytes) rep->next_needs = nr->mincap_bytes + margin;
    }
  }
  out->cap_bytes = S->cap;
  out->cap_x = 0;
  if (rep->nonmono_value && out->exit_class == 0 && rep->found) {
    snprintf(out->status, sizeof out->status, "ok: non-monotonic (%s=%llu %s)", vary,
             (unsigned long long)rep->nonmono_value,
             rep->nonmono_completes ? "completes above the answer" : "fails below a value that completes");
  }
done:
  if (rep && rep != rep_out) free(rep);
  free(rr);
  free(S);
  return out->exit_class;
}
