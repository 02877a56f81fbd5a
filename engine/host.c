/* The services table the engine hands each backend: logging with the
 * backend's name in front, its INI section as options, and the allocator
 * that lets a buffer change hands across the module boundary. */
#include "host.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int bounded(const berth_option_decl *d) { return !(d->min == 0 && d->max == 0); }

void berth_option_expected(const berth_option_decl *d, char *buf, size_t cap) {
    switch (d->type) {
    case BERTH_OPTION_BOOL:
        snprintf(buf, cap, "a boolean (true/false, yes/no, on/off, 1/0)");
        break;
    case BERTH_OPTION_INT:
        if (bounded(d)) snprintf(buf, cap, "an integer in [%.17g, %.17g]", d->min, d->max);
        else snprintf(buf, cap, "an integer");
        break;
    case BERTH_OPTION_FLOAT:
        if (bounded(d)) snprintf(buf, cap, "a number in [%.17g, %.17g]", d->min, d->max);
        else snprintf(buf, cap, "a finite number");
        break;
    case BERTH_OPTION_STRING:
        if (d->choices) snprintf(buf, cap, "one of %s", d->choices);
        else snprintf(buf, cap, "any text");
        break;
    case BERTH_OPTION_PATH:
        snprintf(buf, cap, "a file path");
        break;
    default:
        snprintf(buf, cap, "?");
    }
}

static int parse_bool(const char *v) {
    static const char *const yes[] = {"true", "yes", "on", "1"}, *const no[] = {"false", "no", "off", "0"};
    char low[8];
    size_t n = strlen(v);
    if (n >= sizeof low) return -1;
    for (size_t i = 0; i <= n; i++) low[i] = (char)(v[i] >= 'A' && v[i] <= 'Z' ? v[i] - 'A' + 'a' : v[i]);
    for (int i = 0; i < 4; i++) {
        if (!strcmp(low, yes[i])) return 1;
        if (!strcmp(low, no[i])) return 0;
    }
    return -1;
}

static int in_choices(const char *choices, const char *v) {
    size_t n = strlen(v);
    while (choices) {
        const char *bar = strchr(choices, '|');
        size_t len = bar ? (size_t)(bar - choices) : strlen(choices);
        if (len == n && !strncmp(choices, v, n)) return 1;
        choices = bar ? bar + 1 : NULL;
    }
    return 0;
}

/* Does `v` fit declaration d? */
static int value_ok(const berth_option_decl *d, const char *v) {
    char *end;
    switch (d->type) {
    case BERTH_OPTION_BOOL: return parse_bool(v) >= 0;
    case BERTH_OPTION_INT: {
        if (!*v) return 0;
        errno = 0;
        long long x = strtoll(v, &end, 10);
        if (*end || errno) return 0;
        return !bounded(d) || ((double)x >= d->min && (double)x <= d->max);
    }
    case BERTH_OPTION_FLOAT: {
        if (!*v) return 0;
        errno = 0;
        double x = strtod(v, &end);
        if (*end || errno || !isfinite(x)) return 0;
        return !bounded(d) || (x >= d->min && x <= d->max);
    }
    case BERTH_OPTION_STRING: return !d->choices || in_choices(d->choices, v);
    case BERTH_OPTION_PATH: return *v != 0;
    }
    return 0;
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
        if (!value_ok(d, kv->value)) {
            char want[128];
            berth_option_expected(d, want, sizeof want);
            berth_errorf(err, "%s:%u: [backend.%s] %s: expected %s, found '%s'", cfg_path, kv->line,
                         opts->name, kv->key, want, kv->value);
            return BERTH_ERR_INVALID;
        }
    }
    return BERTH_OK;
}
