#include "loader.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

#define MAX_SEARCH_DIRS 64

static void add_dir(char **out, uint32_t *n, uint32_t cap, const char *dir, size_t len) {
    if (len == 0 || *n >= cap) return;
    char *d = malloc(len + 1);
    if (!d) return;
    memcpy(d, dir, len);
    d[len] = 0;
    out[(*n)++] = d;
}

uint32_t berth_loader_search_path(const char *const *dirs, uint32_t n_dirs, char **out,
                                  uint32_t cap) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < n_dirs; i++) add_dir(out, &n, cap, dirs[i], strlen(dirs[i]));
    const char *env = getenv("BERTH_BACKEND_PATH");
    while (env && *env) {
        const char *colon = strchr(env, ':');
        size_t len = colon ? (size_t)(colon - env) : strlen(env);
        add_dir(out, &n, cap, env, len);
        env = colon ? colon + 1 : NULL;
    }
    add_dir(out, &n, cap, BERTH_MODULE_INSTALL_DIR, strlen(BERTH_MODULE_INSTALL_DIR));
    add_dir(out, &n, cap, BERTH_MODULE_BUILD_DIR, strlen(BERTH_MODULE_BUILD_DIR));
    return n;
}

/* Find libberth-NAME.so along the search path; on failure list every
 * directory looked in, since "not found" alone sends users guessing. */
static char *resolve(const char *name, const char *const *dirs, uint32_t n_dirs,
                     berth_error *err) {
    if (strchr(name, '/')) return strdup(name);
    char *search[MAX_SEARCH_DIRS];
    uint32_t n = berth_loader_search_path(dirs, n_dirs, search, MAX_SEARCH_DIRS);
    char *found = NULL;
    char file[256];
    snprintf(file, sizeof file, "libberth-%s.so", name);
    size_t off = 0;
    char looked[BERTH_ERROR_CAP];
    looked[0] = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!found) {
            char *p = berth_path_join(search[i], file);
            if (p && access(p, F_OK) == 0) found = p;
            else free(p);
        }
        if (off < sizeof looked)
            off += (size_t)snprintf(looked + off, sizeof looked - off, "%s%s", i ? ", " : "", search[i]);
        free(search[i]);
    }
    if (!found)
        berth_errorf(err, "backend '%s' not found: no %s in %s", name, file,
                     n ? looked : "(no directories)");
    return found;
}

berth_status berth_module_load(const char *name_or_path, const char *const *dirs, uint32_t n_dirs,
                               const berth_host_services *host, berth_module *out,
                               berth_error *err) {
    memset(out, 0, sizeof *out);
    char *path = resolve(name_or_path, dirs, n_dirs, err);
    if (!path) return BERTH_ERR_INVALID;

    /* dlopen would block forever on a FIFO: check the kind first. */
    int fd = berth_open_regular(path, "backend module", NULL, err);
    if (fd < 0) {
        free(path);
        return BERTH_ERR_INVALID;
    }
    close(fd);
    dlerror();
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        berth_errorf(err, "backend '%s' could not be loaded from %s: %s", name_or_path, path,
                     why ? why : "unknown dlopen error");
        free(path);
        return BERTH_ERR_INVALID;
    }
    /* dlsym returns void*; converting it to a function pointer goes
     * through a union, which C11 allows and POSIX guarantees works. */
    union {
        void *obj;
        berth_backend_entry_fn fn;
    } entry;
    dlerror();
    entry.obj = dlsym(h, BERTH_BACKEND_ENTRY_SYMBOL);
    if (!entry.obj) {
        berth_errorf(err, "backend '%s' (%s) does not export %s: it is not a berth backend",
                     name_or_path, path, BERTH_BACKEND_ENTRY_SYMBOL);
        goto fail;
    }
    berth_error why;
    why.msg[0] = 0;
    const berth_backend *be = entry.fn(BERTH_BACKEND_ABI_VERSION, host, &why);
    if (!be) {
        why.msg[BERTH_ERROR_CAP - 1] = 0;
        berth_errorf(err, "backend '%s' (%s) refused to load: %s", name_or_path, path,
                     why.msg[0] ? why.msg : "no reason given");
        goto fail;
    }
    if (be->abi_version == 0 || be->abi_version > BERTH_BACKEND_ABI_VERSION) {
        berth_errorf(err,
                     "backend '%s' (%s): no ABI version both sides speak: the backend offers "
                     "version %u, this engine speaks versions 1 to %u",
                     name_or_path, path, be->abi_version, BERTH_BACKEND_ABI_VERSION);
        goto fail;
    }
    if (be->struct_size < BERTH_BACKEND_V1_MIN_SIZE) {
        berth_errorf(err,
                     "backend '%s' (%s): function table for ABI version %u is %u bytes, "
                     "at least %zu expected",
                     name_or_path, path, be->abi_version, be->struct_size,
                     (size_t)BERTH_BACKEND_V1_MIN_SIZE);
        goto fail;
    }
    if (!be->open || !be->close || !be->caps || !be->supports_op || !be->upload_begin ||
        !be->upload_tensor || !be->upload_end || !be->plan || !be->run || !be->free_plan ||
        !be->free_weights || !be->weights_bytes || !be->plan_bytes) {
        berth_errorf(err, "backend '%s' (%s): function table has an empty required slot",
                     name_or_path, path);
        goto fail;
    }
    out->handle = h;
    out->be = be;
    out->path = path;
    return BERTH_OK;
fail:
    dlclose(h);
    free(path);
    return BERTH_ERR_INVALID;
}

void berth_module_unload(berth_module *m) {
    if (m->handle) dlclose(m->handle);
    free(m->path);
    memset(m, 0, sizeof *m);
}
