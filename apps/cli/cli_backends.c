/* berth backends: every module along the search path, with its ABI
 * version and device, or the reason it cannot be used. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk.h"
#include "cli.h"
#include "host.h"
#include "loader.h"

#include <berth/berth.h>

static const char *backends_usage =
    "usage: berth backends [--path DIR]...\n"
    "\n"
    "Lists the backend modules (libberth-NAME.so) found in the --path\n"
    "directories, $BERTH_BACKEND_PATH, ../lib/berth beside the berth\n"
    "program and, in a build tree, its backends/, in that order, with the\n"
    "ABI version each speaks, its device and,\n"
    "for an ABI 1.1 module, the options [backend.NAME] may set (key, type,\n"
    "default, allowed values, help).\n";

/* A 1.1 module's declared options, one per line:
 *     option threads: int, default 4, an integer in [1, 64]: worker threads */
static void print_options(const berth_backend *be) {
    uint32_t n = berth_backend_option_count(be);
    if (be->abi_version >= BERTH_BACKEND_ABI_V1_1 && n == 0) printf("      options: none declared\n");
    for (uint32_t i = 0; i < n; i++) {
        const berth_option_decl *d = berth_backend_option(be, i);
        char want[128];
        bk_option_expected(d, want, sizeof want);
        printf("      option %s: %s, default %s, %s%s%s\n", d->key, berth_option_type_name(d->type),
               d->default_value ? d->default_value : "(none)", want, d->help ? ": " : "",
               d->help ? d->help : "");
    }
}

static void show_dir(void *ctx, const char *folder, int readable) {
    (void)ctx;
    printf("%s\n", folder);
    if (!readable) printf("  (not readable or absent)\n");
}

static void show_module(void *ctx, const berth_backend_found *f) {
    (void)ctx;
    if (!f->backend) {
        printf("  %-44s unusable: %s\n", f->path, f->error);
        return;
    }
    if (f->error)
        printf("  %-44s %s %s, ABI %u, no device: %s\n", f->path, f->name, f->version ? f->version : "",
               f->abi_version, f->error);
    else
        printf("  %-44s %s %s, ABI %u, device: %s\n", f->path, f->name, f->version ? f->version : "",
               f->abi_version, f->device);
    print_options(f->backend);
}

int berth_cli_backends(int argc, char **argv) {
    const char *dirs[32];
    uint32_t n_dirs = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(backends_usage, stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--path") && i + 1 < argc && n_dirs < 32) {
            dirs[n_dirs++] = argv[++i];
            continue;
        }
        fprintf(stderr, "berth backends: unexpected argument '%s' (try --help)\n", argv[i]);
        return 2;
    }
    uint32_t found = berth_backends_list(dirs, n_dirs, show_dir, show_module, NULL);
    if (!found) {
        fprintf(stderr, "berth backends: no backend module found\n");
        return 1;
    }
    return 0;
}
