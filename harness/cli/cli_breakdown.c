/* cli_breakdown.c - `run --breakdown FILE.csv`: peak reserved split by stream, as the
 * device layer counted it (harness/device/stream_acct.c), one line per results row,
 * stream and pool (small/large where the strategy names its pools); run_id is the row's run_id in the results CSV. The header is the first line. */
#include <string.h>
#include "cli.h"
#include "stream_acct.h"

void breakdown_header(FILE *f) {
  fputs("run_id,workload,trace,allocator,params,device,cap_bytes,stream,pool,reserved_at_peak,stream_peak_reserved,peak_reserved\n", f);
}

static void line(FILE *f, int run_id, const struct run_result *r, const char *stream, const char *pool, uint64_t at_peak, uint64_t own_peak) {
  fprintf(f, "%d,", run_id);
  csv_field(f, r->workload); fputc(',', f);
  csv_field(f, r->trace); fputc(',', f);
  csv_field(f, r->allocator); fputc(',', f);
  csv_field(f, r->params); fputc(',', f);
  csv_field(f, r->device);
  if (r->cap_bytes) fprintf(f, ",%llu", (unsigned long long)r->cap_bytes); else fputc(',', f);
  fprintf(f, ",%s,%s,%llu,", stream, pool, (unsigned long long)at_peak);
  if (own_peak) fprintf(f, "%llu", (unsigned long long)own_peak);
  fprintf(f, ",%llu\n", (unsigned long long)r->peak_reserved);
}

void breakdown_rows(FILE *f, int run_id, const struct run_result *r, const struct stream_acct *a) {
  if (strncmp(r->status, "ok", 2) && strncmp(r->status, "oom", 3)) return;   /* skipped or failed: nothing held */
  for (int i = 0; i < a->n; i++) {
    char s[32];
    if (i == ACCT_STREAMS - 1 && a->n == ACCT_STREAMS) snprintf(s, sizeof s, "others");
    else snprintf(s, sizeof s, "%llu", (unsigned long long)a->stream[i]);
    line(f, run_id, r, s, i == ACCT_STREAMS - 1 && a->n == ACCT_STREAMS ? "" : a->pool[i], a->at_peak[i], a->peak[i]);
  }
  /* memory no stream's call made: the driver's stream-ordered pool (async) */
  if (a->other_at_peak || !a->n) line(f, run_id, r, "unattributed", "", a->other_at_peak ? a->other_at_peak : r->peak_reserved, 0);
  fflush(f);
}
