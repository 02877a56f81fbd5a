/* Subcommands of the berth CLI; each takes argv with argv[0] = its name
 * and returns the process exit status. */
#ifndef BERTH_CLI_H
#define BERTH_CLI_H

#include "berth/backend.h"

int berth_cli_run(int argc, char **argv);
int berth_cli_backends(int argc, char **argv);
int berth_cli_check(int argc, char **argv); /* cli_check.c */
int berth_inspect_main(int argc, char **argv); /* inspect.c */

#endif
