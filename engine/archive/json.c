#include "json.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Generous for real headers (a tensor entry is about 8 values, so 4M
 * values hold half a million tensors; metadata strings such as embedded
 * configs run to megabytes), yet a hostile 100 MB header of tiny values
 * costs at most about 4M * sizeof(bj_value) of arena. */
const bj_limits bj_default_limits = {64, 4u * 1024u * 1024u, 16u * 1024u * 1024u};

typedef struct parser {
    berth_arena *arena;
    const char *s;
    size_t len, at;
    const bj_limits *lim;
    size_t values;
    char *msg;
    size_t cap;
    int failed;
} parser;

static void fail(parser *p, size_t at, const char *fmt, ...) {
    if (p->failed) return;
    p->failed = 1;
    int n = snprintf(p->msg, p->cap, "at byte %zu: ", at);
    if (n < 0 || (size_t)n >= p->cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->msg + n, p->cap - (size_t)n, fmt, ap);
    va_end(ap);
}

size_t bj_utf8_invalid_at(const char *text, size_t len) {
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    while (i < len) {
        unsigned c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        unsigned lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
        if (c >= 0xC2 && c <= 0xDF) n = 1;
        else if (c == 0xE0) n = 2, lo = 0xA0;
        else if (c == 0xED) n = 2, hi = 0x9F; /* no UTF-16 surrogates */
        else if (c >= 0xE1 && c <= 0xEF) n = 2;
        else if (c == 0xF0) n = 3, lo = 0x90;
        else if (c >= 0xF1 && c <= 0xF3) n = 3;
        else if (c == 0xF4) n = 3, hi = 0x8F; /* nothing above U+10FFFF */
        else return i;
        if (len - i - 1 < n) return i;
        if (s[i + 1] < lo || s[i + 1] > hi) return i;
        for (size_t k = 2; k <= n; k++)
            if ((s[i + k] & 0xC0) != 0x80) return i;
        i += n + 1;
    }
    return len;
}

static void skip_ws(parser *p) {
    while (p->at < p->len) {
        char c = p->s[p->at];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->at++;
    }
}

static bj_value *new_value(parser *p, bj_type t) {
    if (p->values >= p->lim->max_values) {
        fail(p, p->at, "more than %zu values", p->lim->max_values);
        return NULL;
    }
    bj_value *v = berth_arena_alloc(p->arena, sizeof *v);
    if (!v) {
        fail(p, p->at, "out of memory");
        return NULL;
    }
    p->values++;
    v->type = t;
    v->pos = p->at;
    return v;
}

static int hex4(parser *p, size_t at, unsigned *out) {
    if (p->len - at < 4) return 0;
    unsigned v = 0;
    for (size_t i = 0; i < 4; i++) {
        char c = p->s[at + i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return 0;
    }
    *out = v;
    return 1;
}

static size_t put_utf8(char *d, unsigned cp) {
    if (cp < 0x80) {
        d[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        d[0] = (char)(0xC0 | (cp >> 6));
        d[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        d[0] = (char)(0xE0 | (cp >> 12));
        d[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        d[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    d[0] = (char)(0xF0 | (cp >> 18));
    d[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    d[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    d[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* A \uXXXX escape (p->at just past the 'u'), a surrogate pair taken
 * whole, written as UTF-8 at d + *n. 0 with the failure set. */
static int parse_unicode(parser *p, size_t esc, size_t end, char *d, size_t *n) {
    unsigned cp, lo;
    if (!hex4(p, p->at, &cp)) {
        fail(p, esc, "bad \\u escape");
        return 0;
    }
    p->at += 4;
    if (cp >= 0xDC00 && cp <= 0xDFFF) {
        fail(p, esc, "lone low surrogate \\u%04x", cp);
        return 0;
    }
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (p->at + 6 > end || p->s[p->at] != '\\' || p->s[p->at + 1] != 'u' || !hex4(p, p->at + 2, &lo) ||
            lo < 0xDC00 || lo > 0xDFFF) {
            fail(p, esc, "high surrogate \\u%04x without its low half", cp);
            return 0;
        }
        p->at += 6;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    if (cp == 0) {
        /* Names and values become C strings; a hidden NUL would make two
         * different keys compare equal. */
        fail(p, esc, "\\u0000 in a string");
        return 0;
    }
    *n += put_utf8(d + *n, cp);
    return 1;
}

/* Decodes a string starting at the opening quote. Escapes only shrink
 * text (\uXXXX is 6 bytes for at most 3 of UTF-8; a surrogate pair is 12
 * for 4), so the raw span bounds the decoded size. */
static const char *parse_string(parser *p, size_t *out_len) {
    size_t start = ++p->at, end = start;
    while (end < p->len && p->s[end] != '"') {
        if (p->s[end] == '\\') end++;
        end++;
    }
    if (end >= p->len) {
        fail(p, start - 1, "unterminated string");
        return NULL;
    }
    char *d = berth_arena_alloc(p->arena, end - start + 1);
    if (!d) {
        fail(p, start, "out of memory");
        return NULL;
    }
    size_t n = 0;
    while (p->at < end) {
        unsigned char c = (unsigned char)p->s[p->at];
        if (c < 0x20) {
            fail(p, p->at, "control character 0x%02x in a string", c);
            return NULL;
        }
        if (c != '\\') {
            d[n++] = (char)c;
            p->at++;
            continue;
        }
        size_t esc = p->at;
        char e = p->s[p->at + 1];
        p->at += 2;
        switch (e) {
        case '"': d[n++] = '"'; break;
        case '\\': d[n++] = '\\'; break;
        case '/': d[n++] = '/'; break;
        case 'b': d[n++] = '\b'; break;
        case 'f': d[n++] = '\f'; break;
        case 'n': d[n++] = '\n'; break;
        case 'r': d[n++] = '\r'; break;
        case 't': d[n++] = '\t'; break;
        case 'u':
            if (!parse_unicode(p, esc, end, d, &n)) return NULL;
            break;
        default:
            fail(p, esc, "bad escape '\\%c'", e);
            return NULL;
        }
    }
    p->at = end + 1;
    if (n > p->lim->max_string) {
        fail(p, start - 1, "string of %zu bytes, more than the limit %zu", n, p->lim->max_string);
        return NULL;
    }
    d[n] = 0;
    *out_len = n;
    return d;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

static bj_value *parse_number(parser *p) {
    bj_value *v = new_value(p, BJ_NUMBER);
    if (!v) return NULL;
    size_t start = p->at, i = p->at;
    int neg = 0, integral = 1;
    if (i < p->len && p->s[i] == '-') neg = 1, i++;
    if (i >= p->len || !is_digit(p->s[i])) {
        fail(p, start, "bad number");
        return NULL;
    }
    if (p->s[i] == '0' && i + 1 < p->len && is_digit(p->s[i + 1])) {
        fail(p, start, "number with a leading zero");
        return NULL;
    }
    size_t digits = i;
    while (i < p->len && is_digit(p->s[i])) i++;
    size_t digits_end = i;
    if (i < p->len && p->s[i] == '.') {
        integral = 0;
        if (++i >= p->len || !is_digit(p->s[i])) {
            fail(p, start, "bad number: no digit after '.'");
            return NULL;
        }
        while (i < p->len && is_digit(p->s[i])) i++;
    }
    if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E')) {
        integral = 0;
        i++;
        if (i < p->len && (p->s[i] == '+' || p->s[i] == '-')) i++;
        if (i >= p->len || !is_digit(p->s[i])) {
            fail(p, start, "bad number: no digit in the exponent");
            return NULL;
        }
        while (i < p->len && is_digit(p->s[i])) i++;
    }
    if (i - start > 64) {
        fail(p, start, "number literal longer than 64 characters");
        return NULL;
    }
    if (integral && !neg) {
        uint64_t u = 0;
        int fits = 1;
        for (size_t k = digits; k < digits_end; k++) {
            unsigned d = (unsigned)(p->s[k] - '0');
            if (u > (UINT64_MAX - d) / 10) {
                fits = 0;
                break;
            }
            u = u * 10 + d;
        }
        v->is_uint = fits;
        v->u = fits ? u : 0;
    }
    char *text = berth_arena_strndup(p->arena, p->s + start, i - start);
    if (!text) {
        fail(p, start, "out of memory");
        return NULL;
    }
    v->str = text;
    v->len = i - start;
    p->at = i;
    return v;
}

static int literal(parser *p, const char *word) {
    size_t n = strlen(word);
    if (p->len - p->at < n || memcmp(p->s + p->at, word, n)) return 0;
    p->at += n;
    return 1;
}

static bj_value *parse_value(parser *p, uint32_t depth);

static bj_value *parse_container(parser *p, uint32_t depth, int object) {
    if (depth >= p->lim->max_depth) {
        fail(p, p->at, "nesting deeper than %u levels", p->lim->max_depth);
        return NULL;
    }
    bj_value *v = new_value(p, object ? BJ_OBJECT : BJ_ARRAY);
    if (!v) return NULL;
    char close = object ? '}' : ']';
    bj_value **tail = &v->first;
    p->at++;
    skip_ws(p);
    if (p->at < p->len && p->s[p->at] == close) {
        p->at++;
        return v;
    }
    for (;;) {
        const char *key = NULL;
        if (object) {
            skip_ws(p);
            if (p->at >= p->len || p->s[p->at] != '"') {
                fail(p, p->at, "expected a string key in the object");
                return NULL;
            }
            size_t klen;
            key = parse_string(p, &klen);
            if (!key) return NULL;
            skip_ws(p);
            if (p->at >= p->len || p->s[p->at] != ':') {
                fail(p, p->at, "expected ':' after the key \"%s\"", key);
                return NULL;
            }
            p->at++;
        }
        bj_value *child = parse_value(p, depth + 1);
        if (!child) return NULL;
        child->key = key;
        *tail = child;
        tail = &child->next;
        v->count++;
        skip_ws(p);
        if (p->at < p->len && p->s[p->at] == ',') {
            p->at++;
            continue;
        }
        if (p->at < p->len && p->s[p->at] == close) {
            p->at++;
            return v;
        }
        fail(p, p->at, "expected ',' or '%c'", close);
        return NULL;
    }
}

static bj_value *parse_value(parser *p, uint32_t depth) {
    skip_ws(p);
    if (p->at >= p->len) {
        fail(p, p->at, "unexpected end of text");
        return NULL;
    }
    char c = p->s[p->at];
    if (c == '{' || c == '[') return parse_container(p, depth, c == '{');
    if (c == '"') {
        bj_value *v = new_value(p, BJ_STRING);
        if (!v) return NULL;
        v->str = parse_string(p, &v->len);
        return v->str ? v : NULL;
    }
    if (c == '-' || is_digit(c)) return parse_number(p);
    size_t at = p->at;
    if (literal(p, "true") || literal(p, "false")) {
        bj_value *v = new_value(p, BJ_BOOL);
        if (v) v->pos = at, v->boolean = p->s[at] == 't';
        return v;
    }
    if (literal(p, "null")) {
        bj_value *v = new_value(p, BJ_NULL);
        if (v) v->pos = at;
        return v;
    }
    fail(p, at, "unexpected character '%c'", c);
    return NULL;
}

bj_value *bj_parse(berth_arena *arena, const char *text, size_t len, const bj_limits *lim,
                   char *msg, size_t cap) {
    parser p = {arena, text, len, 0, lim ? lim : &bj_default_limits, 0, msg, cap, 0};
    size_t bad = bj_utf8_invalid_at(text, len);
    if (bad < len) {
        fail(&p, bad, "invalid UTF-8 (byte 0x%02x)", (unsigned char)text[bad]);
        return NULL;
    }
    bj_value *root = parse_value(&p, 0);
    if (!root) return NULL;
    skip_ws(&p);
    if (p.at != len) {
        fail(&p, p.at, "text after the end of the JSON value");
        return NULL;
    }
    return root;
}

const bj_value *bj_member(const bj_value *obj, const char *key) {
    if (!obj || obj->type != BJ_OBJECT) return NULL;
    for (const bj_value *m = obj->first; m; m = m->next)
        if (!strcmp(m->key, key)) return m;
    return NULL;
}

const char *bj_type_name(bj_type t) {
    switch (t) {
    case BJ_NULL: return "null";
    case BJ_BOOL: return "a boolean";
    case BJ_NUMBER: return "a number";
    case BJ_STRING: return "a string";
    case BJ_ARRAY: return "an array";
    case BJ_OBJECT: return "an object";
    }
    return "?";
}
