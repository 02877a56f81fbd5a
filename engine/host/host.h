/* Host services handed to a backend (see berth_host_services). */
#ifndef BERTH_HOST_H
#define BERTH_HOST_H

#include "berth/backend.h"
#include "config.h"
#include <stddef.h>

typedef struct berth_logger {
    void (*fn)(void *ctx, berth_log_level level, const char *msg);
    void *ctx;
    berth_log_level level; /* used when fn is NULL: lines up to it go to stderr */
} berth_logger;

void berth_log(const berth_logger *l, berth_log_level level, const char *msg);
/* berth_log of a printf format, cut at 1023 bytes. */
void berth_logf(const berth_logger *l, berth_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* One per loaded backend; must stay at a fixed address while the module
 * is loaded, since the services' ctx points at it. */
typedef struct berth_host {
    berth_host_services services;
    berth_logger log;
    const bc_backend_opts *opts; /* [backend.NAME], or NULL */
    char backend_name[64];
} berth_host;

void berth_host_init(berth_host *h, const berth_logger *log);

/* For a 1.1 module that declares its options: check every key of
 * [backend.NAME] (`opts`, may be NULL) against the declarations, before
 * open(). An unknown key, or a value that does not parse as its type, is
 * outside [min, max] or not one of `choices`, is BERTH_ERR_INVALID with
 * "FILE:LINE: [backend.NAME] ..." naming the key, what was expected and
 * what was found (for an unknown key, the declared keys). A 1.0 module's
 * options are its own to check: BERTH_OK. */
berth_status berth_host_check_options(const berth_backend *be, const bc_backend_opts *opts,
                                      const char *cfg_path, berth_error *err);

/* "int", "string", ...: a declared option's type as `berth backends`
 * and messages write it. */
const char *berth_option_type_name(berth_option_type t);

#endif
