/* script.c - `script`: a workload written inline on the command line, for experiments
 * and for tests whose expected figures are computed by hand:
 *   --workload 'script:events=a1=1MiB/a2=512@7/f1/i/e,repeat=3'
 * a<id>=<bytes>[@stream] allocates, f<id> frees, i marks an iteration, e is
 * torch.cuda.empty_cache(). The sequence repeats `repeat` times (ids reused). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "workload.h"

static const struct param_spec script_params[] = {
  {"events", P_STR, "", "the events, '/'-separated: a<id>=<bytes>[@stream], f<id>, i, e"},
  {"repeat", P_INT, "1", "how many times the sequence runs"},
  {NULL, 0, NULL, NULL},
};

struct script {
  struct event *ev;
  size_t n, pos;
  int64_t repeat, round;
};

static int parse_one(const char *tok, struct event *ev, char *err) {
  memset(ev, 0, sizeof *ev);
  char buf[128];
  snprintf(buf, sizeof buf, "%s", tok);
  if (!strcmp(buf, "i")) { ev->op = OP_ITER; return 0; }
  if (!strcmp(buf, "e")) { ev->op = OP_EMPTY_CACHE; return 0; }
  if (buf[0] == 'f' && !parse_u64(buf + 1, &ev->id)) { ev->op = OP_FREE; return 0; }
  if (buf[0] == 'a') {
    char *eq = strchr(buf, '='), *at = strchr(buf, '@');
    if (eq) {
      *eq = 0;
      if (at) *at = 0;
      ev->op = OP_ALLOC;
      if (!parse_u64(buf + 1, &ev->id) && !parse_bytes(eq + 1, 0, &ev->size) && (!at || !parse_u64(at + 1, &ev->stream)))
        return 0;
    }
  }
  snprintf(err, FB_ERRLEN, "script: event '%s': expected a<id>=<bytes>[@stream], f<id>, i or e", tok);
  return -1;
}

static int script_open(void **st, const struct params *p, const struct workload_ctx *ctx, char *err) {
  (void)ctx;
  struct script *s = calloc(1, sizeof *s);
  if (!s) return -1;
  const char *text = param_str(p, "events");
  size_t cap = 1;
  for (const char *c = text; *c; c++) cap += *c == '/';
  s->ev = calloc(cap, sizeof *s->ev);
  char *copy = strdup(text);
  for (char *save = NULL, *tok = strtok_r(copy, "/", &save); tok; tok = strtok_r(NULL, "/", &save))
    if (parse_one(tok, &s->ev[s->n++], err)) {
      free(copy); free(s->ev); free(s);
      return -1;
    }
  free(copy);
  s->repeat = param_int(p, "repeat");
  *st = s;
  return 0;
}

static int script_next(void *st, struct event *ev, char *err) {
  (void)err;
  struct script *s = st;
  if (s->pos == s->n) {
    if (++s->round >= s->repeat || !s->n) return 0;
    s->pos = 0;
  }
  *ev = s->ev[s->pos++];
  return 1;
}

static int script_rewind(void *st, char *err) {
  (void)err;
  struct script *s = st;
  s->pos = 0;
  s->round = 0;
  return 0;
}

static void script_close(void *st) {
  struct script *s = st;
  free(s->ev);
  free(s);
}

const struct workload_ops script_workload = {
  .name = "script",
  .help = "events written inline (a<id>=<bytes>[@stream]/f<id>/i/e): experiments and hand-checked tests",
  .params = script_params,
  .open = script_open,
  .next = script_next,
  .rewind = script_rewind,
  .close = script_close,
};
