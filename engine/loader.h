/* Finding, loading and negotiating with backend modules. */
#ifndef BERTH_LOADER_H
#define BERTH_LOADER_H

#include <stdint.h>

#include "berth/backend.h"

typedef struct berth_module {
    void *handle;
    const berth_backend *be;
    char *path; /* the file loaded */
} berth_module;

/* Directories searched for a backend name, in order: `dirs` (the INI
 * `path` key), then $BERTH_BACKEND_PATH (colon-separated), then the
 * installed module directory, then the build tree. Writes at most `cap`
 * pointers into out (owned by the caller: free each) and returns the
 * count. */
uint32_t berth_loader_search_path(const char *const *dirs, uint32_t n_dirs, char **out,
                                  uint32_t cap);

/* Resolve `name_or_path` (a short name like "cpu" is looked up as
 * libberth-cpu.so along the search path; anything with a '/' is used as
 * given), dlopen it with RTLD_NOW|RTLD_LOCAL, call its entry with the
 * host's ABI version and check the table it returns. Each failure has its
 * own message: not found (every directory searched), not loadable (the
 * dlerror text), entry symbol missing, no ABI version both sides speak,
 * entry refused (its reason), table too small for its version. */
berth_status berth_module_load(const char *name_or_path, const char *const *dirs, uint32_t n_dirs,
                               const berth_host_services *host, berth_module *out,
                               berth_error *err);
void berth_module_unload(berth_module *m);

#endif
