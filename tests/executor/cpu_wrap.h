/* For test modules that are the cpu backend with a verb or two changed:
 * load the cpu module, take its table and copy it into `table` with the
 * wrapper's name, for the caller to replace the verbs it changes. The
 * module stays open for the life of the process, like the table it
 * serves. Returns the cpu backend's own table, or NULL with *why set. */
#ifndef BERTH_TEST_CPU_WRAP_H
#define BERTH_TEST_CPU_WRAP_H

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "berth/backend.h"

static const berth_backend *cpu_wrap(const char *name, uint32_t host_abi_version,
                                     const berth_host_services *host, berth_error *why,
                                     berth_backend *table) {
    void *h = dlopen(CPU_MODULE, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why->msg, sizeof why->msg, "%s: %s", name, dlerror());
        return NULL;
    }
    union {
        void *obj;
        berth_backend_entry_fn fn;
    } entry;
    entry.obj = dlsym(h, BERTH_BACKEND_ENTRY_SYMBOL);
    const berth_backend *cpu = entry.obj ? entry.fn(host_abi_version, host, why) : NULL;
    if (!cpu) {
        if (!entry.obj) snprintf(why->msg, sizeof why->msg, "%s: no entry in %s", name, CPU_MODULE);
        dlclose(h);
        return NULL;
    }
    memcpy(table, cpu, cpu->struct_size < sizeof *table ? cpu->struct_size : sizeof *table);
    table->name = name;
    /* Verbs that take the weights object: a wrapper that wraps it would
     * hand cpu its own; one that does not may set them back. */
    table->prepare_weights = NULL;
    table->save_state = NULL;
    table->load_state = NULL;
    return cpu;
}

#endif
