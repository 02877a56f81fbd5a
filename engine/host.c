/* The services table the engine hands each backend: logging with the
 * backend's name in front, its INI section as options, and the allocator
 * that lets a buffer change hands across the module boundary. */
#include "host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void host_log(void *ctx, berth_log_level level, const char *msg) {
    berth_host *h = ctx;
    char line[BERTH_ERROR_CAP + 64];
    snprintf(line, sizeof line, "[%s] %s", h->backend_name[0] ? h->backend_name : "backend", msg);
    berth_log(&h->log, level, line);
}

static uint32_t host_option_count(void *ctx) {
    berth_host *h = ctx;
    return h->opts ? h->opts->n : 0;
}

static berth_status host_option_at(void *ctx, uint32_t i, const char **key, const char **value) {
    berth_host *h = ctx;
    if (!h->opts || i >= h->opts->n) return BERTH_ERR_INVALID;
    *key = h->opts->kv[i].key;
    *value = h->opts->kv[i].value;
    return BERTH_OK;
}

static void *host_alloc(void *ctx, size_t bytes, size_t alignment) {
    (void)ctx;
    if (alignment < sizeof(void *)) alignment = sizeof(void *);
    if (alignment & (alignment - 1)) return NULL;
    if (bytes == 0) bytes = 1;
    void *p = NULL;
    return posix_memalign(&p, alignment, bytes) == 0 ? p : NULL;
}

static void host_free(void *ctx, void *ptr) {
    (void)ctx;
    free(ptr);
}

void berth_host_init(berth_host *h, const berth_logger *log) {
    memset(h, 0, sizeof *h);
    h->log = *log;
    h->services.abi_version = BERTH_BACKEND_ABI_VERSION;
    h->services.struct_size = sizeof h->services;
    h->services.ctx = h;
    h->services.log = host_log;
    h->services.option_count = host_option_count;
    h->services.option_at = host_option_at;
    h->services.alloc = host_alloc;
    h->services.free = host_free;
}

void berth_log(const berth_logger *l, berth_log_level level, const char *msg) {
    if (l->fn) {
        l->fn(l->ctx, level, msg);
        return;
    }
    if (level <= l->level) fprintf(stderr, "berth: %s\n", msg);
}
