/* The .webnn lexer: turns bytes into tokens with line and column, and
 * refuses anything malformed at the byte where it starts. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "webnn.h"

void bg_lex_init(bg_lexer *lx, const char *path, const char *text, size_t len, berth_arena *arena,
                 berth_error *err) {
    lx->path = path;
    lx->p = text;
    lx->end = text + len;
    lx->line = 1;
    lx->col = 1;
    lx->arena = arena;
    lx->err = err;
}

static int is_ident_start(int c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_ident_char(int c) { return is_ident_start(c) || is_digit(c); }

static void advance(bg_lexer *lx, size_t n) {
    for (size_t k = 0; k < n; k++, lx->p++) {
        if (*lx->p == '\n') {
            lx->line++;
            lx->col = 1;
        } else {
            lx->col++;
        }
    }
}

static void skip_space_and_comments(bg_lexer *lx) {
    while (lx->p < lx->end) {
        char c = *lx->p;
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            advance(lx, 1);
        } else if (c == '#') {
            while (lx->p < lx->end && *lx->p != '\n') advance(lx, 1);
        } else {
            break;
        }
    }
}

static bg_token lex_error(bg_lexer *lx, const bg_token *t, const char *what) {
    berth_errorf(lx->err, "%s:%u:%u: %s", lx->path, t->line, t->col, what);
    bg_token e = *t;
    e.kind = BG_TOK_ERROR;
    return e;
}

static bg_token lex_number(bg_lexer *lx, bg_token t) {
    const char *s = lx->p, *q = s;
    int integral = 1;
    if (q < lx->end && *q == '-') q++;
    while (q < lx->end && is_digit(*q)) q++;
    if (q + 1 < lx->end && *q == '.' && is_digit(q[1])) {
        integral = 0;
        q++;
        while (q < lx->end && is_digit(*q)) q++;
    }
    if (q < lx->end && (*q == 'e' || *q == 'E')) {
        const char *r = q + 1;
        if (r < lx->end && (*r == '+' || *r == '-')) r++;
        if (r < lx->end && is_digit(*r)) {
            integral = 0;
            q = r;
            while (q < lx->end && is_digit(*q)) q++;
        }
    }
    t.kind = BG_TOK_NUMBER;
    t.text = s;
    t.len = (size_t)(q - s);
    /* "12abc" or "1.e5" would otherwise split silently into two tokens. */
    if (q < lx->end && (is_ident_char(*q) || *q == '.')) {
        const char *r = q;
        while (r < lx->end && (is_ident_char(*r) || *r == '.') && r - s < 40) r++;
        char msg[96];
        snprintf(msg, sizeof msg, "malformed number '%.*s'", (int)(r - s), s);
        return lex_error(lx, &t, msg);
    }
    if (t.len > 400) return lex_error(lx, &t, "number literal longer than 400 characters");
    char buf[401];
    memcpy(buf, s, t.len);
    buf[t.len] = 0;
    /* Integers are read exactly; doubles round large ones. */
    if (integral) {
        /* magnitudes up to 2^63 so that INT64_MIN is exact too */
        const uint64_t limit = (uint64_t)INT64_MAX + 1;
        uint64_t v = 0;
        int neg = buf[0] == '-', ok = 1;
        for (const char *d = buf + neg; *d && ok; d++) {
            unsigned digit = (unsigned)(*d - '0');
            if (v > (limit - digit) / 10) ok = 0;
            else v = v * 10 + digit;
        }
        if (ok && (neg || v < limit)) {
            t.is_int = 1;
            t.i = !neg ? (int64_t)v : v == limit ? INT64_MIN : -(int64_t)v;
            t.num = (double)t.i;
            advance(lx, t.len);
            return t;
        }
    }
    /* strtod honours the process locale; a locale whose decimal point is
     * not '.' stops early, and that is refused rather than misread. */
    char *stop;
    errno = 0;
    t.num = strtod(buf, &stop);
    if (*stop) {
        char msg[96];
        snprintf(msg, sizeof msg, "number '%.40s' cannot be read in this process's locale", buf);
        return lex_error(lx, &t, msg);
    }
    /* a literal that rounds to infinity or to zero has lost its value */
    if (isinf(t.num) || (errno == ERANGE && t.num == 0)) {
        char msg[96];
        snprintf(msg, sizeof msg, "number '%.40s' is out of range for a double", buf);
        return lex_error(lx, &t, msg);
    }
    advance(lx, t.len);
    return t;
}

static bg_token lex_string(bg_lexer *lx, bg_token t) {
    const char *s = lx->p, *q = s + 1;
    size_t out = 0;
    for (;;) {
        if (q >= lx->end || *q == '\n' || *q == '\r')
            return lex_error(lx, &t, "unterminated string: expected '\"' before the end of the line");
        unsigned char c = (unsigned char)*q;
        if (c == '"') break;
        if (c < 0x20) {
            char msg[64];
            snprintf(msg, sizeof msg, "control byte 0x%02X inside a string", c);
            return lex_error(lx, &t, msg);
        }
        if (c == '\\') {
            if (q + 1 >= lx->end || (q[1] != '"' && q[1] != '\\')) {
                char msg[96];
                if (q + 1 < lx->end && (unsigned char)q[1] >= 0x20 && (unsigned char)q[1] < 0x7f)
                    snprintf(msg, sizeof msg, "unknown escape '\\%c' in string: expected '\\\"' or '\\\\'",
                             q[1]);
                else
                    snprintf(msg, sizeof msg, "unknown escape in string: expected '\\\"' or '\\\\'");
                return lex_error(lx, &t, msg);
            }
            q++;
        }
        q++;
        if (++out > BG_MAX_STRING) return lex_error(lx, &t, "string longer than 65536 bytes");
    }
    char *d = berth_arena_alloc(lx->arena, out + 1);
    if (!d) return lex_error(lx, &t, "out of memory reading a string");
    size_t k = 0;
    for (const char *r = s + 1; r < q; r++) {
        if (*r == '\\') r++;
        d[k++] = *r;
    }
    d[k] = 0;
    t.kind = BG_TOK_STRING;
    t.text = s;
    t.len = (size_t)(q + 1 - s);
    t.str = d;
    advance(lx, t.len);
    return t;
}

bg_token bg_lex_next(bg_lexer *lx) {
    skip_space_and_comments(lx);
    bg_token t;
    memset(&t, 0, sizeof t);
    t.line = lx->line;
    t.col = lx->col;
    t.text = lx->p;
    if (lx->p >= lx->end) {
        t.kind = BG_TOK_EOF;
        return t;
    }
    unsigned char c = (unsigned char)*lx->p;
    if (is_ident_start(c)) {
        const char *q = lx->p;
        while (q < lx->end && is_ident_char(*q)) q++;
        t.kind = BG_TOK_IDENT;
        t.len = (size_t)(q - lx->p);
        if (t.len > BG_MAX_IDENT) return lex_error(lx, &t, "identifier longer than 1024 characters");
        advance(lx, t.len);
        return t;
    }
    if (is_digit(c) || (c == '-' && lx->p + 1 < lx->end && is_digit(lx->p[1]))) return lex_number(lx, t);
    if (c == '"') return lex_string(lx, t);
    if (strchr("{}()[],;:=@", c) && c) {
        t.kind = BG_TOK_PUNCT;
        t.punct = (char)c;
        t.len = 1;
        advance(lx, 1);
        return t;
    }
    char msg[64];
    if (c > 0x20 && c < 0x7f)
        snprintf(msg, sizeof msg, "unexpected character '%c'", c);
    else
        snprintf(msg, sizeof msg, "unexpected byte 0x%02X", c);
    return lex_error(lx, &t, msg);
}

void bg_tok_describe(const bg_token *t, char *buf, size_t cap) {
    if (t->kind == BG_TOK_EOF) {
        snprintf(buf, cap, "end of file");
        return;
    }
    int n = t->len > 40 ? 40 : (int)t->len;
    snprintf(buf, cap, "'%.*s%s'", n, t->text, t->len > 40 ? "..." : "");
}
