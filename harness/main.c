/* main.c - the fragbench binary's entry point; everything is in cli.c. */
int cli_main(int argc, char **argv);
int main(int argc, char **argv) { return cli_main(argc, argv); }
