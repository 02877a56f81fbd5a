/* The services table the engine hands each backend: logging with the
 * backend's name in front, its INI section as options, and the allocator
 * that lets a buffer change hands across the module boundary. */
#include "host.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk.h"
#include "loader.h"
#include "util.h"

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

void berth_logf(const berth_logger *l, berth_log_level level, const char *fmt, ...) {
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    berth_log(l, level, line);
}

const char *berth_option_type_name(berth_option_type t) {
    switch (t) {
    case BERTH_OPTION_BOOL: return "bool";
    case BERTH_OPTION_INT: return "int";
    case BERTH_OPTION_FLOAT: return "float";
    case BERTH_OPTION_STRING: return "string";
    case BERTH_OPTION_PATH: return "path";
    }
    return "?";
}

berth_status berth_host_check_options(const berth_backend *be, const bc_backend_opts *opts,
                                      const char *cfg_path, berth_error *err) {
    if (be->abi_version < BERTH_BACKEND_ABI_V1_1 || !opts) return BERTH_OK;
    uint32_t n = berth_backend_option_count(be);
    for (uint32_t i = 0; i < opts->n; i++) {
        const bc_kv *kv = &opts->kv[i];
        const berth_option_decl *d = NULL;
        for (uint32_t k = 0; k < n && !d; k++)
            if (!strcmp(berth_backend_option(be, k)->key, kv->key)) d = berth_backend_option(be, k);
        if (!d) {
            char keys[300];
            size_t off = 0;
            keys[0] = 0;
            for (uint32_t k = 0; k < n && off < sizeof keys; k++)
                off += (size_t)snprintf(keys + off, sizeof keys - off, "%s%s", k ? ", " : "",
                                        berth_backend_option(be, k)->key);
            if (n)
                berth_errorf(err, "%s:%u: [backend.%s] unknown key '%s': backend '%s' declares %s",
                             cfg_path, kv->line, opts->name, kv->key, be->name, keys);
            else
                berth_errorf(err, "%s:%u: [backend.%s] unknown key '%s': backend '%s' declares no options",
                             cfg_path, kv->line, opts->name, kv->key, be->name);
            return BERTH_ERR_INVALID;
        }
        bk_option_value parsed;
        if (!bk_option_parse(d, kv->value, &parsed)) {
            char want[128];
            bk_option_expected(d, want, sizeof want);
            berth_errorf(err, "%s:%u: [backend.%s] %s: expected %s, found '%s'", cfg_path, kv->line,
                         opts->name, kv->key, want, kv->value);
            return BERTH_ERR_INVALID;
        }
    }
    return BERTH_OK;
}
