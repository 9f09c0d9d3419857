/* opts_check.c - the flag table (flags.def) and the subcommands' lists agree: every name a
 * list gives is one entry of the table, once per list; every entry is taken by some
 * subcommand, under a name no other entry has, with a help line and a value name exactly
 * when it takes a value; positional arguments are named, helped, and only the last
 * repeats. tests/test_cli_options.c runs it on cli_commands[] and on broken lists. */
#include "options.h"
#include <string.h>

static void say(char *err, size_t cap, size_t *k, int *bad, const char *a, const char *b, const char *what) {
  (*bad)++;
  if (*k < cap) *k += (size_t)snprintf(err + *k, cap - *k, "%s%s %s: %s", *k ? "; " : "", a, b, what);
}

static const struct flag_def *entry(const struct flag_def *flags, int nflags, const char *name) {
  for (int i = 0; i < nflags; i++)
    if (!strcmp(flags[i].flag, name)) return &flags[i];
  return NULL;
}

int opts_check(const struct cmd_def *const *cmds, const struct flag_def *flags, int nflags, char *err, size_t cap) {
  int bad = 0;
  size_t k = 0;
  if (cap) err[0] = 0;
  for (int i = 0; i < nflags; i++) {
    const struct flag_def *d = &flags[i];
    if (strncmp(d->flag, "--", 2) || !d->flag[2]) say(err, cap, &k, &bad, "flags.def", d->flag, "a flag's name starts with --");
    if (entry(flags, i, d->flag)) say(err, cap, &k, &bad, "flags.def", d->flag, "declared twice");
    if (!d->help || !d->help[0]) say(err, cap, &k, &bad, "flags.def", d->flag, "no help line");
    if ((d->type == OPT_SWITCH) != !d->value) say(err, cap, &k, &bad, "flags.def", d->flag, "a value name exactly when it takes a value");
    int taken = 0;
    for (int c = 0; cmds[c] && !taken; c++)
      for (const char *const *n = cmds[c]->flags; n && *n && !taken; n++) taken = !strcmp(*n, d->flag);
    if (!taken) say(err, cap, &k, &bad, "flags.def", d->flag, "taken by no command");
  }
  for (int c = 0; cmds[c]; c++) {
    const char *cmd = cmds[c]->name;
    for (const char *const *n = cmds[c]->flags; n && *n; n++) {
      if (!entry(flags, nflags, *n)) say(err, cap, &k, &bad, cmd, *n, "no such flag in flags.def");
      for (const char *const *m = cmds[c]->flags; m < n; m++)
        if (!strcmp(*m, *n)) say(err, cap, &k, &bad, cmd, *n, "named twice");
    }
    for (const struct arg_def *a = cmds[c]->args; a && a->name; a++) {
      if (!a->name[0] || a->name[0] == '-' || !a->help || !a->help[0])
        say(err, cap, &k, &bad, cmd, a->name, "a positional argument needs a name (no leading -) and help");
      if (a->many && a[1].name) say(err, cap, &k, &bad, cmd, a->name, "only the last positional argument may repeat");
    }
  }
  return bad;
}
