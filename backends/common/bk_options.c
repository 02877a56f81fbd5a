/* Declared options: [backend.NAME] read through the host's option_at into
 * typed values by the module's berth_option_decl table. The host checks
 * the same declarations before open(); this is what the module itself
 * relies on, with messages naming the key, what was expected and what
 * was found. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bk.h"

static int parse_bool(const char *v, int *out) {
    static const char *const yes[] = {"1", "true", "yes", "on"}, *const no[] = {"0", "false", "no", "off"};
    for (size_t i = 0; i < 4; i++) {
        if (!strcasecmp(v, yes[i])) return *out = 1, 1;
        if (!strcasecmp(v, no[i])) return *out = 0, 1;
    }
    return 0;
}

/* "a|b|c" as "a, b or c". */
static void choices_words(const char *choices, char *buf, size_t cap) {
    size_t at = 0, n = strlen(choices);
    buf[0] = 0;
    for (size_t i = 0; i < n && at + 5 < cap; i++) {
        if (choices[i] != '|') {
            buf[at++] = choices[i];
            continue;
        }
        const char *sep = strchr(choices + i + 1, '|') ? ", " : " or ";
        size_t k = strlen(sep);
        if (at + k >= cap) break;
        memcpy(buf + at, sep, k);
        at += k;
    }
    buf[at] = 0;
}

static int is_choice(const char *choices, const char *v) {
    size_t len = strlen(v);
    for (const char *p = choices; *p;) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && !strncmp(p, v, n)) return 1;
        if (!bar) break;
        p = bar + 1;
    }
    return 0;
}

static berth_status parse_value(const berth_option_decl *d, const char *backend, const char *v, bk_option_value *out,
                                berth_error *err) {
    char want[200];
    int bounded = d->min != 0 || d->max != 0;
    switch (d->type) {
    case BERTH_OPTION_BOOL:
        if (parse_bool(v, &out->b)) return BERTH_OK;
        snprintf(want, sizeof want, "true or false");
        break;
    case BERTH_OPTION_INT: {
        char *end = NULL;
        errno = 0;
        long long x = strtoll(v, &end, 10);
        if (end != v && !*end && !errno && (!bounded || (x >= d->min && x <= d->max))) {
            out->i = x;
            out->f = (double)x;
            return BERTH_OK;
        }
        if (bounded) snprintf(want, sizeof want, "an integer %.0f..%.0f", d->min, d->max);
        else snprintf(want, sizeof want, "an integer");
        break;
    }
    case BERTH_OPTION_FLOAT: {
        char *end = NULL;
        errno = 0;
        double x = strtod(v, &end);
        if (end != v && !*end && !errno && x == x && (!bounded || (x >= d->min && x <= d->max))) {
            out->f = x;
            return BERTH_OK;
        }
        if (bounded) snprintf(want, sizeof want, "a number %g..%g", d->min, d->max);
        else snprintf(want, sizeof want, "a number");
        break;
    }
    case BERTH_OPTION_STRING:
        if (!d->choices || is_choice(d->choices, v)) {
            out->s = v;
            return BERTH_OK;
        }
        choices_words(d->choices, want, sizeof want);
        break;
    case BERTH_OPTION_PATH:
        if (*v) {
            out->s = v;
            return BERTH_OK;
        }
        snprintf(want, sizeof want, "a file path");
        break;
    default:
        bk_errf(err, "%s: option '%s' is declared with unknown type %d", backend, d->key, (int)d->type);
        return BERTH_ERR_INTERNAL;
    }
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
