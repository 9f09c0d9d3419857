/* results_row.h - a row of a results CSV read back into a run_result: the inverse of
 * csv_write_row (csv.h), so that a row written once can stand for a run that is not made
 * again (an uncapped row for a capped run that never met its cap: uncapped_rows.h). */
#ifndef FB_RESULTS_ROW_H
#define FB_RESULTS_ROW_H
#include "replay.h"
#include "results_read.h"

/* Row i of t into *r: every column csv_write_row writes, an empty cell as the figure that
 * does not apply (NaN, 0, first_oom_event -1); csv_write_row then writes the same line
 * again (run_id and version apart). The strategy's blindness (run_result.cap_blind,
 * blind_unreached) is not in the CSV: 0 here. */
void results_row_run(const struct results *t, int i, struct run_result *r);

#endif
