/* The berth command: run a deployment, list backends, check a backend
 * module, inspect weights. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "serve.h"

static const char *usage =
    "usage: berth COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  run CONFIG        run the deployment a config describes\n"
    "  backends          list the backend modules found and their devices\n"
    "  check MODULE      test a backend module: ABI contract, op cases, ONNX cases\n"
    "  serve CONFIG...   serve configs over the Open Inference Protocol (HTTP)\n"
    "  inspect FILE      validate a weights archive and list its tensors\n"
    "\n"
    "berth COMMAND --help tells more. berth --version prints the version.\n";

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(usage, stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("berth %s (backend ABI %u)\n", BERTH_VERSION, BERTH_BACKEND_ABI_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "run")) return berth_cli_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "backends")) return berth_cli_backends(argc - 1, argv + 1);
    if (!strcmp(cmd, "check")) return berth_cli_check(argc - 1, argv + 1);
    if (!strcmp(cmd, "inspect")) return berth_inspect_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "serve")) return berth_cli_serve(argc - 1, argv + 1);
    fprintf(stderr, "berth: unknown command '%s' (try berth --help)\n", cmd);
    return 2;
}
