#include "loader.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

#define MAX_SEARCH_DIRS 64

/* Appends dir (len bytes) unless empty, already listed, or out is full. */
static void add_dir(char **out, uint32_t *n, uint32_t cap, const char *dir, size_t len) {
    if (len == 0 || *n >= cap) return;
    for (uint32_t i = 0; i < *n; i++)
        if (strlen(out[i]) == len && !memcmp(out[i], dir, len)) return;
    char *d = malloc(len + 1);
    if (!d) return;
    memcpy(d, dir, len);
    d[len] = 0;
    out[(*n)++] = d;
}

/* The folder of the file holding this code: the program, or libberth.so
 * when the engine is linked as a shared library. No path of the machine
 * berth was built on is compiled in: modules are found relative to the
 * installed (or built) files themselves. NULL when it cannot be found. */
static char *self_dir(int *is_program) {
    Dl_info info;
    char *file = NULL, *program = realpath("/proc/self/exe", NULL);
    if (dladdr((void *)berth_loader_search_path, &info) && info.dli_fname && strchr(info.dli_fname, '/'))
        file = realpath(info.dli_fname, NULL);
    if (!file && program) file = strdup(program);
    *is_program = file && program && !strcmp(file, program);
    free(program);
    if (!file) return NULL;
    char *slash = strrchr(file, '/');
    if (slash == file) slash[1] = 0;
    else *slash = 0;
    return file;
}

/* base/rel, resolved when it exists (so messages show a plain path). */
static void add_module_dir(char **out, uint32_t *n, uint32_t cap, const char *base, const char *rel) {
    char *joined = berth_path_join(base, rel);
    if (!joined) return;
    char *real = realpath(joined, NULL);
    const char *d = real ? real : joined;
    add_dir(out, n, cap, d, strlen(d));
    free(real);
    free(joined);
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
    int is_program = 0;
    char *self = self_dir(&is_program);
    if (self) {
        if (is_program) add_module_dir(out, &n, cap, self, "../lib/berth"); /* PREFIX/bin/berth */
        else add_module_dir(out, &n, cap, self, "berth");                   /* PREFIX/lib/libberth.so */
        /* a program of a build tree: its modules are in BUILD/backends */
        for (int up = 1; up <= 3; up++) {
            char rel[32] = "";
            for (int i = 0; i < up; i++) strcat(rel, "../");
            char cache[48];
            snprintf(cache, sizeof cache, "%sCMakeCache.txt", rel);
            char *marker = berth_path_join(self, cache);
            int found = marker && access(marker, F_OK) == 0;
            free(marker);
            if (found) {
                strcat(rel, "backends");
                add_module_dir(out, &n, cap, self, rel);
                break;
            }
        }
        free(self);
    }
    return n;
}

/* On failure every directory looked in is listed, since "not found"
 * alone sends users guessing. */
char *berth_loader_find(const char *name, const char *const *dirs, uint32_t n_dirs, berth_error *err) {
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

/* Every slot a v1 table must fill, by name, so a NULL one is named: a
 * vendor told only "a slot is empty" has thirteen to look through. */
static int check_slots(const berth_backend *be, const char *name_or_path, const char *path,
                       berth_error *err) {
    const struct {
        const char *name;
        int set;
    } slots[] = {
        {"open", be->open != NULL},
        {"close", be->close != NULL},
        {"caps", be->caps != NULL},
        {"supports_op", be->supports_op != NULL},
        {"upload_begin", be->upload_begin != NULL},
        {"upload_tensor", be->upload_tensor != NULL},
        {"upload_end", be->upload_end != NULL},
        {"plan", be->plan != NULL},
        {"run", be->run != NULL},
        {"free_plan", be->free_plan != NULL},
        {"free_weights", be->free_weights != NULL},
        {"weights_bytes", be->weights_bytes != NULL},
        {"plan_bytes", be->plan_bytes != NULL},
    };
    const size_t n = sizeof slots / sizeof slots[0];
    for (size_t i = 0; i < n; i++) {
        if (slots[i].set) continue;
        char list[256];
        size_t off = 0;
        for (size_t k = 0; k < n && off < sizeof list; k++)
            off += (size_t)snprintf(list + off, sizeof list - off, "%s%s",
                                    k == 0 ? "" : k + 1 == n ? " and " : ", ", slots[k].name);
        berth_errorf(err,
                     "backend '%s' (%s): function table slot '%s' is NULL; a v1 table must fill %s "
                     "(upload_dest and plan_profile may be NULL)",
                     name_or_path, path, slots[i].name, list);
        return 0;
    }
    /* Every message about the backend names it by this field. */
    if (!be->name || !be->name[0]) {
        berth_errorf(err, "backend '%s' (%s): function table field 'name' is %s; the host names the "
                     "backend by it in every message", name_or_path, path, be->name ? "empty" : "NULL");
        return 0;
    }
    return 1;
}

static const char *abi_name(uint32_t v) {
    static const char *const names[] = {"1.0", "1.1", "1.2", "1.3", "1.4"};
    return v >= 1 && v <= sizeof names / sizeof *names ? names[v - 1] : "?";
}

/* The version and size of a table, then what ABI 1.1 adds. A table of
 * version 1 is read only up to BERTH_BACKEND_V1_MIN_SIZE whatever its
 * struct_size says: a 1.0 module built against a later header declares a
 * larger struct_size, but its 1.1 slots were never meant to be read. */
static int check_table(const berth_backend *be, const char *name_or_path, const char *path,
                       berth_error *err) {
    if (be->abi_version == 0 || be->abi_version > BERTH_BACKEND_ABI_VERSION) {
        berth_errorf(err,
                     "backend '%s' (%s): no ABI version both sides speak: the backend offers "
                     "version %u, this engine speaks versions 1 to %u",
                     name_or_path, path, be->abi_version, BERTH_BACKEND_ABI_VERSION);
        return 0;
    }
    size_t least = (size_t)BERTH_BACKEND_MIN_SIZE(be->abi_version);
    if (be->struct_size < least) {
        berth_errorf(err,
                     "backend '%s' (%s): function table for ABI version %u is %u bytes, "
                     "at least %zu expected for ABI %s",
                     name_or_path, path, be->abi_version, be->struct_size, least,
                     abi_name(be->abi_version));
        return 0;
    }
    if (be->abi_version < BERTH_BACKEND_ABI_V1_1) return 1;
    if (!be->supports_node) {
        berth_errorf(err,
                     "backend '%s' (%s): function table slot 'supports_node' is NULL; a table of "
                     "ABI version 2 (ABI 1.1) must fill it (only get_proc may be NULL among the "
                     "1.1 slots)",
                     name_or_path, path);
        return 0;
    }
    if (be->n_options == 0) return 1;
    if (!be->options) {
        berth_errorf(err,
                     "backend '%s' (%s): function table field 'options' is NULL with 'n_options' %u; "
                     "expected an array of %u option declarations",
                     name_or_path, path, be->n_options, be->n_options);
        return 0;
    }
    if (be->option_decl_size < BERTH_OPTION_DECL_V1_SIZE) {
        berth_errorf(err,
                     "backend '%s' (%s): function table field 'option_decl_size' is %u with "
                     "'n_options' %u; at least %zu expected",
                     name_or_path, path, be->option_decl_size, be->n_options,
                     (size_t)BERTH_OPTION_DECL_V1_SIZE);
        return 0;
    }
    for (uint32_t i = 0; i < be->n_options; i++) {
        const berth_option_decl *d = berth_backend_option(be, i);
        if (!d->key || !d->key[0]) {
            berth_errorf(err, "backend '%s' (%s): declared option %u has %s key", name_or_path, path,
                         i, d->key ? "an empty" : "a NULL");
            return 0;
        }
        if (d->type < BERTH_OPTION_BOOL || d->type > BERTH_OPTION_PATH) {
            berth_errorf(err,
                         "backend '%s' (%s): declared option '%s' has type %d; expected 1 (BOOL), "
                         "2 (INT), 3 (FLOAT), 4 (STRING) or 5 (PATH)",
                         name_or_path, path, d->key, (int)d->type);
            return 0;
        }
        for (uint32_t k = 0; k < i; k++)
            if (!strcmp(berth_backend_option(be, k)->key, d->key)) {
                berth_errorf(err, "backend '%s' (%s): option '%s' is declared twice (options %u and %u)",
                             name_or_path, path, d->key, k, i);
                return 0;
            }
    }
    return 1;
}

const berth_option_decl *berth_backend_option(const berth_backend *be, uint32_t i) {
    if (be->abi_version < BERTH_BACKEND_ABI_V1_1 || i >= be->n_options) return NULL;
    return (const berth_option_decl *)(const void *)((const char *)be->options +
                                                     (size_t)i * be->option_decl_size);
}

uint32_t berth_backend_option_count(const berth_backend *be) {
    return be->abi_version >= BERTH_BACKEND_ABI_V1_1 ? be->n_options : 0;
}

void *berth_backend_proc(const berth_backend *be, const char *name) {
    if (be->abi_version < BERTH_BACKEND_ABI_V1_1 || !be->get_proc || !name) return NULL;
    return be->get_proc(name);
}

berth_status berth_module_load(const char *name_or_path, const char *const *dirs, uint32_t n_dirs,
                               const berth_host_services *host, berth_module *out,
                               berth_error *err) {
    memset(out, 0, sizeof *out);
    char *path = berth_loader_find(name_or_path, dirs, n_dirs, err);
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
    if (!check_table(be, name_or_path, path, err)) goto fail;
    if (!check_slots(be, name_or_path, path, err)) goto fail;
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
