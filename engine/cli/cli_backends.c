/* berth backends: every module along the search path, with its ABI
 * version and device, or the reason it cannot be used. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend_call.h"
#include "bk.h"
#include "cli.h"
#include "host.h"
#include "loader.h"
#include "util.h"

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

static void describe(const char *path, const berth_logger *log) {
    berth_host host;
    berth_host_init(&host, log);
    berth_module m;
    berth_error err;
    if (berth_module_load(path, NULL, 0, &host.services, &m, &err) != BERTH_OK) {
        printf("  %-44s unusable: %s\n", path, err.msg);
        return;
    }
    snprintf(host.backend_name, sizeof host.backend_name, "%s", m.be->name);
    berth_device *dev;
    berth_backend_msg_reset(&err);
    berth_status st = m.be->open(&host.services, &dev, &err);
    if (berth_backend_result(st, m.be->name, "open", &err, &err) != BERTH_OK) {
        printf("  %-44s %s, ABI %u, no device: %s\n", path, m.be->name, m.be->abi_version, err.msg);
    } else {
        berth_caps caps;
        memset(&caps, 0, sizeof caps);
        caps.struct_size = sizeof caps;
        berth_backend_msg_reset(&err);
        st = m.be->caps(dev, &caps, &err);
        if (berth_backend_result(st, m.be->name, "caps", &err, &err) != BERTH_OK)
            printf("  %-44s %s %s, ABI %u, device unknown: %s\n", path, m.be->name,
                   m.be->version ? m.be->version : "", m.be->abi_version, err.msg);
        else
            printf("  %-44s %s %s, ABI %u, device: %s\n", path, m.be->name,
                   m.be->version ? m.be->version : "", m.be->abi_version,
                   caps.device_name ? caps.device_name : "?");
        m.be->close(dev);
    }
    print_options(m.be);
    berth_module_unload(&m);
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
    berth_logger log = {NULL, NULL, BERTH_LOG_ERROR};
    char *search[64];
    uint32_t n = berth_loader_search_path(dirs, n_dirs, search, 64);
    int found = 0;
    for (uint32_t i = 0; i < n; i++) {
        printf("%s\n", search[i]);
        DIR *d = opendir(search[i]);
        if (!d) {
            printf("  (not readable or absent)\n");
            free(search[i]);
            continue;
        }
        struct dirent *e;
        while ((e = readdir(d))) {
            size_t len = strlen(e->d_name);
            if (strncmp(e->d_name, "libberth-", 9) || len < 12 || strcmp(e->d_name + len - 3, ".so"))
                continue;
            char *p = berth_path_join(search[i], e->d_name);
            if (p) describe(p, &log);
            free(p);
            found++;
        }
        closedir(d);
        free(search[i]);
    }
    if (!found) {
        fprintf(stderr, "berth backends: no backend module found\n");
        return 1;
    }
    return 0;
}
