/* oom_message.c - see oom_message.h. Sizes as PyTorch prints them ("19.79 GiB",
 * "512.00 MiB"): two decimals, so the limit is known to within half a hundredth of the unit. */
#include "oom_message.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "event.h"

#define TEXT_MAX (1 << 20)   /* an error message, not a log: a bound on what is read */

/* the size just before `at` ("19.79 GiB" ending where `at` starts), 0 when none */
static uint64_t size_before(const char *text, const char *at) {
  const char *e = at;
  while (e > text && e[-1] == ' ') e--;
  const char *u = e;
  while (u > text && e - u < 4 && u[-1] != ' ') u--;   /* the unit */
  char unit[8];
  snprintf(unit, sizeof unit, "%.*s", (int)(e - u), u);
  const char *n = u;
  while (n > text && n[-1] == ' ') n--;
  const char *s = n;
  while (s > text && (s[-1] == '.' || (s[-1] >= '0' && s[-1] <= '9'))) s--;
  if (s == n) return 0;
  double v = strtod(s, NULL);
  double mul = !strcmp(unit, "GiB") ? 1073741824.0 : !strcmp(unit, "MiB") ? 1048576.0 : !strcmp(unit, "KiB") ? 1024.0
             : !strcmp(unit, "TiB") ? 1099511627776.0 : !strcmp(unit, "bytes") || !strcmp(unit, "B") ? 1.0 : 0;
  return (uint64_t)(v * mul + 0.5);
}

/* "of 79.18 GiB" after "total capacity", or the size before "total capacity" */
static uint64_t total_capacity(const char *text) {
  const char *t = strstr(text, "total capacity");
  if (!t) return 0;
  uint64_t before = size_before(text, t);
  if (before) return before;
  const char *of = t + strlen("total capacity");
  if (strncmp(of, " of ", 4)) return 0;
  of += 4;
  const char *end = strchr(of, ' ');
  if (!end) return 0;
  end = strchr(end + 1, ' ');
  return end ? size_before(text, end) : 0;
}

int oom_message_parse(const char *text, struct oom_message *m, char *err) {
  memset(m, 0, sizeof *m);
  const char *a = strstr(text, " allowed");
  if (a) m->allowed = size_before(text, a);
  m->total = total_capacity(text);
  if (m->allowed) {
    m->limit = m->allowed;
    snprintf(m->source, sizeof m->source, "the OOM message's \"allowed\" (a memory fraction)");
  } else if (m->total) {
    m->limit = m->total;
    snprintf(m->source, sizeof m->source, "the OOM message's total capacity");
  } else {
    snprintf(err, FB_ERRLEN, "no limit in it: expected PyTorch's \"CUDA out of memory\" text with \"N GiB allowed\" "
             "or \"total capacity\"");
    return 2;
  }
  return 0;
}

int oom_message_read(const char *path_or_dash, struct oom_message *m, char *err) {
  int dash = !strcmp(path_or_dash, "-");
  FILE *f = dash ? stdin : fopen(path_or_dash, "r");
  if (!f) { snprintf(err, FB_ERRLEN, "--oom-message %s: cannot read", path_or_dash); return 2; }
  char *buf = malloc(TEXT_MAX + 1);
  if (!buf) { if (!dash) fclose(f); snprintf(err, FB_ERRLEN, "out of host memory"); return 2; }
  size_t n = fread(buf, 1, TEXT_MAX, f);
  buf[n] = 0;
  if (!dash) fclose(f);
  for (size_t i = 0; i < n; i++) if (buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t' || !buf[i]) buf[i] = ' ';
  char e2[FB_ERRLEN];
  int rc = oom_message_parse(buf, m, e2);
  if (rc) snprintf(err, FB_ERRLEN, "--oom-message %s: %.400s", dash ? "-" : path_or_dash, e2);
  free(buf);
  return rc;
}
