/* cli_list.c - `fragbench list`: every workload, trace format and allocator with its
 * one-line description, anchor and parameters (with defaults). */
#include "cli.h"
#include "options.h"
#include "alloc_conf.h"

static const char *const list_opts[] = {NULL};

const struct cmd_def cmd_list_def = {
  "list", "   workloads, trace formats, allocators, parameters", "", list_opts, cmd_list, NULL, NULL,
};

int cmd_list(struct cli_opts *o) {
  (void)o;
  printf("workloads (--workload NAME[:k=v,...]):\n");
  for (int i = 0; workload_table[i]; i++) {
    const struct workload_ops *w = workload_table[i];
    if (w->is_trace) continue;
    printf("  %-18s %s\n", w->name, w->help);
    params_print_spec(w->params, "      ");
  }
  printf("\ntrace formats (--trace FILE, detected from content):\n");
  for (int i = 0; workload_table[i]; i++) {
    const struct workload_ops *w = workload_table[i];
    if (!w->is_trace) continue;
    printf("  %-18s %s\n", w->name, w->help);
  }
  printf("\nallocators (--allocator NAME[:k=v,...]; `recorded` = the snapshot's own, with its settings;\n"
         "--alloc-conf 'expandable_segments:True,max_split_size_mb:128' = PyTorch's own string):\n");
  for (int i = 0; allocator_table[i]; i++) {
    const struct allocator_ops *a = allocator_table[i];
    printf("  %-18s %s\n", a->name, a->help);
    printf("      %-28s %s\n", "follows", a->anchor);
    printf("      %-28s %s\n", "validated", a->validated ? a->validated : "no (no check against a real allocator yet)");
    printf("      %-28s %s\n", "in stock PyTorch", alloc_conf_how(a->name));
    params_print_spec(a->params, "      ");
  }
  return 0;
}
