/* main.c - the fragbench binary's entry point; everything is in cli.c. Under MPI
 * (make MPI=1) it starts and stops MPI around the command. */
#include "multi.h"
int cli_main(int argc, char **argv);
int main(int argc, char **argv) {
  mpi_start(&argc, &argv);
  int rc = cli_main(argc, argv);
  mpi_stop();
  return rc;
}
