/* berth_backends_list: every module along the search path, loaded and
 * its device opened once, for `berth backends` and for embedders (the
 * Python package's berth.backends()) that show what is installed and
 * why a module cannot be used. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include <berth/berth.h>

#include "backend_call.h"
#include "host.h"
#include "loader.h"
#include "util.h"

#define MAX_DIRS 64

static void describe(const char *path, void (*fn)(void *, const berth_backend_found *), void *ctx) {
    berth_logger log = {NULL, NULL, BERTH_LOG_ERROR};
    berth_host host;
    berth_host_init(&host, &log);
    berth_module m;
    berth_error err;
    berth_backend_found f = {.path = path};
    if (berth_module_load(path, NULL, 0, &host.services, &m, &err) != BERTH_OK) {
        f.error = err.msg;
        fn(ctx, &f);
        return;
    }
    snprintf(host.backend_name, sizeof host.backend_name, "%s", m.be->name);
    f.name = m.be->name;
    f.version = m.be->version;
    f.abi_version = m.be->abi_version;
    f.backend = m.be;
    berth_device *dev;
    berth_backend_msg_reset(&err);
    berth_status st = m.be->open(&host.services, &dev, &err);
    if (berth_backend_result(st, m.be->name, "open", &err, &err) != BERTH_OK) {
        f.error = err.msg;
        fn(ctx, &f);
    } else {
        berth_caps caps;
        memset(&caps, 0, sizeof caps);
        caps.struct_size = sizeof caps;
        berth_backend_msg_reset(&err);
        st = m.be->caps(dev, &caps, &err);
        if (berth_backend_result(st, m.be->name, "caps", &err, &err) != BERTH_OK) f.error = err.msg;
        else f.device = caps.device_name ? caps.device_name : "?";
        fn(ctx, &f);
        m.be->close(dev);
    }
    berth_module_unload(&m);
}

uint32_t berth_backends_list(const char *const *dirs, uint32_t n_dirs,
                             void (*dir)(void *ctx, const char *folder, int readable),
                             void (*fn)(void *ctx, const berth_backend_found *found), void *ctx) {
    char *search[MAX_DIRS];
    uint32_t n = berth_loader_search_path(dirs, n_dirs, search, MAX_DIRS), found = 0;
    for (uint32_t i = 0; i < n; i++) {
        DIR *d = opendir(search[i]);
        if (dir) dir(ctx, search[i], d != NULL);
        struct dirent *e;
        while (d && (e = readdir(d))) {
            size_t len = strlen(e->d_name);
            if (strncmp(e->d_name, "libberth-", 9) || len < 12 || strcmp(e->d_name + len - 3, ".so")) continue;
            char *p = berth_path_join(search[i], e->d_name);
            if (p && fn) describe(p, fn, ctx);
            free(p);
            found++;
        }
        if (d) closedir(d);
        free(search[i]);
    }
    return found;
}
