/* Host services handed to a backend (see berth_host_services). */
#ifndef BERTH_HOST_H
#define BERTH_HOST_H

#include "berth/backend.h"
#include "config.h"

typedef struct berth_logger {
    void (*fn)(void *ctx, berth_log_level level, const char *msg);
    void *ctx;
    berth_log_level level; /* used when fn is NULL: lines up to it go to stderr */
} berth_logger;

void berth_log(const berth_logger *l, berth_log_level level, const char *msg);

/* One per loaded backend; must stay at a fixed address while the module
 * is loaded, since the services' ctx points at it. */
typedef struct berth_host {
    berth_host_services services;
    berth_logger log;
    const bc_backend_opts *opts; /* [backend.NAME], or NULL */
    char backend_name[64];
} berth_host;

void berth_host_init(berth_host *h, const berth_logger *log);

#endif
