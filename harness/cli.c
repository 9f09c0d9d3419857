/* cli.c - command-line front end (being written). */
#include <stdio.h>
int cli_main(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "fragbench: CLI not built yet\n"); return 2; }
