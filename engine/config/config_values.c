/* The value grammars of the config: the lists of [backend] and the
 * buckets of [buckets]. config.c hands each value here whole, after inih
 * has split the line and stripped comments. */
#include <stdlib.h>
#include <string.h>

#include "config_internal.h"
#include "util.h"

/* ---- [backend] ---- */

/* The list item starting at p, up to `sep` or the end, trimmed to
 * [*a, *b). Returns where the next item starts, or NULL after the last. */
static const char *bc_item(const char *p, char sep, const char **a, const char **b) {
    const char *stop = strchr(p, sep);
    const char *end = stop ? stop : p + strlen(p);
    *a = p;
    *b = end;
    while (*a < *b && bc_space(**a)) (*a)++;
    while (*b > *a && bc_space((*b)[-1])) (*b)--;
    return stop ? stop + 1 : NULL;
}

/* use = a, b/c.so: order kept, names checked, paths resolved; into
 * *list (*n items), which [backend] and each [model.NAME] have their own
 * of. */
int bc_parse_use(bc_parser *ps, const char *value, char ***list, uint32_t *n_list) {
    berth_config *c = ps->c;
    const char *p = value;
    for (uint32_t item = 1; p; item++) {
        const char *a, *b;
        p = bc_item(p, ',', &a, &b);
        size_t n = (size_t)(b - a);
        if (n == 0)
            return bc_fail(ps, ps->line,
                           "[%s] use: item %u is empty; expected backend names or paths "
                           "separated by ',', found '%.*s'",
                           ps->label, item, bc_show(strlen(value)), value);
        char *name = bc_strndup(a, n);
        if (!name) return bc_oom(ps);
        if (!memchr(a, '/', n) && !bc_plain(a, n)) {
            bc_fail(ps, ps->line,
                    "[%s] use: item %u: expected a backend name (letters, digits, '_', '-') "
                    "or a path containing '/', found '%.*s'",
                    ps->label, item, bc_show(n), name);
            free(name);
            return 0;
        }
        if (memchr(a, '/', n) && name[0] != '/') {
            char *full = berth_path_join(c->dir, name);
            free(name);
            if (!full) return bc_oom(ps);
            name = full;
        }
        for (uint32_t i = 0; i < *n_list; i++) {
            if (strcmp((*list)[i], name) == 0) {
                bc_fail(ps, ps->line, "[%s] use: item %u: '%.*s' is listed twice", ps->label, item,
                        bc_show(n), a);
                free(name);
                return 0;
            }
        }
        void *g = bc_grow(*list, *n_list, sizeof **list);
        if (!g) {
            free(name);
            return bc_oom(ps);
        }
        *list = g;
        (*list)[(*n_list)++] = name;
    }
    return 1;
}

/* path = DIR:DIR: each resolved, none empty. */
int bc_parse_dirs(bc_parser *ps, const char *value) {
    berth_config *c = ps->c;
    const char *p = value;
    for (uint32_t item = 1; p; item++) {
        const char *a, *b;
        p = bc_item(p, ':', &a, &b);
        if (a == b)
            return bc_fail(ps, ps->line,
                           "[backend] path: directory %u is empty; expected directories "
                           "separated by ':', found '%.*s'",
                           item, bc_show(strlen(value)), value);
        char *dir = bc_strndup(a, (size_t)(b - a));
        if (!dir) return bc_oom(ps);
        if (dir[0] != '/') {
            char *full = berth_path_join(c->dir, dir);
            free(dir);
            if (!full) return bc_oom(ps);
            dir = full;
        }
        void *g = bc_grow(c->path_dirs, c->n_path, sizeof *c->path_dirs);
        if (!g) {
            free(dir);
            return bc_oom(ps);
        }
        c->path_dirs = g;
        c->path_dirs[c->n_path++] = dir;
    }
    return 1;
}

/* ---- [buckets] ---- */

/* "dim=value": dim a name, value a positive integer <= 2^40. */
static int bc_parse_bind(bc_parser *ps, const char *stage, uint32_t k, const char *tok, size_t n,
                         bc_bind *out) {
    const char *eq = memchr(tok, '=', n);
    if (!eq || eq == tok || eq + 1 == tok + n)
        return bc_fail(ps, ps->line,
                       "[buckets] %s: bucket %u: expected dim=value with no spaces around '=', "
                       "found '%.*s'",
                       stage, k, bc_show(n), tok);
    size_t dn = (size_t)(eq - tok);
    if (!bc_dim_name(tok, dn))
        return bc_fail(ps, ps->line,
                       "[buckets] %s: bucket %u: expected a dim name (letters, digits, '_', "
                       "'-', '.'), found '%.*s'",
                       stage, k, bc_show(dn), tok);
    int64_t v = 0;
    for (const char *d = eq + 1; d < tok + n; d++) {
        if (*d < '0' || *d > '9' || v > BC_MAX_DIM) {
            v = -1;
            break;
        }
        v = v * 10 + (*d - '0');
    }
    if (v < 1 || v > BC_MAX_DIM)
        return bc_fail(ps, ps->line,
                       "[buckets] %s: bucket %u: %.*s: expected a positive integer at most "
                       "2^40, found '%.*s'",
                       stage, k, bc_show(dn), tok, bc_show(n - dn - 1), eq + 1);
    out->dim = bc_strndup(tok, dn);
    if (!out->dim) return bc_oom(ps);
    out->value = v;
    return 1;
}

static const bc_bind *bc_find_bind(const bc_bucket *b, const char *dim) {
    for (uint32_t i = 0; i < b->n; i++)
        if (strcmp(b->binds[i].dim, dim) == 0) return &b->binds[i];
    return NULL;
}

/* Every bucket binds the dims of the first; put them in its order, so
 * bind i names the same dim in every bucket of a stage. */
static int bc_match_first(bc_parser *ps, const bc_stage *st, uint32_t k) {
    const bc_bucket *first = &st->buckets[0];
    bc_bucket *b = &st->buckets[k - 1];
    for (uint32_t i = 0; i < b->n; i++)
        if (!bc_find_bind(first, b->binds[i].dim))
            return bc_fail(ps, ps->line,
                           "[buckets] %s: bucket %u binds '%s', which bucket 1 does not; every "
                           "bucket of a stage binds the same dims",
                           st->name, k, b->binds[i].dim);
    for (uint32_t i = 0; i < first->n; i++)
        if (!bc_find_bind(b, first->binds[i].dim))
            return bc_fail(ps, ps->line,
                           "[buckets] %s: bucket %u does not bind '%s', which bucket 1 does; "
                           "every bucket of a stage binds the same dims",
                           st->name, k, first->binds[i].dim);
    /* Same set, no repeats: a permutation. Sort it into the first's order. */
    for (uint32_t i = 0; i < first->n; i++) {
        for (uint32_t j = i; j < b->n; j++) {
            if (strcmp(b->binds[j].dim, first->binds[i].dim) == 0) {
                bc_bind t = b->binds[i];
                b->binds[i] = b->binds[j];
                b->binds[j] = t;
                break;
            }
        }
    }
    for (uint32_t j = 1; j < k; j++) {
        const bc_bucket *o = &st->buckets[j - 1];
        uint32_t same = 0;
        while (same < b->n && o->binds[same].value == b->binds[same].value) same++;
        if (same == b->n)
            return bc_fail(ps, ps->line, "[buckets] %s: bucket %u repeats bucket %u", st->name,
                           k, j);
    }
    return 1;
}

static int bc_parse_bucket(bc_parser *ps, bc_stage *st, uint32_t k, const char *a, const char *b) {
    bc_bucket *bucket;
    BC_APPEND(ps, st->buckets, st->n, bucket);
    while (a < b) {
        while (a < b && bc_space(*a)) a++;
        if (a == b) break;
        const char *t = a;
        while (t < b && !bc_space(*t)) t++;
        bc_bind bind = {0};
        if (!bc_parse_bind(ps, st->name, k, a, (size_t)(t - a), &bind)) return 0;
        if (bc_find_bind(bucket, bind.dim)) {
            bc_fail(ps, ps->line, "[buckets] %s: bucket %u binds '%s' twice", st->name, k,
                    bind.dim);
            free(bind.dim);
            return 0;
        }
        void *g = bc_grow(bucket->binds, bucket->n, sizeof *bucket->binds);
        if (!g) {
            free(bind.dim);
            return bc_oom(ps);
        }
        bucket->binds = g;
        bucket->binds[bucket->n++] = bind;
        a = t;
    }
    if (bucket->n == 0)
        return bc_fail(ps, ps->line,
                       "[buckets] %s: bucket %u is empty; expected dim=value pairs, buckets "
                       "separated by '|'",
                       st->name, k);
    return k == 1 ? 1 : bc_match_first(ps, st, k);
}

/* STAGE = dim=v dim=v | dim=v dim=v ... */
int bc_parse_stage(bc_parser *ps, const char *name, const char *value) {
    berth_config *c = ps->c;
    if (!bc_plain(name, strlen(name)))
        return bc_fail(ps, ps->line,
                       "[buckets]: expected a stage name (letters, digits, '_', '-') as the "
                       "key, found '%.*s'",
                       bc_show(strlen(name)), name);
    bc_stage *st;
    BC_APPEND(ps, c->stages, c->n_stages, st);
    st->line = ps->line;
    st->name = strdup(name);
    if (!st->name) return bc_oom(ps);
    const char *p = value;
    for (uint32_t k = 1;; k++) {
        const char *bar = strchr(p, '|');
        const char *end = bar ? bar : p + strlen(p);
        if (!bc_parse_bucket(ps, st, k, p, end)) return 0;
        if (!bar) return 1;
        p = bar + 1;
    }
}
