/* Internals of the .webnn reader, shared by its lexer (webnn_lex.c), its
 * parser (webnn_parse.c) and the checker in graph.c. Nothing outside
 * those three files includes this header. */
#ifndef BERTH_WEBNN_H
#define BERTH_WEBNN_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "graph.h"

/* Limits that keep a hostile file from exhausting memory or the stack. */
#define BG_MAX_FILE_BYTES ((size_t)256 << 20)
#define BG_MAX_IDENT 1024
#define BG_MAX_STRING 65536
#define BG_MAX_DEPTH 64
#define BG_MAX_VALUES 1000000u
#define BG_MAX_NODES 1000000u
#define BG_MAX_OPTIONS 64      /* key=value options of one node */
#define BG_MAX_OBJECT_KEYS 64  /* duplicate keys are found by a linear scan */
#define BG_MAX_DIM ((int64_t)1 << 40)

typedef enum bg_tok_kind {
    BG_TOK_ERROR = 0, /* the lexer wrote a message */
    BG_TOK_EOF,
    BG_TOK_IDENT,
    BG_TOK_NUMBER,
    BG_TOK_STRING,
    BG_TOK_PUNCT      /* one of { } ( ) [ ] , ; : = @ in `punct` */
} bg_tok_kind;

typedef struct bg_token {
    bg_tok_kind kind;
    char punct;
    const char *text; /* the raw lexeme inside the source */
    size_t len;
    uint32_t line, col;
    /* NUMBER */
    double num;
    int64_t i;
    int is_int;       /* written without fraction or exponent, fits int64 */
    /* STRING: decoded, NUL-terminated, in the arena */
    const char *str;
} bg_token;

typedef struct bg_lexer {
    const char *path;
    const char *p, *end;
    uint32_t line, col;
    berth_arena *arena;
    berth_error *err;
} bg_lexer;

void bg_lex_init(bg_lexer *lx, const char *path, const char *text, size_t len, berth_arena *arena,
                 berth_error *err);
/* The next token; BG_TOK_ERROR with err filled on a malformed one. */
bg_token bg_lex_next(bg_lexer *lx);
/* A short quotation of a token for "found ..." in messages. */
void bg_tok_describe(const bg_token *t, char *buf, size_t cap);

/* A name the parser saw used but could not resolve yet: blocks come in any
 * order, so every use is resolved by the checker once the file is read. */
typedef enum bg_ref_kind {
    BG_REF_OPERAND = 1, /* a node's positional operand */
    BG_REF_OPTION = 2,  /* an identifier inside a node option or literal */
    BG_REF_OUTPUT = 3   /* an entry of the outputs block */
} bg_ref_kind;

typedef struct bg_ref {
    bg_ref_kind kind;
    const char *name;
    uint32_t line, col;
    uint32_t node;  /* the using node; outputs: unused */
    int32_t *slot;  /* where the resolved value index is written */
} bg_ref;

/* Resolve every reference and refuse a malformed graph: a name defined
 * twice, a use before definition, an undefined name, an unknown op.
 * Returns 0 or -1 with err set. */
int bg_check(berth_graph *g, bg_ref *refs, size_t n_refs, berth_error *err);

#endif
