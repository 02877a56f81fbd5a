/* What config.c and config_values.c share: the parser state and the
 * helpers both use. Not part of any public interface. */
#ifndef BERTH_CONFIG_INTERNAL_H
#define BERTH_CONFIG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "config.h"

/* Bucket dims are element counts; 2^40 is far above any real batch or
 * length and keeps products of a few dims inside int64. */
#define BC_MAX_DIM ((int64_t)1 << 40)
/* [limits] max_memory_mb: 2^40 MiB is 2^60 bytes, far above any machine,
 * and keeps the limit in bytes inside uint64. */
#define BC_MAX_MEMORY_MB ((uint64_t)1 << 40)
/* How much of a value an error message quotes. */
#define BC_SHOW 80

typedef enum bc_kind {
    BC_SEC_NONE,
    BC_SEC_MODEL,
    BC_SEC_LANE,
    BC_SEC_BACKEND,
    BC_SEC_BACKEND_OPTS,
    BC_SEC_BUCKETS,
    BC_SEC_INPUT,
    BC_SEC_LIMITS,
    BC_SEC_SERVE,
    BC_SEC_CACHE,
    BC_SEC_OTHER_MODEL /* a [model.NAME] not being opened: checked, not kept */
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
    /* A line too long for inih's buffer: the reader splits it as inih
     * would, keeps its key and value here and hands inih a short stand-in
     * line; the key handler reads these instead (stand_in set) */
    int stand_in;
    char *long_key, *long_value;
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
    const char *want_model; /* the [model.NAME] to open; NULL: [model] */
    uint32_t plain_model_line, lanes_line; /* [model] and the first [lane.NAME], 0: none */
    /* the selected [model.NAME]'s use, which replaces [backend] use */
    char **model_use;
    uint32_t n_model_use;
} bc_parser;

/* Arrays grow by doubling whenever the count reaches a power of two, so
 * the count alone tells the capacity. Returns the (possibly moved) array
 * or NULL with the old one untouched. */
void *bc_grow(void *arr, uint32_t n, size_t elem);
char *bc_strndup(const char *s, size_t n);
/* Record the first error as "FILE:LINE: message"; returns 0 so handlers
 * can `return bc_fail(...)`. */
int bc_fail(bc_parser *ps, uint32_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int bc_oom(bc_parser *ps);

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

static inline int bc_space(char ch) {
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\v' || ch == '\f';
}

static inline int bc_alnum(char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9');
}

/* Names of backends, lanes and stages: letters, digits, '_' and '-', so
 * a backend name can never be mistaken for a path. */
static inline int bc_plain(const char *s, size_t n) {
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++)
        if (!bc_alnum(s[i]) && s[i] != '_' && s[i] != '-') return 0;
    return 1;
}

/* Dim names as graphs spell them: a plain name that may also hold '.'. */
static inline int bc_dim_name(const char *s, size_t n) {
    if (n == 0) return 0;
    for (size_t i = 0; i < n; i++)
        if (!bc_alnum(s[i]) && s[i] != '_' && s[i] != '-' && s[i] != '.') return 0;
    return 1;
}

static inline int bc_show(size_t n) { return n > BC_SHOW ? BC_SHOW : (int)n; }

/* Value grammars (config_values.c); each returns 1, or 0 after bc_fail. */
/* [backend] use = a, b/c.so */
int bc_parse_use(bc_parser *ps, const char *value, char ***list, uint32_t *n_list);
/* [backend] path = DIR:DIR */
int bc_parse_dirs(bc_parser *ps, const char *value);
/* [buckets] NAME = dim=v dim=v | dim=v dim=v */
int bc_parse_stage(bc_parser *ps, const char *name, const char *value);

#endif
