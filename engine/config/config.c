/* The deployment config: berth's INI dialect, read with inih.
 *
 * inih splits "key = value" lines, strips inline comments and calls a
 * handler; everything else is ours. We feed inih through our own line
 * reader (ini_parse_stream) for four reasons, all about how Debian builds
 * inih 55 (INI_HANDLER_LINENO 0, INI_ALLOW_MULTILINE 1, INI_MAX_LINE 200,
 * MAX_SECTION 50, INI_STOP_ON_FIRST_ERROR 0):
 *  - the handler is not told the line number, so the reader counts lines
 *    and the handler reads the count (inih processes each line fully
 *    before it asks for the next);
 *  - an indented line would silently continue the previous value, so the
 *    reader strips indentation;
 *  - a line longer than inih's 200-byte buffer would be split into two
 *    lines, and Debian's build cannot grow the buffer (INI_USE_STACK 1,
 *    INI_ALLOW_REALLOC 0). So the reader splits such a line itself,
 *    exactly as inih splits a short one (the first '=' or ':' ends the
 *    key; a ';' after whitespace starts a comment; key and value are
 *    trimmed), keeps key and value in the parser and hands inih a short
 *    stand-in pair; the key handler swaps the stand-in for them before it
 *    reads either. A long comment line reaches inih as a blank line, and
 *    a long line with no '=' or ':' as a line without them, which inih
 *    reports. inih still reads every line of usual length: lines of any
 *    length work, and short ones take inih's path unchanged;
 *  - section names over 49 bytes would be truncated, so the reader parses
 *    section headers itself and hands inih a blank line in their place.
 * The handler and reader stop at the first error; the error with the
 * smallest line number (ours, or a syntax error inih reports) wins. */
#include "config_internal.h"

#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* A config is a few hundred bytes; anything this big is the wrong file. */
#define BC_MAX_FILE ((size_t)16 << 20)

/* The stand-in the reader hands inih for a line too long for its buffer:
 * key and value are a control byte, which inih neither trims nor takes
 * for a comment, so they come back to the handler unchanged. The handler
 * knows the stand-in by ps->stand_in, not by these bytes, so a real
 * control byte in a short line is read as it is. */
#define BC_STAND_IN_KEY "\x01"
#define BC_STAND_IN_VALUE "\x01"

/* ---- small helpers ---- */

void *bc_grow(void *arr, uint32_t n, size_t elem) {
    if (n != 0 && (n & (n - 1)) != 0) return arr;
    if (n >= UINT32_MAX / 2) return NULL;
    size_t cap = n ? (size_t)n * 2 : 1;
    if (cap > SIZE_MAX / elem) return NULL;
    return realloc(arr, cap * elem);
}

char *bc_strndup(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

/* Record the first error as "FILE:LINE: message"; returns 0 so handlers
 * can `return bc_fail(...)`. */
int bc_fail(bc_parser *ps, uint32_t line, const char *fmt, ...) {
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

int bc_oom(bc_parser *ps) { return bc_fail(ps, ps->line, "out of memory reading the config"); }

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
    if (strcmp(key, "use") == 0 && ps->want_model)
        return bc_parse_use(ps, value, &ps->model_use, &ps->n_model_use);
    return bc_unknown_key(ps, key, ps->want_model ? "graph, weights, manifest, stage or use"
                                                  : "graph, weights, manifest or stage");
}

/* A model the file describes but this open does not load: its keys are
 * checked by name (and its required ones at the section's end), so a
 * mistake in any model of a pipeline is reported whichever is opened. */
static int bc_other_model_key(bc_parser *ps, const char *key) {
    static const char *const known[] = {"graph", "weights", "manifest", "stage", "use"};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(key, known[i]) == 0 && (i < 4 || strchr(ps->label, '.'))) return 1;
    return bc_unknown_key(ps, key, strchr(ps->label, '.') ? "graph, weights, manifest, stage or use"
                                                          : "graph, weights, manifest or stage");
}

static int bc_lane_key(bc_parser *ps, const char *key, const char *value) {
    bc_lane *lane = &ps->c->lanes[ps->sec_index];
    if (strcmp(key, "graph") == 0) return bc_set_path(ps, &lane->graph, key, value);
    if (strcmp(key, "stage") == 0) return bc_set_stage(ps, ps->sec_index, value);
    return bc_unknown_key(ps, key, "graph or stage");
}

static int bc_backend_key(bc_parser *ps, const char *key, const char *value) {
    if (strcmp(key, "use") == 0) return bc_parse_use(ps, value, &ps->c->use, &ps->c->n_use);
    if (strcmp(key, "path") == 0) return bc_parse_dirs(ps, value);
    if (strcmp(key, "split") == 0) {
        static const char *const modes[] = {"off", "on", "first"}; /* index: BERTH_SPLIT_* */
        for (int m = 0; m < 3; m++)
            if (strcmp(value, modes[m]) == 0) {
                ps->c->split = m;
                ps->c->split_line = ps->line;
                return 1;
            }
        return bc_fail(ps, ps->line, "[backend] split: expected on, off or first, found '%.*s'",
                       bc_show(strlen(value)), value);
    }
    if (strcmp(key, "verify") == 0) {
        /* One backend: the reference every run is held to. */
        if (!*value || strchr(value, ','))
            return bc_fail(ps, ps->line, "[backend] verify: expected one backend name or path, found '%.*s'",
                           bc_show(strlen(value)), value);
        free(ps->c->verify);
        ps->c->verify = strchr(value, '/') ? (value[0] == '/' ? strdup(value) : berth_path_join(ps->c->dir, value))
                                           : strdup(value);
        return ps->c->verify ? 1 : bc_oom(ps);
    }
    if (strcmp(key, "verify_atol") == 0 || strcmp(key, "verify_rtol") == 0) {
        char *end = NULL;
        errno = 0;
        double v = strtod(value, &end);
        if (!*value || end == value || *end || errno == ERANGE || !isfinite(v) || v < 0)
            return bc_fail(ps, ps->line, "[backend] %s: expected a finite number >= 0, found '%.*s'", key,
                           bc_show(strlen(value)), value);
        *(key[7] == 'a' ? &ps->c->verify_atol : &ps->c->verify_rtol) = v;
        return 1;
    }
    return bc_unknown_key(ps, key, "use, path, split, verify, verify_atol or verify_rtol");
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

/* max_memory_mb = N: decimal digits only, so "1e3", "0x10", "-1" and
 * "512 MiB" are refused rather than half-read. */
static int bc_limits_key(bc_parser *ps, const char *key, const char *value) {
    if (strcmp(key, "max_memory_mb") != 0) return bc_unknown_key(ps, key, "max_memory_mb");
    uint64_t v = *value ? 0 : UINT64_MAX;
    for (const char *d = value; *d && v <= BC_MAX_MEMORY_MB; d++)
        v = *d >= '0' && *d <= '9' ? v * 10 + (uint64_t)(*d - '0') : UINT64_MAX;
    if (v < 1 || v > BC_MAX_MEMORY_MB)
        return bc_fail(ps, ps->line,
                       "[limits] max_memory_mb: expected a positive whole number of MiB at most "
                       "2^40, found '%.*s'",
                       bc_show(strlen(value)), value);
    ps->c->max_memory_mb = v;
    ps->c->max_memory_line = ps->line;
    return 1;
}

const char *const berth_serve_server_keys[BERTH_SERVE_N_SERVER] = {
    "max_inflight_mb", "drain_s",         "max_connections", "max_connections_per_ip",
    "header_timeout_s", "idle_timeout_s", "min_body_kbps",   "http_threads"};

/* [serve]: positive whole numbers, digits only, as max_memory_mb. */
static int bc_serve_key(bc_parser *ps, const char *key, const char *value) {
    static const char *const keys = "max_batch, max_delay_us, max_queue, timeout_ms, workers, max_inflight_mb, "
                                    "drain_s, max_connections, max_connections_per_ip, header_timeout_s, "
                                    "idle_timeout_s, min_body_kbps or http_threads";
    uint64_t *dst = !strcmp(key, "max_batch")      ? &ps->c->serve_max_batch
                    : !strcmp(key, "max_delay_us") ? &ps->c->serve_max_delay_us
                    : !strcmp(key, "max_queue")    ? &ps->c->serve_max_queue
                    : !strcmp(key, "timeout_ms")   ? &ps->c->serve_timeout_ms
                    : !strcmp(key, "workers")      ? &ps->c->serve_workers
                                                   : NULL;
    for (int k = 0; !dst && k < BERTH_SERVE_N_SERVER; k++)
        if (!strcmp(key, berth_serve_server_keys[k])) dst = &ps->c->serve_server[k];
    if (!dst) return bc_unknown_key(ps, key, keys);
    uint64_t v = *value ? 0 : UINT64_MAX;
    for (const char *d = value; *d && v <= BC_MAX_DIM; d++)
        v = *d >= '0' && *d <= '9' ? v * 10 + (uint64_t)(*d - '0') : UINT64_MAX;
    if (v < 1 || v > (uint64_t)BC_MAX_DIM)
        return bc_fail(ps, ps->line, "[serve] %s: expected a positive whole number at most 2^40, found '%.*s'",
                       key, bc_show(strlen(value)), value);
    *dst = v;
    return 1;
}

/* inih's callback: one "key = value" line of the open section. */
static int bc_on_key(void *user, const char *section, const char *key, const char *value) {
    bc_parser *ps = user;
    (void)section; /* blank: the reader keeps section headers from inih */
    if (ps->failed) return 0;
    if (ps->stand_in) { /* a long line: its key and value as the reader split them */
        if (strcmp(key, BC_STAND_IN_KEY) != 0 || strcmp(value, BC_STAND_IN_VALUE) != 0)
            return bc_fail(ps, ps->line, "internal: inih changed the stand-in of a long line");
        key = ps->long_key;
        value = ps->long_value;
    }
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
    case BC_SEC_LIMITS: return bc_limits_key(ps, key, value);
    case BC_SEC_SERVE: return bc_serve_key(ps, key, value);
    case BC_SEC_CACHE:
        if (strcmp(key, "dir") == 0) return bc_set_path(ps, &ps->c->cache_dir, key, value);
        return bc_unknown_key(ps, key, "dir");
    case BC_SEC_OTHER_MODEL: return bc_other_model_key(ps, key);
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
    if (ps->kind == BC_SEC_MODEL || ps->kind == BC_SEC_OTHER_MODEL)
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
                   "unknown section [%.*s] (expected [model], [model.NAME], [lane.NAME], [backend], "
                   "[backend.NAME], [buckets], [inputs.NAME], [limits], [serve] or [cache])",
                   bc_show(strlen(name)), name);
}

/* [model], or [model.NAME] of a file describing several models (a
 * pipeline): the one this open loads becomes the model, the others are
 * checked and set aside. Kept apart from bc_enter because choosing the
 * model is the one section rule that depends on what the caller asked
 * berth to load. */
static int bc_enter_model(bc_parser *ps, const char *name, const char *tail) {
    berth_config *c = ps->c;
    if (tail) {
        if (!bc_plain(tail, strlen(tail)))
            return bc_fail(ps, ps->line,
                           "[%.*s]: expected [model.NAME] with NAME of letters, digits, '_' or '-', "
                           "found name '%.*s'",
                           bc_show(strlen(name)), name, bc_show(strlen(tail)), tail);
        char **slot;
        BC_APPEND(ps, c->models, c->n_models, slot);
        if (!(*slot = strdup(tail))) return bc_oom(ps);
    } else {
        ps->plain_model_line = ps->line;
    }
    /* want_model "": the first [model.NAME] */
    int chosen = tail ? ps->want_model && (strcmp(tail, ps->want_model) == 0 ||
                                           (!ps->want_model[0] && !ps->model_line))
                      : !ps->want_model;
    ps->kind = chosen ? BC_SEC_MODEL : BC_SEC_OTHER_MODEL;
    if (chosen) {
        ps->model_line = ps->line;
        c->lanes[0].line = ps->line;
    }
    return 1;
}

/* A new [lane.NAME] with the name `copy`, which it owns from here on (and
 * frees if it cannot keep it): the lane, and its entry in stage_lines
 * (0: no stage key yet), which must stay parallel to the lanes. */
static int bc_add_lane(bc_parser *ps, char *copy) {
    berth_config *c = ps->c;
    bc_lane *l;
    void *g = bc_grow(c->lanes, c->n_lanes, sizeof *c->lanes);
    if (g) c->lanes = g;
    void *h = g ? bc_grow(ps->stage_lines, ps->n_stage_lines, sizeof *ps->stage_lines)
                : NULL;
    if (!h) {
        free(copy);
        return bc_oom(ps);
    }
    ps->stage_lines = h;
    ps->stage_lines[ps->n_stage_lines++] = 0;
    l = &c->lanes[c->n_lanes++];
    memset(l, 0, sizeof *l);
    if (!ps->lanes_line) ps->lanes_line = ps->line;
    l->name = copy;
    l->line = ps->line;
    ps->sec_index = c->n_lanes - 1;
    ps->kind = BC_SEC_LANE;
    return 1;
}

/* A new [backend.NAME] with the name `copy`, which it owns from here on
 * (and frees if it cannot keep it): the options one backend is given. */
static int bc_add_backend(bc_parser *ps, char *copy) {
    berth_config *c = ps->c;
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
    return 1;
}

/* [lane.NAME] (lane set) or [backend.NAME]: one check of NAME for both,
 * so that the user gets the same message for either; then the lane or the
 * backend is added. */
static int bc_enter_named(bc_parser *ps, const char *name, const char *tail, int lane) {
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
    return lane ? bc_add_lane(ps, copy) : bc_add_backend(ps, copy);
}

/* [inputs.NAME]: NAME is an input of the graph as the graph spells it,
 * so any name without whitespace is taken, not just a plain one. */
static int bc_enter_inputs(bc_parser *ps, const char *name, const char *tail) {
    berth_config *c = ps->c;
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

/* Make the section `name` (as written between the brackets) current. */
static int bc_enter(bc_parser *ps, const char *name) {
    const char *dot = strchr(name, '.');
    size_t head = dot ? (size_t)(dot - name) : strlen(name);
    const char *tail = dot ? dot + 1 : NULL;
#define BC_IS(word) (head == strlen(word) && strncmp(name, word, head) == 0)
    if (BC_IS("model")) return bc_enter_model(ps, name, tail);
    if (!tail && BC_IS("backend")) {
        ps->kind = BC_SEC_BACKEND;
        return 1;
    }
    if (!tail && BC_IS("buckets")) {
        ps->kind = BC_SEC_BUCKETS;
        return 1;
    }
    if (!tail && BC_IS("limits")) {
        ps->kind = BC_SEC_LIMITS;
        return 1;
    }
    if (!tail && BC_IS("serve")) {
        ps->kind = BC_SEC_SERVE;
        return 1;
    }
    if (!tail && BC_IS("cache")) {
        ps->kind = BC_SEC_CACHE;
        return 1;
    }
    if (BC_IS("lane") || BC_IS("backend")) return bc_enter_named(ps, name, tail, BC_IS("lane"));
    if (BC_IS("inputs")) return bc_enter_inputs(ps, name, tail);
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

/* inih's scan (find_chars_or_comment in its ini.c, with inline comments
 * on and ";" their prefix): the first byte of s[0, n) that is in `chars`
 * or is a ';' after whitespace; n if none. */
static size_t bc_scan(const char *s, size_t n, const char *chars) {
    int was_space = 0;
    size_t i = 0;
    for (; i < n; i++) {
        if (chars && strchr(chars, s[i])) break;
        if (was_space && s[i] == ';') break;
        was_space = bc_space(s[i]);
    }
    return i;
}

/* A line longer than inih's buffer, trimmed and not a section header:
 * split it as inih splits a "key = value" or "key: value" line, keep key
 * and value in ps and put in buf what inih is to see instead: a blank
 * line for a comment, a stand-in "key=value" for a pair, and a line
 * without '=' or ':' for a line without them, which inih reports as a
 * syntax error. Returns 0 after bc_fail. */
static int bc_long_line(bc_parser *ps, const char *s, size_t len, char *buf) {
    if (s[0] == ';' || s[0] == '#') { /* inih's start-of-line comment */
        buf[0] = '\0';
        return 1;
    }
    size_t sep = bc_scan(s, len, "=:");
    if (sep == len || (s[sep] != '=' && s[sep] != ':')) {
        strcpy(buf, BC_STAND_IN_KEY);
        return 1;
    }
    size_t klen = sep;
    while (klen && bc_space(s[klen - 1])) klen--;
    const char *v = s + sep + 1;
    size_t vlen = bc_scan(v, len - sep - 1, NULL);
    while (vlen && bc_space(*v)) v++, vlen--;
    while (vlen && bc_space(v[vlen - 1])) vlen--;
    ps->long_key = bc_strndup(s, klen);
    ps->long_value = bc_strndup(v, vlen);
    if (!ps->long_key || !ps->long_value) return bc_oom(ps);
    ps->stand_in = 1;
    strcpy(buf, BC_STAND_IN_KEY "=" BC_STAND_IN_VALUE);
    return 1;
}

/* inih's reader: one physical line per call, so inih's line count and
 * ours agree. */
static char *bc_read_line(char *buf, int cap, void *stream) {
    bc_parser *ps = stream;
    ps->stand_in = 0;
    free(ps->long_key);
    free(ps->long_value);
    ps->long_key = ps->long_value = NULL;
    if (ps->failed || !*ps->next || cap < (int)sizeof BC_STAND_IN_KEY "=" BC_STAND_IN_VALUE)
        return NULL;
    const char *s = ps->next;
    const char *e = strchr(s, '\n');
    if (!e) e = s + strlen(s);
    ps->next = *e ? e + 1 : e;
    ps->line++;
    if (ps->line == 1 && e - s >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) s += 3;
    while (s < e && bc_space(*s)) s++;
    while (e > s && bc_space(e[-1])) e--;
    size_t len = (size_t)(e - s);
    if (len && s[0] == '[') {
        if (!bc_section_line(ps, s, len)) return NULL;
        len = 0;
    }
    if (len > (size_t)cap - 1) return bc_long_line(ps, s, len, buf) ? buf : NULL;
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
    if (c->n_models && ps->lanes_line)
        return bc_fail(ps, ps->lanes_line,
                       "lanes run other graphs on [model]'s weights; a file with [model.NAME] sections "
                       "describes separate models and has no lanes");
    if (!ps->model_line) {
        char names[256] = "";
        size_t used = 0;
        for (uint32_t i = 0; i < c->n_models && used < sizeof names; i++)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", c->models[i]);
        if (ps->want_model)
            return bc_fail(ps, 1, "no section [model.%s] (%s%s)", ps->want_model,
                           c->n_models ? "the file's models: " : "the file has no [model.NAME] sections",
                           names);
        if (c->n_models)
            return bc_fail(ps, 1,
                           "the file describes the models %s ([model.NAME] sections) and no [model]: "
                           "name the one to open (berth run --model NAME, berth_open_options.model)",
                           names);
        return bc_fail(ps, ps->line ? ps->line : 1,
                       "missing section [model] (expected graph and weights keys in it)");
    }
    if (ps->want_model && !(c->model = strdup(ps->want_model[0] ? ps->want_model : c->models[0])))
        return bc_oom(ps);
    int safetensors = bc_has_suffix(c->weights, ".safetensors");
    if (!safetensors && !c->manifest)
        return bc_fail(ps, ps->model_line,
                       "[model%s%s]: missing key 'manifest' (weights '%.*s' on line %u is not a "
                       ".safetensors file, so a JSON manifest must describe its tensors)",
                       c->model ? "." : "", c->model ? c->model : "", bc_show(strlen(c->weights)), c->weights,
                       ps->weights_line);
    if (safetensors && c->manifest)
        return bc_fail(ps, ps->manifest_line,
                       "[model%s%s] manifest: a .safetensors file describes its own tensors; "
                       "expected no manifest with weights '%.*s'",
                       c->model ? "." : "", c->model ? c->model : "", bc_show(strlen(c->weights)), c->weights);
    for (uint32_t i = 0; i < c->n_lanes; i++) {
        const bc_lane *l = &c->lanes[i];
        if (l->stage && !berth_config_stage(c, l->stage))
            return bc_fail(ps, ps->stage_lines[i],
                           "[%s%s%s] stage: no stage '%s' in [buckets]%s", i ? "lane." : "model",
                           i ? "" : c->model ? "." : "", i ? l->name : c->model ? c->model : "", l->stage,
                           c->n_stages ? "" : " (the file has no [buckets] section)");
    }
    if (ps->n_model_use) { /* the model's own use replaces [backend] use */
        for (uint32_t i = 0; i < c->n_use; i++) free(c->use[i]);
        free(c->use);
        c->use = ps->model_use;
        c->n_use = ps->n_model_use;
        ps->model_use = NULL;
        ps->n_model_use = 0;
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

berth_config *berth_config_parse_model(const char *path, const char *text, const char *model,
                                      berth_error *err) {
    berth_error scratch;
    if (!err) err = &scratch;
    if (!path) path = "<config>";
    if (!text) {
        berth_errorf(err, "%s: no text to parse", path);
        return NULL;
    }
    berth_config *c = calloc(1, sizeof *c);
    bc_parser ps = {.c = c, .file = path, .err = err, .next = text, .want_model = model};
    /* lanes[0] is [model], whether or not the file has it yet; counts are
     * set with each allocation so a free of the half-made config is exact */
    if (c && (c->lanes = calloc(1, sizeof *c->lanes))) c->n_lanes = 1;
    if (c) c->verify_atol = c->verify_rtol = BERTH_VERIFY_DEFAULT_TOL;
    if (!c || !c->lanes || !(c->path = strdup(path)) || !(c->dir = berth_path_dir(path)) ||
        !(c->lanes[0].name = strdup("main")) ||
        !(ps.stage_lines = calloc(1, sizeof *ps.stage_lines))) {
        berth_errorf(err, "%s: out of memory reading the config", path);
        berth_config_free(c);
        return NULL;
    }
    ps.n_stage_lines = 1;
    int bad = ini_parse_stream(bc_read_line, &ps, bc_on_key, &ps);
    free(ps.long_key);
    free(ps.long_value);
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
    for (uint32_t i = 0; i < ps.n_model_use; i++) free(ps.model_use[i]);
    free(ps.model_use);
    if (ps.failed) {
        berth_config_free(c);
        return NULL;
    }
    return c;
}

berth_config *berth_config_parse(const char *path, const char *text, berth_error *err) {
    return berth_config_parse_model(path, text, NULL, err);
}

berth_config *berth_config_load(const char *path, berth_error *err) { return berth_config_load_model(path, NULL, err); }

berth_config *berth_config_load_model(const char *path, const char *model, berth_error *err) {
    berth_error scratch;
    if (!err) err = &scratch;
    if (!path) {
        berth_errorf(err, "berth_config_load: expected a file name, found NULL");
        return NULL;
    }
    FILE *f = berth_fopen_regular(path, "config", err);
    if (!f) return NULL;
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
    berth_config *c = berth_config_parse_model(path, buf, model, err);
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
    for (uint32_t i = 0; i < c->n_models; i++) free(c->models[i]);
    free(c->models);
    free(c->model);
    for (uint32_t i = 0; i < c->n_use; i++) free(c->use[i]);
    free(c->use);
    for (uint32_t i = 0; i < c->n_path; i++) free(c->path_dirs[i]);
    free(c->path_dirs);
    free(c->verify);
    free(c->cache_dir);
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
