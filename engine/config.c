/* The deployment config: berth's INI dialect, read with inih.
 *
 * inih splits "key = value" lines, strips inline comments and calls a
 * handler; everything else is ours. We feed inih through our own line
 * reader (ini_parse_stream) for three reasons, all about how Debian builds
 * inih 55 (INI_HANDLER_LINENO 0, INI_ALLOW_MULTILINE 1, INI_MAX_LINE 200,
 * MAX_SECTION 50, INI_STOP_ON_FIRST_ERROR 0):
 *  - the handler is not told the line number, so the reader counts lines
 *    and the handler reads the count (inih processes each line fully
 *    before it asks for the next);
 *  - a line longer than inih's buffer would be split into two lines and
 *    an indented line would silently continue the previous value, so the
 *    reader refuses long lines and strips indentation;
 *  - section names over 49 bytes would be truncated, so the reader parses
 *    section headers itself and hands inih a blank line in their place.
 * The handler and reader stop at the first error; the error with the
 * smallest line number (ours, or a syntax error inih reports) wins. */
#include "config.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Bucket dims are element counts; 2^40 is far above any real batch or
 * length and keeps products of a few dims inside int64. */
#define BC_MAX_DIM ((int64_t)1 << 40)
/* A config is a few hundred bytes; anything this big is the wrong file. */
#define BC_MAX_FILE ((size_t)16 << 20)
/* How much of a value an error message quotes. */
#define BC_SHOW 80

typedef enum bc_kind {
    BC_SEC_NONE,
    BC_SEC_MODEL,
    BC_SEC_LANE,
    BC_SEC_BACKEND,
    BC_SEC_BACKEND_OPTS,
    BC_SEC_BUCKETS,
    BC_SEC_INPUT
} bc_kind;

/* A name seen once and where: sections of the file, keys of a section. */
typedef struct bc_seen {
    char *name;
    uint32_t line;
} bc_seen;

typedef struct bc_parser {
    berth_config *c;
    const char *file; /* for messages */
    berth_error *err;
    int failed;
    uint32_t err_line;
    const char *next; /* reader position in the text */
    uint32_t line;    /* the line inih is processing */
    /* the open section */
    bc_kind kind;
    const char *label; /* its name as written, owned by `sections` */
    uint32_t sec_line;
    uint32_t sec_index; /* into lanes, backends or inputs */
    bc_seen *sections;
    uint32_t n_sections;
    bc_seen *keys; /* keys of the open section */
    uint32_t n_keys;
    /* line of each lane's stage key (0: none), parallel to c->lanes */
    uint32_t *stage_lines;
    uint32_t n_stage_lines;
    uint32_t model_line, weights_line, manifest_line;
} bc_parser;

/* ---- small helpers ---- */

/* Arrays grow by doubling whenever the count reaches a power of two, so
 * the count alone tells the capacity. Returns the (possibly moved) array
 * or NULL with the old one untouched. */
static void *bc_grow(void *arr, uint32_t n, size_t elem) {
    if (n != 0 && (n & (n - 1)) != 0) return arr;
    if (n >= UINT32_MAX / 2) return NULL;
    size_t cap = n ? (size_t)n * 2 : 1;
    if (cap > SIZE_MAX / elem) return NULL;
    return realloc(arr, cap * elem);
}

/* Append a zeroed element to arr[0..count) and point `out` at it; the
 * count grows at once so a free of the half-built config sees it. */
#define BC_APPEND(ps, arr, count, out)                          \
    do {                                                        \
        void *g_ = bc_grow((arr), (count), sizeof *(arr));      \
        if (!g_) return bc_oom(ps);                             \
        (arr) = g_;                                             \
        memset(&(arr)[(count)], 0, sizeof *(arr));              \
        (out) = &(arr)[(count)++];                              \
    } while (0)

static char *bc_strndup(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

static int bc_space(char ch) {
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

static int bc_alnum(char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

/* Names of backends, lanes and stages: letters, digits, '_' and '-', so
 * a backend name can never be mistaken for a path. */
static int bc_plain(const char *s, size_t n) {
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++)
        if (!bc_alnum(s[i]) && s[i] != '_' && s[i] != '-') return 0;
    return 1;
}

/* Dim names as graphs spell them: a plain name that may also hold '.'. */
static int bc_dim_name(const char *s, size_t n) {
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++)
        if (!bc_alnum(s[i]) && s[i] != '_' && s[i] != '-' && s[i] != '.') return 0;
    return 1;
}

static int bc_show(size_t n) { return n > BC_SHOW ? BC_SHOW : (int)n; }

/* Record the first error as "FILE:LINE: message"; returns 0 so handlers
 * can `return bc_fail(...)`. */
__attribute__((format(printf, 3, 4))) static int bc_fail(bc_parser *ps, uint32_t line,
                                                         const char *fmt, ...) {
    if (ps->failed) return 0;
    char msg[BERTH_ERROR_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    berth_errorf(ps->err, "%s:%u: %s", ps->file, line, msg);
    ps->failed = 1;
    ps->err_line = line;
    return 0;
}

static int bc_oom(bc_parser *ps) { return bc_fail(ps, ps->line, "out of memory reading the config"); }

static const bc_seen *bc_find_seen(const bc_seen *v, uint32_t n, const char *name) {
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(v[i].name, name) == 0) return &v[i];
    return NULL;
}

static int bc_add_seen(bc_parser *ps, bc_seen **v, uint32_t *n, const char *name, size_t len,
                       uint32_t line) {
    char *copy = bc_strndup(name, len);
    if (!copy) return bc_oom(ps);
    bc_seen *s;
    void *g = bc_grow(*v, *n, sizeof **v);
    if (!g) {
        free(copy);
        return bc_oom(ps);
    }
    *v = g;
    s = &(*v)[(*n)++];
    s->name = copy;
    s->line = line;
    return 1;
}

static void bc_free_seen(bc_seen *v, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) free(v[i].name);
    free(v);
}

/* Store a path from the file, resolved against the config's directory. */
static int bc_set_path(bc_parser *ps, char **dst, const char *key, const char *value) {
    if (!*value) return bc_fail(ps, ps->line, "[%s] %s: expected a path, found an empty value",
                                ps->label, key);
    char *p = value[0] == '/' ? strdup(value) : berth_path_join(ps->c->dir, value);
    if (!p) return bc_oom(ps);
    *dst = p;
    return 1;
}

static int bc_set_stage(bc_parser *ps, uint32_t lane, const char *value) {
    if (!bc_plain(value, strlen(value)))
        return bc_fail(ps, ps->line,
                       "[%s] stage: expected a stage name (letters, digits, '_', '-'), found '%.*s'",
                       ps->label, bc_show(strlen(value)), value);
    char *s = strdup(value);
    if (!s) return bc_oom(ps);
    ps->c->lanes[lane].stage = s;
    ps->stage_lines[lane] = ps->line;
    return 1;
}

/* ---- [backend] ---- */

/* use = a, b/c.so: order kept, names checked, paths resolved. */
static int bc_parse_use(bc_parser *ps, const char *value) {
    berth_config *c = ps->c;
    const char *p = value;
    for (uint32_t item = 1;; item++) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        const char *a = p, *b = end;
        while (a < b && bc_space(*a)) a++;
        while (b > a && bc_space(b[-1])) b--;
        size_t n = (size_t)(b - a);
        if (n == 0)
            return bc_fail(ps, ps->line,
                           "[backend] use: item %u is empty; expected backend names or paths "
                           "separated by ',', found '%.*s'",
                           item, bc_show(strlen(value)), value);
        char *name = bc_strndup(a, n);
        if (!name) return bc_oom(ps);
        if (!memchr(a, '/', n) && !bc_plain(a, n)) {
            bc_fail(ps, ps->line,
                    "[backend] use: item %u: expected a backend name (letters, digits, '_', '-') "
                    "or a path containing '/', found '%.*s'",
                    item, bc_show(n), name);
            free(name);
            return 0;
        }
        if (memchr(a, '/', n) && name[0] != '/') {
            char *full = berth_path_join(c->dir, name);
            free(name);
            if (!full) return bc_oom(ps);
            name = full;
        }
        for (uint32_t i = 0; i < c->n_use; i++) {
            if (strcmp(c->use[i], name) == 0) {
                bc_fail(ps, ps->line, "[backend] use: item %u: '%.*s' is listed twice", item,
                        bc_show(n), a);
                free(name);
                return 0;
            }
        }
        char **slot;
        void *g = bc_grow(c->use, c->n_use, sizeof *c->use);
        if (!g) {
            free(name);
            return bc_oom(ps);
        }
        c->use = g;
        slot = &c->use[c->n_use++];
        *slot = name;
        if (!comma) return 1;
        p = comma + 1;
    }
}

/* path = DIR:DIR: each resolved, none empty. */
static int bc_parse_dirs(bc_parser *ps, const char *value) {
    berth_config *c = ps->c;
    const char *p = value;
    for (uint32_t item = 1;; item++) {
        const char *colon = strchr(p, ':');
        const char *end = colon ? colon : p + strlen(p);
        const char *a = p, *b = end;
        while (a < b && bc_space(*a)) a++;
        while (b > a && bc_space(b[-1])) b--;
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
        if (!colon) return 1;
        p = colon + 1;
    }
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
static int bc_parse_stage(bc_parser *ps, const char *name, const char *value) {
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

/* ---- keys of each section ---- */

static int bc_unknown_key(bc_parser *ps, const char *key, const char *expected) {
    return bc_fail(ps, ps->line, "[%s]: unknown key '%.*s' (expected %s)", ps->label,
                   bc_show(strlen(key)), key, expected);
}

static int bc_model_key(bc_parser *ps, const char *key, const char *value) {
    berth_config *c = ps->c;
    if (strcmp(key, "graph") == 0) return bc_set_path(ps, &c->lanes[0].graph, key, value);
    if (strcmp(key, "weights") == 0) {
        ps->weights_line = ps->line;
        return bc_set_path(ps, &c->weights, key, value);
    }
    if (strcmp(key, "manifest") == 0) {
        ps->manifest_line = ps->line;
        return bc_set_path(ps, &c->manifest, key, value);
    }
    if (strcmp(key, "stage") == 0) return bc_set_stage(ps, 0, value);
    return bc_unknown_key(ps, key, "graph, weights, manifest or stage");
}

static int bc_lane_key(bc_parser *ps, const char *key, const char *value) {
    bc_lane *lane = &ps->c->lanes[ps->sec_index];
    if (strcmp(key, "graph") == 0) return bc_set_path(ps, &lane->graph, key, value);
    if (strcmp(key, "stage") == 0) return bc_set_stage(ps, ps->sec_index, value);
    return bc_unknown_key(ps, key, "graph or stage");
}

static int bc_backend_key(bc_parser *ps, const char *key, const char *value) {
    if (strcmp(key, "use") == 0) return bc_parse_use(ps, value);
    if (strcmp(key, "path") == 0) return bc_parse_dirs(ps, value);
    return bc_unknown_key(ps, key, "use or path");
}

static int bc_backend_opt(bc_parser *ps, const char *key, const char *value) {
    bc_backend_opts *b = &ps->c->backends[ps->sec_index];
    bc_kv *kv;
    BC_APPEND(ps, b->kv, b->n, kv);
    kv->line = ps->line;
    kv->key = strdup(key);
    kv->value = strdup(value);
    if (!kv->key || !kv->value) return bc_oom(ps);
    return 1;
}

static int bc_input_key(bc_parser *ps, const char *key, const char *value) {
    if (strcmp(key, "pad") != 0) return bc_unknown_key(ps, key, "pad");
    char *end = NULL;
    errno = 0;
    double v = strtod(value, &end);
    if (!*value || end == value || *end || errno == ERANGE || !isfinite(v))
        return bc_fail(ps, ps->line, "[%s] pad: expected a finite number, found '%.*s'",
                       ps->label, bc_show(strlen(value)), value);
    ps->c->inputs[ps->sec_index].pad = v;
    return 1;
}

/* inih's callback: one "key = value" line of the open section. */
static int bc_on_key(void *user, const char *section, const char *key, const char *value) {
    bc_parser *ps = user;
    (void)section; /* blank: the reader keeps section headers from inih */
    if (ps->failed) return 0;
    if (ps->kind == BC_SEC_NONE)
        return bc_fail(ps, ps->line, "key '%.*s' is outside any section; expected a [section] "
                       "header first",
                       bc_show(strlen(key)), key);
    if (!*key)
        return bc_fail(ps, ps->line, "[%s]: expected a key before '=', found none", ps->label);
    const bc_seen *dup = bc_find_seen(ps->keys, ps->n_keys, key);
    if (dup)
        return bc_fail(ps, ps->line, "[%s] %.*s: duplicate key (first at line %u)", ps->label,
                       bc_show(strlen(key)), key, dup->line);
    if (!bc_add_seen(ps, &ps->keys, &ps->n_keys, key, strlen(key), ps->line)) return 0;
    switch (ps->kind) {
    case BC_SEC_MODEL: return bc_model_key(ps, key, value);
    case BC_SEC_LANE: return bc_lane_key(ps, key, value);
    case BC_SEC_BACKEND: return bc_backend_key(ps, key, value);
    case BC_SEC_BACKEND_OPTS: return bc_backend_opt(ps, key, value);
    case BC_SEC_BUCKETS: return bc_parse_stage(ps, key, value);
    case BC_SEC_INPUT: return bc_input_key(ps, key, value);
    case BC_SEC_NONE: break;
    }
    return bc_fail(ps, ps->line, "internal: key in no section");
}

/* ---- sections ---- */

static int bc_require(bc_parser *ps, const char *key, const char *why) {
    if (bc_find_seen(ps->keys, ps->n_keys, key)) return 1;
    return bc_fail(ps, ps->sec_line, "[%s]: missing key '%s' (%s)", ps->label, key, why);
}

/* Checks that need the whole section: its required keys. */
static int bc_close_section(bc_parser *ps) {
    int ok = 1;
    if (ps->kind == BC_SEC_MODEL)
        ok = bc_require(ps, "graph", "the .webnn graph to run") &&
             bc_require(ps, "weights", "the .safetensors or raw weights file");
    else if (ps->kind == BC_SEC_LANE)
        ok = bc_require(ps, "graph", "the .webnn graph this lane runs");
    bc_free_seen(ps->keys, ps->n_keys);
    ps->keys = NULL;
    ps->n_keys = 0;
    ps->kind = BC_SEC_NONE;
    return ok;
}

static int bc_bad_section(bc_parser *ps, const char *name) {
    return bc_fail(ps, ps->line,
                   "unknown section [%.*s] (expected [model], [lane.NAME], [backend], "
                   "[backend.NAME], [buckets] or [inputs.NAME])",
                   bc_show(strlen(name)), name);
}

/* Make the section `name` (as written between the brackets) current. */
static int bc_enter(bc_parser *ps, const char *name) {
    berth_config *c = ps->c;
    const char *dot = strchr(name, '.');
    size_t head = dot ? (size_t)(dot - name) : strlen(name);
    const char *tail = dot ? dot + 1 : NULL;
#define BC_IS(word) (head == strlen(word) && strncmp(name, word, head) == 0)
    if (!tail && BC_IS("model")) {
        ps->kind = BC_SEC_MODEL;
        ps->model_line = ps->line;
        c->lanes[0].line = ps->line;
        return 1;
    }
    if (!tail && BC_IS("backend")) {
        ps->kind = BC_SEC_BACKEND;
        return 1;
    }
    if (!tail && BC_IS("buckets")) {
        ps->kind = BC_SEC_BUCKETS;
        return 1;
    }
    if (BC_IS("lane") || BC_IS("backend")) {
        int lane = BC_IS("lane");
        if (!tail || !bc_plain(tail, strlen(tail)))
            return bc_fail(ps, ps->line,
                           "[%.*s]: expected [%s.NAME] with NAME of letters, digits, '_' or "
                           "'-', found name '%.*s'",
                           bc_show(strlen(name)), name, lane ? "lane" : "backend",
                           bc_show(tail ? strlen(tail) : 0), tail ? tail : "");
        if (lane && strcmp(tail, "main") == 0)
            return bc_fail(ps, ps->line, "[lane.main]: the lane name 'main' is reserved for "
                                         "[model]; choose another name");
        char *copy = strdup(tail);
        if (!copy) return bc_oom(ps);
        if (lane) {
            bc_lane *l;
            uint32_t *sl;
            void *g = bc_grow(c->lanes, c->n_lanes, sizeof *c->lanes);
            if (g) c->lanes = g;
            void *h = g ? bc_grow(ps->stage_lines, ps->n_stage_lines, sizeof *sl) : NULL;
            if (!h) {
                free(copy);
                return bc_oom(ps);
            }
            ps->stage_lines = h;
            ps->stage_lines[ps->n_stage_lines++] = 0;
            l = &c->lanes[c->n_lanes++];
            memset(l, 0, sizeof *l);
            l->name = copy;
            l->line = ps->line;
            ps->sec_index = c->n_lanes - 1;
            ps->kind = BC_SEC_LANE;
        } else {
            bc_backend_opts *b;
            void *g = bc_grow(c->backends, c->n_backends, sizeof *c->backends);
            if (!g) {
                free(copy);
                return bc_oom(ps);
            }
            c->backends = g;
            b = &c->backends[c->n_backends++];
            memset(b, 0, sizeof *b);
            b->name = copy;
            b->line = ps->line;
            ps->sec_index = c->n_backends - 1;
            ps->kind = BC_SEC_BACKEND_OPTS;
        }
        return 1;
    }
    if (BC_IS("inputs")) {
        if (!tail || !*tail || strpbrk(tail, " \t\r\v\f"))
            return bc_fail(ps, ps->line,
                           "[%.*s]: expected [inputs.NAME] with NAME an input of the graph, "
                           "found name '%.*s'",
                           bc_show(strlen(name)), name, bc_show(tail ? strlen(tail) : 0),
                           tail ? tail : "");
        bc_input *in;
        BC_APPEND(ps, c->inputs, c->n_inputs, in);
        in->line = ps->line;
        in->name = strdup(tail);
        if (!in->name) return bc_oom(ps);
        ps->sec_index = c->n_inputs - 1;
        ps->kind = BC_SEC_INPUT;
        return 1;
    }
#undef BC_IS
    return bc_bad_section(ps, name);
}

/* A header line "[name]", optionally followed by a comment. */
static int bc_section_line(bc_parser *ps, const char *s, size_t len) {
    const char *close = memchr(s, ']', len);
    if (!close)
        return bc_fail(ps, ps->line, "expected ']' to close the section header, found '%.*s'",
                       bc_show(len), s);
    const char *rest = close + 1, *end = s + len;
    while (rest < end && bc_space(*rest)) rest++;
    if (rest < end && *rest != ';' && *rest != '#')
        return bc_fail(ps, ps->line,
                       "expected nothing but a comment after the section header, found '%.*s'",
                       bc_show((size_t)(end - rest)), rest);
    const char *a = s + 1, *b = close;
    while (a < b && bc_space(*a)) a++;
    while (b > a && bc_space(b[-1])) b--;
    if (!bc_close_section(ps)) return 0;
    char *name = bc_strndup(a, (size_t)(b - a));
    if (!name) return bc_oom(ps);
    const bc_seen *dup = bc_find_seen(ps->sections, ps->n_sections, name);
    if (dup) {
        bc_fail(ps, ps->line, "duplicate section [%.*s] (first at line %u)",
                bc_show(strlen(name)), name, dup->line);
        free(name);
        return 0;
    }
    int ok = bc_add_seen(ps, &ps->sections, &ps->n_sections, name, strlen(name), ps->line);
    free(name);
    if (!ok) return 0;
    ps->label = ps->sections[ps->n_sections - 1].name;
    ps->sec_line = ps->line;
    return bc_enter(ps, ps->label);
}

/* inih's reader: one physical line per call, so inih's line count and
 * ours agree. */
static char *bc_read_line(char *buf, int cap, void *stream) {
    bc_parser *ps = stream;
    if (ps->failed || !*ps->next || cap < 2) return NULL;
    const char *s = ps->next;
    const char *e = strchr(s, '\n');
    if (!e) e = s + strlen(s);
    ps->next = *e ? e + 1 : e;
    ps->line++;
    if (ps->line == 1 && e - s >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) s += 3;
    while (s < e && bc_space(*s)) s++;
    while (e > s && bc_space(e[-1])) e--;
    size_t len = (size_t)(e - s);
    if (len > (size_t)cap - 1) {
        bc_fail(ps, ps->line,
                "line is %zu characters long; inih reads at most %d characters per line",
                len, cap - 1);
        return NULL;
    }
    if (len && s[0] == '[') {
        if (!bc_section_line(ps, s, len)) return NULL;
        len = 0;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    return buf;
}

/* ---- whole-file checks ---- */

static int bc_has_suffix(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcasecmp(s + a - b, suffix) == 0;
}

static int bc_finish(bc_parser *ps) {
    berth_config *c = ps->c;
    if (!bc_close_section(ps)) return 0;
    if (!ps->model_line)
        return bc_fail(ps, ps->line ? ps->line : 1,
                       "missing section [model] (expected graph and weights keys in it)");
    int safetensors = bc_has_suffix(c->weights, ".safetensors");
    if (!safetensors && !c->manifest)
        return bc_fail(ps, ps->model_line,
                       "[model]: missing key 'manifest' (weights '%.*s' on line %u is not a "
                       ".safetensors file, so a JSON manifest must describe its tensors)",
                       bc_show(strlen(c->weights)), c->weights, ps->weights_line);
    if (safetensors && c->manifest)
        return bc_fail(ps, ps->manifest_line,
                       "[model] manifest: a .safetensors file describes its own tensors; "
                       "expected no manifest with weights '%.*s'",
                       bc_show(strlen(c->weights)), c->weights);
    for (uint32_t i = 0; i < c->n_lanes; i++) {
        const bc_lane *l = &c->lanes[i];
        if (l->stage && !berth_config_stage(c, l->stage))
            return bc_fail(ps, ps->stage_lines[i],
                           "[%s%s] stage: no stage '%s' in [buckets]%s", i ? "lane." : "model",
                           i ? l->name : "", l->stage,
                           c->n_stages ? "" : " (the file has no [buckets] section)");
    }
    if (c->n_use == 0) {
        c->use = malloc(sizeof *c->use);
        if (!c->use) return bc_oom(ps);
        c->use[0] = strdup("cpu");
        if (!c->use[0]) return bc_oom(ps);
        c->n_use = 1;
    }
    return 1;
}

/* The line `line` of text, for quoting inih's syntax errors. */
static void bc_syntax_error(bc_parser *ps, const char *text, uint32_t line) {
    const char *s = text;
    for (uint32_t i = 1; i < line && s; i++) {
        s = strchr(s, '\n');
        if (s) s++;
    }
    if (!s) s = "";
    size_t n = strcspn(s, "\n");
    while (n && bc_space(s[n - 1])) n--;
    while (n && bc_space(*s)) s++, n--;
    bc_fail(ps, line, "expected 'key = value', '[section]' or a comment, found '%.*s'",
            bc_show(n), s);
}

berth_config *berth_config_parse(const char *path, const char *text, berth_error *err) {
    berth_error scratch;
    if (!err) err = &scratch;
    if (!path) path = "<config>";
    if (!text) {
        berth_errorf(err, "%s: no text to parse", path);
        return NULL;
    }
    berth_config *c = calloc(1, sizeof *c);
    bc_parser ps = {.c = c, .file = path, .err = err, .next = text};
    if (!c || !(c->path = strdup(path)) || !(c->dir = berth_path_dir(path)) ||
        !(c->lanes = calloc(1, sizeof *c->lanes)) || !(c->lanes[0].name = strdup("main")) ||
        !(ps.stage_lines = calloc(1, sizeof *ps.stage_lines))) {
        berth_errorf(err, "%s: out of memory reading the config", path);
        free(ps.stage_lines);
        berth_config_free(c);
        return NULL;
    }
    c->n_lanes = 1;
    ps.n_stage_lines = 1;
    int bad = ini_parse_stream(bc_read_line, &ps, bc_on_key, &ps);
    /* A syntax error inih found before our first error comes first. */
    if (bad > 0 && (!ps.failed || (uint32_t)bad < ps.err_line)) {
        ps.failed = 0;
        bc_syntax_error(&ps, text, (uint32_t)bad);
    } else if (bad < 0 && !ps.failed) {
        bc_fail(&ps, ps.line, "inih could not parse the file (code %d)", bad);
    }
    if (!ps.failed) bc_finish(&ps);
    bc_close_section(&ps);
    bc_free_seen(ps.sections, ps.n_sections);
    free(ps.stage_lines);
    if (ps.failed) {
        berth_config_free(c);
        return NULL;
    }
    return c;
}

berth_config *berth_config_load(const char *path, berth_error *err) {
    berth_error scratch;
    if (!err) err = &scratch;
    if (!path) {
        berth_errorf(err, "berth_config_load: expected a file name, found NULL");
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        berth_errorf(err, "%s: cannot open the config: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n + 1 == cap) {
            if (cap > BC_MAX_FILE) break;
            char *g = realloc(buf, cap * 2);
            if (!g) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = g;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (got == 0) break;
    }
    int io = ferror(f);
    int saved = errno;
    fclose(f);
    if (!buf) {
        berth_errorf(err, "%s: out of memory reading the config", path);
        return NULL;
    }
    if (io || n > BC_MAX_FILE) {
        if (io)
            berth_errorf(err, "%s: cannot read the config: %s", path, strerror(saved));
        else
            berth_errorf(err, "%s: the config is over %zu bytes; expected a small text file",
                         path, BC_MAX_FILE);
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    const char *nul = memchr(buf, '\0', n);
    if (nul) {
        uint32_t line = 1;
        for (const char *p = buf; p < nul; p++) line += *p == '\n';
        berth_errorf(err, "%s:%u: expected text, found a NUL byte", path, line);
        free(buf);
        return NULL;
    }
    berth_config *c = berth_config_parse(path, buf, err);
    free(buf);
    return c;
}

void berth_config_free(berth_config *c) {
    if (!c) return;
    free(c->path);
    free(c->dir);
    free(c->weights);
    free(c->manifest);
    for (uint32_t i = 0; i < c->n_lanes; i++) {
        free(c->lanes[i].name);
        free(c->lanes[i].graph);
        free(c->lanes[i].stage);
    }
    free(c->lanes);
    for (uint32_t i = 0; i < c->n_use; i++) free(c->use[i]);
    free(c->use);
    for (uint32_t i = 0; i < c->n_path; i++) free(c->path_dirs[i]);
    free(c->path_dirs);
    for (uint32_t i = 0; i < c->n_backends; i++) {
        bc_backend_opts *b = &c->backends[i];
        for (uint32_t j = 0; j < b->n; j++) {
            free(b->kv[j].key);
            free(b->kv[j].value);
        }
        free(b->kv);
        free(b->name);
    }
    free(c->backends);
    for (uint32_t i = 0; i < c->n_stages; i++) {
        bc_stage *s = &c->stages[i];
        for (uint32_t j = 0; j < s->n; j++) {
            for (uint32_t k = 0; k < s->buckets[j].n; k++) free(s->buckets[j].binds[k].dim);
            free(s->buckets[j].binds);
        }
        free(s->buckets);
        free(s->name);
    }
    free(c->stages);
    for (uint32_t i = 0; i < c->n_inputs; i++) free(c->inputs[i].name);
    free(c->inputs);
    free(c);
}

const bc_backend_opts *berth_config_backend(const berth_config *c, const char *name) {
    if (!c || !name) return NULL;
    for (uint32_t i = 0; i < c->n_backends; i++)
        if (strcmp(c->backends[i].name, name) == 0) return &c->backends[i];
    return NULL;
}

const bc_stage *berth_config_stage(const berth_config *c, const char *name) {
    if (!c || c->n_stages == 0) return NULL;
    if (!name) return &c->stages[0];
    for (uint32_t i = 0; i < c->n_stages; i++)
        if (strcmp(c->stages[i].name, name) == 0) return &c->stages[i];
    return NULL;
}

double berth_config_pad(const berth_config *c, const char *input) {
    if (!c || !input) return 0.0;
    for (uint32_t i = 0; i < c->n_inputs; i++)
        if (strcmp(c->inputs[i].name, input) == 0) return c->inputs[i].pad;
    return 0.0;
}
