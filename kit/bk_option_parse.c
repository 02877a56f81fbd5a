/* A declared option's value: parsed by its declaration, and what it must
 * be, in words. Compiled into every module (bk_options.c reads options
 * with it) and into the engine, which checks [backend.NAME] with it
 * before open(), so host and module agree on what a value means. */
#include <errno.h>
#include <math.h>
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

static int bounded(const berth_option_decl *d) { return d->min != 0 || d->max != 0; }

void bk_option_expected(const berth_option_decl *d, char *buf, size_t cap) {
    switch (d->type) {
    case BERTH_OPTION_BOOL: snprintf(buf, cap, "a boolean (true/false, yes/no, on/off, 1/0)"); break;
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
    case BERTH_OPTION_PATH: snprintf(buf, cap, "a file path"); break;
    default: snprintf(buf, cap, "a value of unknown type %d", (int)d->type);
    }
}

int bk_option_parse(const berth_option_decl *d, const char *v, bk_option_value *out) {
    char *end = NULL;
    switch (d->type) {
    case BERTH_OPTION_BOOL: return parse_bool(v, &out->b);
    case BERTH_OPTION_INT: {
        errno = 0;
        long long x = strtoll(v, &end, 10);
        if (end == v || *end || errno || (bounded(d) && (x < d->min || x > d->max))) return 0;
        out->i = x;
        out->f = (double)x;
        return 1;
    }
    case BERTH_OPTION_FLOAT: {
        errno = 0;
        double x = strtod(v, &end);
        if (end == v || *end || errno || !isfinite(x) || (bounded(d) && (x < d->min || x > d->max))) return 0;
        out->f = x;
        return 1;
    }
    case BERTH_OPTION_STRING:
        if (d->choices && !is_choice(d->choices, v)) return 0;
        out->s = v;
        return 1;
    case BERTH_OPTION_PATH:
        out->s = v;
        return *v != 0;
    }
    return 0;
}
