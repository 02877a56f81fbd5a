/* A small, bounded JSON reader for headers that come from files.
 *
 * The whole text must be valid UTF-8 and hold exactly one value. Nesting
 * depth, the number of values and the length of every string are bounded
 * by the caller, so a hostile header cannot exhaust the stack or memory.
 * Integers are parsed exactly (no detour through double) because tensor
 * offsets above 2^53 must not silently round. Values live in an arena and
 * die with it. */
#ifndef BERTH_JSON_H
#define BERTH_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"

typedef enum bj_type {
    BJ_NULL = 0,
    BJ_BOOL,
    BJ_NUMBER,
    BJ_STRING,
    BJ_ARRAY,
    BJ_OBJECT
} bj_type;

typedef struct bj_value bj_value;
struct bj_value {
    bj_type type;
    size_t pos;       /* byte offset of the value in the text, for messages */
    const char *key;  /* when a member of an object: its key (decoded) */
    /* STRING: decoded text, NUL-terminated (\u0000 is refused);
     * NUMBER: the literal as written, NUL-terminated. */
    const char *str;
    size_t len;
    int boolean;
    int is_uint;      /* NUMBER: an integer >= 0 that fits in 64 bits */
    uint64_t u;       /*   ... its exact value */
    size_t count;     /* ARRAY/OBJECT: number of children */
    bj_value *first;  /* ARRAY/OBJECT: children in text order */
    bj_value *next;
};

typedef struct bj_limits {
    uint32_t max_depth;   /* arrays/objects nested deeper are refused */
    size_t max_values;    /* total values in the document */
    size_t max_string;    /* bytes of one decoded string or key */
} bj_limits;

/* The limits the archive uses for headers and manifests. */
extern const bj_limits bj_default_limits;

/* Parse `len` bytes of `text`. Returns the root value, or NULL with a
 * one-line reason ("at byte N: ...") in msg[0..cap). */
bj_value *bj_parse(berth_arena *arena, const char *text, size_t len, const bj_limits *lim,
                   char *msg, size_t cap);

/* Offset of the first byte that is not valid UTF-8 (overlong forms,
 * surrogates and code points above U+10FFFF included), or len if valid. */
size_t bj_utf8_invalid_at(const char *text, size_t len);

/* The member `key` of an object, or NULL (also when v is not an object).
 * With duplicate keys the first wins; callers that care check for them. */
const bj_value *bj_member(const bj_value *obj, const char *key);

/* A short name for a value's type, for messages: "a string", "an array". */
const char *bj_type_name(bj_type t);

#endif
