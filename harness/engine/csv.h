/* csv.h - the results CSV contract (docs/csv.md): the header first, then one
 * row per run. Columns are only ever appended. */
#ifndef FB_CSV_H
#define FB_CSV_H
#include <stdio.h>
#include "replay.h"

#define FB_VERSION "0.1.0"

extern const char *const csv_columns[];
void csv_write_header(FILE *f);
void csv_write_row(FILE *f, const char *run_id, const struct run_result *r);
/* a field quoted when it holds a comma, a quote or a newline */
void csv_field(FILE *f, const char *s);

#endif
