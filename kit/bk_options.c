/* Declared options: [backend.NAME] read through the host's option_at into
 * typed values by the module's berth_option_decl table. The host checks
 * the same declarations before open(); this is what the module itself
 * relies on, with messages naming the key, what was expected and what
 * was found. */
#include <stdio.h>
#include <string.h>

#include "bk.h"

static berth_status parse_value(const berth_option_decl *d, const char *backend, const char *v, bk_option_value *out,
                                berth_error *err) {
    if (bk_option_parse(d, v, out)) return BERTH_OK;
    char want[200];
    bk_option_expected(d, want, sizeof want);
    bk_errf(err, "option '%s' in [backend.%s]: expected %s, found '%s'", d->key, backend, want, v);
    return BERTH_ERR_INVALID;
}

berth_status bk_options_read(const berth_host_services *host, const char *backend, const berth_option_decl *decls,
                             uint32_t n, bk_option_value *vals, berth_error *err) {
    berth_status st;
    for (uint32_t i = 0; i < n; i++) {
        memset(&vals[i], 0, sizeof vals[i]);
        if (decls[i].default_value && (st = parse_value(&decls[i], backend, decls[i].default_value, &vals[i], err)))
            return st == BERTH_ERR_INVALID ? BERTH_ERR_INTERNAL : st;
        vals[i].set = decls[i].default_value != NULL;
    }
    uint32_t count = host && host->option_count ? host->option_count(host->ctx) : 0;
    if (count && !host->option_at) {
        bk_errf(err, "%s: the host reports %u options but no option_at service", backend, count);
        return BERTH_ERR_INVALID;
    }
    for (uint32_t k = 0; k < count; k++) {
        const char *key = NULL, *value = NULL;
        if (host->option_at(host->ctx, k, &key, &value) != BERTH_OK || !key) {
            bk_errf(err, "%s: option %u of [backend.%s] could not be read", backend, k, backend);
            return BERTH_ERR_INVALID;
        }
        uint32_t i = 0;
        while (i < n && strcmp(decls[i].key, key)) i++;
        if (i == n) {
            char known[256] = "";
            size_t at = 0;
            for (uint32_t j = 0; j < n && at < sizeof known; j++)
                at += (size_t)snprintf(known + at, sizeof known - at, j ? ", %s" : "%s", decls[j].key);
            bk_errf(err, "unknown option '%s' in [backend.%s] (known: %s)", key, backend, n ? known : "none");
            return BERTH_ERR_INVALID;
        }
        if ((st = parse_value(&decls[i], backend, value ? value : "", &vals[i], err))) return st;
        vals[i].set = 1;
    }
    return BERTH_OK;
}
