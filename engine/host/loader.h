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
 * `path` key), then $BERTH_BACKEND_PATH (colon-separated), then, relative
 * to the file holding the engine: ../lib/berth from a program
 * (PREFIX/bin/berth), berth/ beside libberth.so (PREFIX/lib), and in a
 * build tree (a CMakeCache.txt up to three folders above) its backends/
 * folder. Writes at most `cap`
 * pointers into out (owned by the caller: free each) and returns the
 * count. */
uint32_t berth_loader_search_path(const char *const *dirs, uint32_t n_dirs, char **out,
                                  uint32_t cap);

/* The file of a backend: `name_or_path` itself when it has a '/', else
 * libberth-NAME.so along the search path. Malloc'd, or NULL with the
 * directories searched in err. */
char *berth_loader_find(const char *name_or_path, const char *const *dirs, uint32_t n_dirs, berth_error *err);

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

/* What a loaded table offers beyond ABI 1.0. Each reads a 1.1 slot only
 * when the table's abi_version is 2 or more (the loader has then checked
 * its struct_size), never because struct_size happens to be large: a 1.0
 * module built against a later header declares the larger size too.
 *
 * Declared options, indexed by the table's option_decl_size (NULL past
 * the end or for a 1.0 table). */
uint32_t berth_backend_option_count(const berth_backend *be);
const berth_option_decl *berth_backend_option(const berth_backend *be, uint32_t i);
/* get_proc(name), or NULL for a 1.0 table or a NULL slot. */
void *berth_backend_proc(const berth_backend *be, const char *name);
static inline int berth_backend_has_supports_node(const berth_backend *be) {
    return be->abi_version >= BERTH_BACKEND_ABI_V1_1 && be->supports_node;
}
static inline int berth_backend_has_node_cost(const berth_backend *be) {
    return be->abi_version >= BERTH_BACKEND_ABI_V1_3 && be->node_cost;
}
static inline int berth_backend_has_export(const berth_backend *be) {
    return be->abi_version >= BERTH_BACKEND_ABI_V1_3 && be->export_output;
}
static inline int berth_backend_has_import(const berth_backend *be) {
    return be->abi_version >= BERTH_BACKEND_ABI_V1_3 && be->import_input;
}
static inline int berth_backend_has_prepare(const berth_backend *be) {
    return be->abi_version >= BERTH_BACKEND_ABI_V1_4 && be->prepare_weights;
}
/* save_state and load_state come as a pair: a cache needs both. */
static inline int berth_backend_has_state(const berth_backend *be) {
    return be->abi_version >= BERTH_BACKEND_ABI_V1_4 && be->save_state && be->load_state;
}

/* Arrays the host hands a module (operands, nodes, attrs, tensors, weight
 * descs) are laid out today with the ABI 1.0 element sizes, which equal
 * sizeof of the structs in this header, and every graph desc and upload
 * info says so in its *_size fields. When a release appends a field to
 * one of those structs, the host keeps one layout per module version:
 * for a table of abi_version 1 or 2 it still builds arrays with the old
 * stride (BERTH_*_V1_SIZE, copying each element's first V1_SIZE bytes),
 * and only for a table of the new version the longer stride with the new
 * field filled, setting *_size to match. A module indexes by the declared
 * size, so it never reads past what the host wrote, and the host never
 * hands a module a field it was not built to know. */

#endif
