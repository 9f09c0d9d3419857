/* results_read.h - reading results CSVs back (runs.csv, capsweep.csv, mincap.csv, any
 * file `fragbench run --out` wrote): a table of strings addressed by column name. The
 * one reader behind `report`, `compare` and `advise`. Accepts the old first line
 * "# fragbench results v1" before the header, quoted fields ("" for a quote, commas and
 * newlines inside quotes), and rows with fewer fields than the header (missing = ""). */
#ifndef FB_RESULTS_READ_H
#define FB_RESULTS_READ_H
#include <stddef.h>
#include <stdint.h>

/* the longest line read (bytes): a longer one is exit 2 naming its line, so a file with
 * no newlines (/dev/zero) ends at the bound */
#define RESULTS_LINE_MAX (1 << 20)

/* the most columns a header may have (a results file has 48, a timeline 6): a wider one
 * is refused at the header, before any row is read */
#define RESULTS_COLS_MAX 1024

struct results {
  char *path;
  int ncols;
  char **cols;            /* header names */
  int nrows;
  char ***rows;           /* rows[r][c], never NULL ("" when absent) */
  int *row_line;          /* the line each row starts on */
  int *row_fields;        /* how many fields each row had (fewer than ncols: a short row) */
};

/* Load a whole file. 0, or 2 with err naming the file, the line and what was expected
 * (no header, a header wider than RESULTS_COLS_MAX, a field with an unclosed quote, a row
 * with more fields than the header, a line longer than RESULTS_LINE_MAX, a cell of a
 * numeric column that is not a plain decimal: "123abc", "0x10", a negative figure). */
int results_load(const char *path, struct results *t, char *err, size_t errlen);
/* results_load of an optional file, opened once: one that is not there gives 0 with
 * *there = 0 and t empty; any other failure is results_load's */
int results_load_if_there(const char *path, struct results *t, int *there, char *err, size_t errlen);
/* Any CSV of the same syntax whose header holds every column of required[] (NULL-ended):
 * the timelines (allocator,event,...). The same rules and messages as results_load. */
int results_load_table(const char *path, const char *const *required, struct results *t, char *err, size_t errlen);
void results_free(struct results *t);
/* index of a column, or -1 */
int results_col(const struct results *t, const char *name);
/* cell by column name; "" when the column is missing */
const char *results_get(const struct results *t, int row, const char *name);
/* numeric cells: 0 (and *ok = 0 when given) when empty or not a number */
double results_num(const struct results *t, int row, const char *name, int *ok);
uint64_t results_u64(const struct results *t, int row, const char *name, int *ok);

#endif
