#include "cli.h"
void explain_usage(FILE *f) { (void)f; }
int cmd_explain(struct cli_opts *o) { (void)o; return 2; }
