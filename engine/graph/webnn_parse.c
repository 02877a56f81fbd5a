/* The .webnn parser: a recursive-descent reader of webnn-graph text (v1 and
 * v2) into a berth_graph. Every allocation comes from the graph's arena, so
 * an error anywhere unwinds by returning -1 and freeing one arena.
 *
 * Names are not resolved while reading: blocks may come in any order, so
 * each use is recorded as a bg_ref and the checker (graph.c) resolves them
 * all once the whole file has been read. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth/ops.h"
#include "dtype.h"
#include "util.h"
#include "webnn.h"

/* Real graphs bind a handful of dims (batch, sequence, height, width);
 * a small bound keeps the linear lookup cheap on hostile files. */
#define BG_MAX_SYMS 64

/* A growable array on the heap, for what the parser collects while it
 * reads. Whatever the graph keeps is copied into the arena at its exact
 * size, so the graph never carries the slack of doubling. */
typedef struct vec {
    void *data;
    size_t n, cap;
} vec;

typedef struct parser {
    bg_lexer lx;
    bg_token tok;
    berth_arena *a;
    berth_error *err;
    berth_graph *g;
    vec values, nodes, inputs, syms, sym_lines, refs;
    int32_t *outputs;
    size_t n_outputs;
    /* the node being read: its arguments, and which of them are options */
    vec args;
    uint32_t opts[BG_MAX_OPTIONS];
    uint32_t n_opts;
    /* items of the arrays and objects being read, innermost last */
    vec stack;
    vec bytes, names; /* the @bytes list, the outputs block */
} parser;

static int failv(parser *P, uint32_t line, uint32_t col, const char *fmt, va_list ap) {
    char what[BERTH_ERROR_CAP];
    vsnprintf(what, sizeof what, fmt, ap);
    berth_errorf(P->err, "%s:%u:%u: %s", P->g->path, line, col, what);
    return -1;
}

static int fail_at(parser *P, uint32_t line, uint32_t col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_at(parser *P, uint32_t line, uint32_t col, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    failv(P, line, col, fmt, ap);
    va_end(ap);
    return -1;
}

/* "expected WHAT, found TOKEN" at the current token. */
static int expected(parser *P, const char *what) {
    char found[64];
    bg_tok_describe(&P->tok, found, sizeof found);
    return fail_at(P, P->tok.line, P->tok.col, "expected %s, found %s", what, found);
}

static void *vec_push(parser *P, vec *v, size_t elem) {
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 16;
        void *d = cap <= SIZE_MAX / elem ? realloc(v->data, cap * elem) : NULL;
        if (!d) {
            fail_at(P, P->tok.line, P->tok.col, "out of memory");
            return NULL;
        }
        v->data = d;
        v->cap = cap;
    }
    void *slot = (char *)v->data + v->n * elem;
    memset(slot, 0, elem);
    v->n++;
    return slot;
}

/* Elements [from, n) of v, copied into the arena. */
static void *vec_keep(parser *P, const vec *v, size_t from, size_t elem) {
    size_t count = v->n - from;
    void *d = berth_arena_array(P->a, count, elem);
    if (!d) {
        fail_at(P, P->tok.line, P->tok.col, "out of memory");
        return NULL;
    }
    if (count) memcpy(d, (const char *)v->data + from * elem, count * elem);
    return d;
}

static int next(parser *P) {
    P->tok = bg_lex_next(&P->lx);
    return P->tok.kind == BG_TOK_ERROR ? -1 : 0;
}

static int is_punct(const parser *P, char c) { return P->tok.kind == BG_TOK_PUNCT && P->tok.punct == c; }

static int is_word(const parser *P, const char *w) {
    return P->tok.kind == BG_TOK_IDENT && P->tok.len == strlen(w) && !memcmp(P->tok.text, w, P->tok.len);
}

/* Consume punctuation `c` or fail with "expected 'c' CONTEXT, found ...". */
static int expect_punct(parser *P, char c, const char *context) {
    if (!is_punct(P, c)) {
        char what[160];
        snprintf(what, sizeof what, "'%c' %s", c, context);
        return expected(P, what);
    }
    return next(P);
}

static const char *tok_strdup(parser *P) {
    char *s = berth_arena_strndup(P->a, P->tok.text, P->tok.len);
    if (!s) fail_at(P, P->tok.line, P->tok.col, "out of memory");
    return s;
}

static int is_keyword(const parser *P) { return is_word(P, "true") || is_word(P, "false") || is_word(P, "null"); }

/* A value name being declared: an identifier that is not a literal keyword. */
static int parse_name(parser *P, const char *what, const char **name, uint32_t *line, uint32_t *col) {
    if (P->tok.kind != BG_TOK_IDENT || is_keyword(P)) return expected(P, what);
    *line = P->tok.line;
    *col = P->tok.col;
    if (!(*name = tok_strdup(P))) return -1;
    return next(P);
}

static bg_value *add_value(parser *P, const char *name, uint32_t line, uint32_t col, bg_value_kind kind) {
    if (P->values.n >= BG_MAX_VALUES) {
        fail_at(P, line, col, "more than %u values in one graph", BG_MAX_VALUES);
        return NULL;
    }
    bg_value *v = vec_push(P, &P->values, sizeof(bg_value));
    if (!v) return NULL;
    v->name = name;
    v->kind = kind;
    v->line = line;
    v->col = col;
    v->node = -1;
    return v;
}

static int push_ref(parser *P, bg_ref_kind kind, const char *name, uint32_t line, uint32_t col,
                    uint32_t node, int32_t *slot) {
    bg_ref *r = vec_push(P, &P->refs, sizeof(bg_ref));
    if (!r) return -1;
    r->kind = kind;
    r->name = name;
    r->line = line;
    r->col = col;
    r->node = node;
    r->slot = slot;
    *slot = -1;
    return 0;
}

/* ---- types and shapes ------------------------------------------------ */

static int parse_dtype(parser *P, berth_dtype *out) {
    static const char *what = "a dtype (f32, f16, i32, u32, i64, u64, i8, u8, i4, u4)";
    if (P->tok.kind != BG_TOK_IDENT || P->tok.len > 16) return expected(P, what);
    char name[17];
    memcpy(name, P->tok.text, P->tok.len);
    name[P->tok.len] = 0;
    if ((*out = berth_dtype_parse(name)) == BERTH_DTYPE_INVALID) return expected(P, what);
    return next(P);
}

static int parse_count(parser *P, int64_t lo, const char *what, int64_t *out) {
    if (P->tok.kind != BG_TOK_NUMBER || !P->tok.is_int || P->tok.i < lo || P->tok.i > BG_MAX_DIM)
        return expected(P, what);
    *out = P->tok.i;
    return next(P);
}

/* dyn("name", max): one symbol per name; every use must agree on max. */
static int parse_dyn(parser *P, bg_dim *d) {
    uint32_t line = P->tok.line, col = P->tok.col;
    if (P->g->version < 2)
        return fail_at(P, line, col, "dyn dims need a v2 graph, found dyn in a v1 graph");
    if (next(P) || expect_punct(P, '(', "after dyn")) return -1;
    if (P->tok.kind != BG_TOK_STRING || !P->tok.str[0]) return expected(P, "a dim name string after 'dyn('");
    const char *name = P->tok.str;
    if (next(P) || expect_punct(P, ',', "after the dyn name")) return -1;
    int64_t max = 0;
    if (parse_count(P, 1, "a dyn max between 1 and 2^40", &max)) return -1;
    if (expect_punct(P, ')', "to close dyn(")) return -1;
    bg_sym *syms = P->syms.data;
    for (size_t k = 0; k < P->syms.n; k++) {
        if (strcmp(syms[k].name, name)) continue;
        if (syms[k].max != max)
            return fail_at(P, line, col, "dyn \"%s\" has max %lld here but %lld at line %u", name,
                           (long long)max, (long long)syms[k].max, ((uint32_t *)P->sym_lines.data)[k]);
        d->sym = (int32_t)k;
        d->value = max;
        return 0;
    }
    if (P->syms.n >= BG_MAX_SYMS) return fail_at(P, line, col, "more than %d dyn dims", BG_MAX_SYMS);
    bg_sym *s = vec_push(P, &P->syms, sizeof(bg_sym));
    uint32_t *sl = s ? vec_push(P, &P->sym_lines, sizeof(uint32_t)) : NULL;
    if (!sl) return -1;
    s->name = name;
    s->max = max;
    *sl = line;
    d->sym = (int32_t)(P->syms.n - 1);
    d->value = max;
    return 0;
}

static int parse_shape(parser *P, bg_value *v, int allow_dyn) {
    if (expect_punct(P, '[', "to open the shape")) return -1;
    uint32_t line = P->tok.line, col = P->tok.col;
    int64_t elems = 1;
    while (!is_punct(P, ']')) {
        if (v->rank > 0 && expect_punct(P, ',', "between dims")) return -1;
        if (v->rank == BERTH_MAX_RANK)
            return fail_at(P, P->tok.line, P->tok.col, "shape of '%s' has more than %d dims", v->name,
                           BERTH_MAX_RANK);
        bg_dim *d = &v->dims[v->rank];
        d->sym = -1;
        if (is_word(P, "dyn") && allow_dyn) {
            if (parse_dyn(P, d)) return -1;
        } else if (is_word(P, "dyn")) {
            return fail_at(P, P->tok.line, P->tok.col, "dyn dims are allowed only in inputs, found one in const '%s'",
                           v->name);
        } else if (parse_count(P, 0, allow_dyn && P->g->version >= 2 ? "a dim (0 to 2^40) or dyn(...)"
                                                                     : "a dim (0 to 2^40)",
                               &d->value)) {
            return -1;
        }
        int ok = 1;
        elems = berth_mul_checked(elems, d->value, &ok);
        if (!ok) return fail_at(P, line, col, "shape of '%s' has more elements than fit in 64 bits", v->name);
        v->rank++;
    }
    return next(P);
}

/* ---- inputs and consts ------------------------------------------------ */

static int parse_inputs(parser *P) {
    while (!is_punct(P, '}')) {
        const char *name;
        uint32_t line, col;
        if (parse_name(P, "an input name or '}'", &name, &line, &col)) return -1;
        bg_value *v = add_value(P, name, line, col, BG_INPUT);
        if (!v) return -1;
        int32_t *in = vec_push(P, &P->inputs, sizeof(int32_t));
        if (!in) return -1;
        *in = (int32_t)(P->values.n - 1);
        if (expect_punct(P, ':', "after the input name") || parse_dtype(P, &v->dtype) || parse_shape(P, v, 1) ||
            expect_punct(P, ';', "after input declaration"))
            return -1;
    }
    return 0;
}

static int parse_bytes(parser *P, bg_value *v) {
    uint32_t line = P->tok.line, col = P->tok.col;
    if (expect_punct(P, '(', "after @bytes") || expect_punct(P, '[', "to open the @bytes list")) return -1;
    vec *bytes = &P->bytes;
    bytes->n = 0;
    while (!is_punct(P, ']')) {
        if (bytes->n > 0 && expect_punct(P, ',', "between bytes")) return -1;
        if (P->tok.kind != BG_TOK_NUMBER || !P->tok.is_int || P->tok.i < 0 || P->tok.i > 255)
            return expected(P, "a byte value 0..255");
        uint8_t *b = vec_push(P, bytes, 1);
        if (!b) return -1;
        *b = (uint8_t)P->tok.i;
        if (next(P)) return -1;
    }
    if (next(P) || expect_punct(P, ')', "to close @bytes(")) return -1;
    /* int64, not size_t: a 32-bit size_t would wrap a large shape's count. */
    int64_t count = 1;
    int ok = 1;
    for (uint32_t k = 0; k < v->rank; k++) count = berth_mul_checked(count, v->dims[k].value, &ok);
    size_t want = ok ? berth_dtype_bytes(v->dtype, (uint64_t)count, &ok) : 0;
    if (!ok) return fail_at(P, line, col, "size of const '%s' overflows", v->name);
    if (bytes->n != want)
        return fail_at(P, line, col, "@bytes of '%s' has %zu bytes, expected %zu for %s with %lld elements",
                       v->name, bytes->n, want, berth_dtype_name(v->dtype), (long long)count);
    v->init = BG_INIT_BYTES;
    v->n_bytes = bytes->n;
    return (v->bytes = vec_keep(P, bytes, 0, 1)) ? 0 : -1;
}

static int parse_const_init(parser *P, bg_value *v) {
    v->init = BG_INIT_WEIGHTS;
    v->ref = v->name;
    if (!is_punct(P, '@')) return 0;
    if (next(P)) return -1;
    if (is_word(P, "weights")) {
        if (next(P) || expect_punct(P, '(', "after @weights")) return -1;
        if (P->tok.kind != BG_TOK_STRING) return expected(P, "a weights reference string");
        v->ref = P->tok.str;
        return next(P) || expect_punct(P, ')', "to close @weights(");
    }
    if (is_word(P, "scalar")) {
        v->ref = NULL;
        if (next(P) || expect_punct(P, '(', "after @scalar")) return -1;
        if (P->tok.kind != BG_TOK_NUMBER) return expected(P, "a number in @scalar(...)");
        v->init = BG_INIT_SCALAR;
        v->scalar = P->tok.num;
        return next(P) || expect_punct(P, ')', "to close @scalar(");
    }
    if (is_word(P, "bytes")) {
        v->ref = NULL;
        return next(P) || parse_bytes(P, v);
    }
    return expected(P, "a const annotation (weights, scalar or bytes) after '@'");
}

static int parse_consts(parser *P) {
    while (!is_punct(P, '}')) {
        const char *name;
        uint32_t line, col;
        if (parse_name(P, "a const name or '}'", &name, &line, &col)) return -1;
        bg_value *v = add_value(P, name, line, col, BG_CONST);
        if (!v) return -1;
        if (expect_punct(P, ':', "after the const name") || parse_dtype(P, &v->dtype) || parse_shape(P, v, 0) ||
            parse_const_init(P, v) || expect_punct(P, ';', "after const declaration"))
            return -1;
    }
    return 0;
}

/* ---- literal values ---------------------------------------------------- */

/* While a node is being read, an IDENT attr keeps its source position in
 * fields IDENT does not use (line in `count`, column in `i`); finish_node
 * moves the position into a bg_ref and clears them. */
static int parse_value(parser *P, bg_attr *out, int depth);

/* Items are gathered on P->stack (nested literals stack above their
 * parent's items) and copied out at their exact count when the literal
 * closes. */
static int parse_items(parser *P, bg_attr *out, int depth, char close) {
    size_t mark = P->stack.n;
    int object = close == '}';
    while (!is_punct(P, close)) {
        size_t count = P->stack.n - mark;
        if (count > 0 && expect_punct(P, ',', object ? "or '}' in an object" : "or ']' in an array")) return -1;
        if (object && count >= BG_MAX_OBJECT_KEYS)
            return fail_at(P, P->tok.line, P->tok.col, "object has more than %d keys", BG_MAX_OBJECT_KEYS);
        if (count >= UINT32_MAX) return fail_at(P, P->tok.line, P->tok.col, "array has too many items");
        const char *key = NULL;
        if (object) {
            if (P->tok.kind == BG_TOK_STRING) key = P->tok.str;
            else if (P->tok.kind != BG_TOK_IDENT) return expected(P, "an object key");
            else if (!(key = tok_strdup(P))) return -1;
            for (size_t k = 0; k < count; k++)
                if (!strcmp(((const bg_attr *)P->stack.data)[mark + k].key, key))
                    return fail_at(P, P->tok.line, P->tok.col, "key '%s' appears twice in one object", key);
            if (next(P) || expect_punct(P, ':', "after the object key")) return -1;
        }
        bg_attr item;
        if (parse_value(P, &item, depth + 1)) return -1;
        item.key = key;
        bg_attr *slot = vec_push(P, &P->stack, sizeof(bg_attr));
        if (!slot) return -1;
        *slot = item;
    }
    out->kind = object ? BG_ATTR_OBJECT : BG_ATTR_ARRAY;
    out->count = (uint32_t)(P->stack.n - mark);
    out->items = vec_keep(P, &P->stack, mark, sizeof(bg_attr));
    P->stack.n = mark;
    return out->items ? next(P) : -1;
}

static int parse_value(parser *P, bg_attr *out, int depth) {
    memset(out, 0, sizeof *out);
    switch (P->tok.kind) {
    case BG_TOK_NUMBER:
        out->kind = BG_ATTR_NUMBER;
        out->num = P->tok.num;
        out->i = P->tok.i;
        out->is_int = P->tok.is_int;
        return next(P);
    case BG_TOK_STRING:
        out->kind = BG_ATTR_STRING;
        out->str = P->tok.str;
        return next(P);
    case BG_TOK_IDENT:
        if (is_word(P, "true") || is_word(P, "false")) {
            out->kind = BG_ATTR_BOOL;
            out->i = is_word(P, "true");
        } else if (is_word(P, "null")) {
            out->kind = BG_ATTR_NULL;
        } else {
            out->kind = BG_ATTR_IDENT;
            out->value = -1;
            out->count = P->tok.line;
            out->i = P->tok.col;
            if (!(out->str = tok_strdup(P))) return -1;
        }
        return next(P);
    case BG_TOK_PUNCT:
        if (P->tok.punct == '[' || P->tok.punct == '{') {
            if (depth > BG_MAX_DEPTH)
                return fail_at(P, P->tok.line, P->tok.col, "arrays and objects nested deeper than %d levels",
                               BG_MAX_DEPTH);
            char close = P->tok.punct == '[' ? ']' : '}';
            return next(P) || parse_items(P, out, depth, close);
        }
        break;
    default:
        break;
    }
    return expected(P, "a value (number, string, name, array or object)");
}

/* ---- nodes --------------------------------------------------------------- */

static int is_operand_list(const bg_attr *a) {
    if (a->kind != BG_ATTR_ARRAY || a->count == 0) return 0;
    for (uint32_t k = 0; k < a->count; k++)
        if (a->items[k].kind != BG_ATTR_IDENT) return 0;
    return 1;
}

/* Every identifier nested in a literal becomes a reference to resolve. */
static int ref_idents(parser *P, bg_attr *a, uint32_t node) {
    if (a->kind == BG_ATTR_IDENT) {
        uint32_t line = a->count, col = (uint32_t)a->i;
        a->count = 0;
        a->i = 0;
        return push_ref(P, BG_REF_OPTION, a->str, line, col, node, &a->value);
    }
    if (a->kind == BG_ATTR_ARRAY || a->kind == BG_ATTR_OBJECT)
        for (uint32_t k = 0; k < a->count; k++)
            if (ref_idents(P, &a->items[k], node)) return -1;
    return 0;
}

/* Split the arguments read into operands and attrs (graph.h's rules). */
static int finish_node(parser *P, bg_node *n, uint32_t node) {
    bg_attr *args = P->args.data;
    size_t n_in = 0, n_attr = 0;
    for (size_t k = 0; k < P->args.n; k++) {
        if (!args[k].key && args[k].kind == BG_ATTR_IDENT) n_in++;
        else if (!args[k].key && is_operand_list(&args[k])) n_in += args[k].count;
        else n_attr++;
    }
    n->inputs = berth_arena_array(P->a, n_in ? n_in : 1, sizeof(int32_t));
    n->attrs = berth_arena_array(P->a, n_attr ? n_attr : 1, sizeof(bg_attr));
    if (!n->inputs || !n->attrs) return fail_at(P, n->line, n->col, "out of memory");
    for (size_t k = 0; k < P->args.n; k++) {
        bg_attr *a = &args[k];
        if (!a->key && (a->kind == BG_ATTR_IDENT || is_operand_list(a))) {
            bg_attr *list = a->kind == BG_ATTR_IDENT ? a : a->items;
            uint32_t cnt = a->kind == BG_ATTR_IDENT ? 1 : a->count;
            for (uint32_t j = 0; j < cnt; j++)
                if (push_ref(P, BG_REF_OPERAND, list[j].str, list[j].count, (uint32_t)list[j].i, node,
                             &n->inputs[n->n_inputs++]))
                    return -1;
            continue;
        }
        if (!a->key) {
            char key[24];
            snprintf(key, sizeof key, "@%zu", k);
            if (!(a->key = berth_arena_strdup(P->a, key))) return fail_at(P, n->line, n->col, "out of memory");
        }
        n->attrs[n->n_attrs] = *a;
        if (ref_idents(P, &n->attrs[n->n_attrs], node)) return -1;
        n->n_attrs++;
    }
    return 0;
}

static int parse_arg(parser *P, const char *op) {
    bg_attr *arg = vec_push(P, &P->args, sizeof(bg_attr));
    if (!arg) return -1;
    if (P->tok.kind == BG_TOK_IDENT && !is_keyword(P)) {
        /* `key=value` or a positional operand: only the next token tells. */
        bg_token name = P->tok;
        const char *s = tok_strdup(P);
        if (!s || next(P)) return -1;
        if (!is_punct(P, '=')) {
            arg->kind = BG_ATTR_IDENT;
            arg->str = s;
            arg->value = -1;
            arg->count = name.line;
            arg->i = name.col;
            return 0;
        }
        bg_attr *prev = P->args.data;
        for (uint32_t k = 0; k < P->n_opts; k++)
            if (!strcmp(prev[P->opts[k]].key, s))
                return fail_at(P, name.line, name.col, "option '%s' given twice to '%s'", s, op);
        if (P->n_opts == BG_MAX_OPTIONS)
            return fail_at(P, name.line, name.col, "more than %d options given to '%s'", BG_MAX_OPTIONS, op);
        if (next(P) || parse_value(P, arg, 1)) return -1;
        arg->key = s;
        P->opts[P->n_opts++] = (uint32_t)(P->args.n - 1);
        return 0;
    }
    return parse_value(P, arg, 1);
}

static int parse_call(parser *P, bg_node *n, uint32_t node) {
    char ctx[96];
    snprintf(ctx, sizeof ctx, "or ')' in the arguments of '%.60s'", n->op);
    P->args.n = 0;
    P->n_opts = 0;
    while (!is_punct(P, ')')) {
        if (P->args.n > 0 && expect_punct(P, ',', ctx)) return -1;
        if (P->args.n >= UINT32_MAX / 2)
            return fail_at(P, P->tok.line, P->tok.col, "too many arguments to '%s'", n->op);
        if (parse_arg(P, n->op)) return -1;
    }
    if (next(P)) return -1;
    return finish_node(P, n, node);
}

/* berth's fused ops (berth/ops.def, kind FUSED) have dotted names the
 * lexer does not read as one identifier; written as a callee they are
 * refused here by name, with the reason, not as a stray '.'. */
static int refuse_fused(parser *P) {
    const char *s = P->tok.text, *e = s + P->tok.len;
    if (e >= P->lx.end || *e != '.') return 0;
    while (e < P->lx.end && (*e == '.' || *e == '_' || (*e >= '0' && *e <= '9') ||
                             (*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z')))
        e++;
    char name[64];
    size_t len = (size_t)(e - s);
    if (len >= sizeof name) return 0;
    memcpy(name, s, len);
    name[len] = 0;
    berth_op_id id = berth_op_find(name);
    if (id == BERTH_OP_UNKNOWN || berth_op_table()[id].kind != BERTH_OP_KIND_FUSED) return 0;
    return fail_at(P, P->tok.line, P->tok.col,
                   "op '%s' is made by the engine's fusion passes and cannot be written in a graph file", name);
}

static int parse_node(parser *P) {
    if (P->nodes.n >= BG_MAX_NODES)
        return fail_at(P, P->tok.line, P->tok.col, "more than %u nodes in one graph", BG_MAX_NODES);
    uint32_t node = (uint32_t)P->nodes.n;
    size_t first = P->values.n;
    int list = is_punct(P, '[');
    if (list && next(P)) return -1;
    do {
        const char *name;
        uint32_t line, col;
        if (P->values.n > first && expect_punct(P, ',', "or ']' between node outputs")) return -1;
        if (parse_name(P, list ? "an output name" : "a node output name or '}'", &name, &line, &col)) return -1;
        bg_value *v = add_value(P, name, line, col, BG_NODE_OUTPUT);
        if (!v) return -1;
        v->node = (int32_t)node;
    } while (list && !is_punct(P, ']'));
    if (list && next(P)) return -1;
    if (expect_punct(P, '=', "after the node outputs")) return -1;
    if (P->tok.kind != BG_TOK_IDENT || is_keyword(P)) return expected(P, "an op call or a value name after '='");

    bg_node *n = vec_push(P, &P->nodes, sizeof(bg_node));
    if (!n) return -1;
    n->line = P->tok.line;
    n->col = P->tok.col;
    n->n_outputs = (uint32_t)(P->values.n - first);
    n->outputs = berth_arena_array(P->a, n->n_outputs, sizeof(int32_t));
    if (!n->outputs) return fail_at(P, n->line, n->col, "out of memory");
    for (uint32_t k = 0; k < n->n_outputs; k++) n->outputs[k] = (int32_t)(first + k);
    if (refuse_fused(P)) return -1;
    const char *callee = tok_strdup(P);
    if (!callee || next(P)) return -1;
    if (is_punct(P, '(')) {
        n->op = callee;
        if (next(P) || parse_call(P, n, node)) return -1;
    } else {
        /* `x = y;` is an alias: an identity node keeps one way to read it. */
        n->op = "identity";
        n->n_inputs = 1;
        n->inputs = berth_arena_alloc(P->a, sizeof(int32_t));
        if (!n->inputs) return fail_at(P, n->line, n->col, "out of memory");
        if (push_ref(P, BG_REF_OPERAND, callee, n->line, n->col, node, &n->inputs[0])) return -1;
    }
    return expect_punct(P, ';', "after node");
}

static int parse_nodes(parser *P) {
    while (!is_punct(P, '}'))
        if (parse_node(P)) return -1;
    return 0;
}

static int parse_outputs(parser *P) {
    uint32_t line = P->tok.line, col = P->tok.col;
    vec *names = &P->names;
    names->n = 0;
    while (!is_punct(P, '}')) {
        bg_ref *r = vec_push(P, names, sizeof(bg_ref));
        if (!r) return -1;
        if (parse_name(P, "an output name or '}'", &r->name, &r->line, &r->col)) return -1;
        if ((is_punct(P, ',') || is_punct(P, ';')) && next(P)) return -1;
    }
    if (names->n == 0)
        return fail_at(P, P->tok.line, P->tok.col, "outputs block is empty: expected at least one output name");
    if (names->n > BG_MAX_VALUES) return fail_at(P, line, col, "more than %u outputs", BG_MAX_VALUES);
    int32_t *outs = berth_arena_array(P->a, names->n, sizeof(int32_t));
    if (!outs) return fail_at(P, line, col, "out of memory");
    for (size_t k = 0; k < names->n; k++) {
        bg_ref r = ((bg_ref *)names->data)[k]; /* push_ref may move names' storage */
        if (push_ref(P, BG_REF_OUTPUT, r.name, r.line, r.col, UINT32_MAX, &outs[k])) return -1;
    }
    P->outputs = outs;
    P->n_outputs = names->n;
    return 0;
}

/* ---- the graph ------------------------------------------------------------- */

static int parse_header(parser *P) {
    if (!is_word(P, "webnn_graph")) return expected(P, "'webnn_graph' at the start of the file");
    if (next(P)) return -1;
    if (P->tok.kind != BG_TOK_STRING) return expected(P, "the graph name string after 'webnn_graph'");
    P->g->name = P->tok.str;
    if (next(P)) return -1;
    if (is_word(P, "v1")) P->g->version = 1;
    else if (is_word(P, "v2")) P->g->version = 2;
    else return expected(P, "version 'v1' or 'v2' after the graph name");
    if (next(P)) return -1;
    while (is_punct(P, '@')) {
        if (next(P)) return -1;
        if (!is_word(P, "quantized")) return expected(P, "graph annotation 'quantized' after '@'");
        P->g->quantized = 1;
        if (next(P)) return -1;
    }
    return expect_punct(P, '{', "to open the graph");
}

static int parse_blocks(parser *P) {
    static const char *names[] = {"inputs", "consts", "nodes", "outputs"};
    static int (*const parse[])(parser *) = {parse_inputs, parse_consts, parse_nodes, parse_outputs};
    uint32_t seen[4] = {0};
    while (!is_punct(P, '}')) {
        int b = 0;
        while (b < 4 && !is_word(P, names[b])) b++;
        if (b == 4) return expected(P, "a block (inputs, consts, nodes, outputs) or '}'");
        if (seen[b])
            return fail_at(P, P->tok.line, P->tok.col, "'%s' block given twice (first at line %u)", names[b],
                           seen[b]);
        seen[b] = P->tok.line;
        char ctx[48];
        snprintf(ctx, sizeof ctx, "after '%s'", names[b]);
        if (next(P) || expect_punct(P, '{', ctx) || parse[b](P) || next(P)) return -1;
    }
    if (!seen[3])
        return fail_at(P, P->tok.line, P->tok.col, "graph has no outputs block: expected 'outputs { ... }'");
    if (next(P)) return -1;
    if (P->tok.kind != BG_TOK_EOF) return expected(P, "end of file after the graph's closing '}'");
    return 0;
}

berth_graph *berth_graph_parse(const char *path, const char *text, size_t len, berth_error *err) {
    if (!path) path = "<graph>";
    berth_arena *a = berth_arena_new();
    berth_graph *g = a ? berth_arena_alloc(a, sizeof *g) : NULL;
    if (g) g->path = berth_arena_strdup(a, path);
    if (!g || !g->path) {
        berth_errorf(err, "%s: out of memory parsing the graph", path);
        berth_arena_free(a);
        return NULL;
    }
    g->arena = a;
    g->digest = text ? berth_digest(0, text, len) : 0;
    if (!text || len > BG_MAX_FILE_BYTES) {
        berth_errorf(err, "%s: graph text is %s", path, text ? "larger than 256 MiB" : "missing");
        berth_arena_free(a);
        return NULL;
    }
    parser P;
    memset(&P, 0, sizeof P);
    P.a = a;
    P.err = err;
    P.g = g;
    bg_lex_init(&P.lx, g->path, text, len, a, err);
    int rc = next(&P) || parse_header(&P) || parse_blocks(&P) ? -1 : 0;
    if (!rc) {
        g->values = vec_keep(&P, &P.values, 0, sizeof(bg_value));
        g->nodes = vec_keep(&P, &P.nodes, 0, sizeof(bg_node));
        g->inputs = vec_keep(&P, &P.inputs, 0, sizeof(int32_t));
        g->syms = vec_keep(&P, &P.syms, 0, sizeof(bg_sym));
        rc = g->values && g->nodes && g->inputs && g->syms ? 0 : -1;
    }
    if (!rc) {
        g->n_values = (uint32_t)P.values.n;
        g->n_nodes = (uint32_t)P.nodes.n;
        g->n_inputs = (uint32_t)P.inputs.n;
        g->n_syms = (uint32_t)P.syms.n;
        g->outputs = P.outputs;
        g->n_outputs = (uint32_t)P.n_outputs;
        rc = bg_check(g, P.refs.data, P.refs.n, err);
    }
    vec *temps[] = {&P.values, &P.nodes, &P.inputs, &P.syms, &P.sym_lines, &P.refs, &P.args, &P.stack,
                    &P.bytes,  &P.names};
    for (size_t k = 0; k < sizeof temps / sizeof temps[0]; k++) free(temps[k]->data);
    if (rc) {
        berth_arena_free(a);
        return NULL;
    }
    return g;
}
