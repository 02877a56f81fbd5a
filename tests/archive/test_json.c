/* The bounded JSON reader on its own: exact integers, limits, UTF-8. */
#include "check.h"
#include "json.h"

static bj_value *parse(berth_arena *a, const char *s, char *msg) {
    return bj_parse(a, s, strlen(s), &bj_default_limits, msg, 256);
}

int main(void) {
    berth_arena *a = berth_arena_new();
    char msg[256];

    bj_value *v = parse(a, " {\"a\": [1, 18446744073709551615, -3, 2.5, 1e3, 9007199254740993],"
                           " \"s\": \"x\\u00e9\\ud83d\\ude00\\n\", \"t\": true, \"n\": null} ", msg);
    CHECK(v && v->type == BJ_OBJECT && v->count == 4);
    const bj_value *arr = bj_member(v, "a");
    CHECK(arr && arr->type == BJ_ARRAY && arr->count == 6);
    if (arr && arr->count == 6) {
        const bj_value *x = arr->first;
        CHECK(x->is_uint && x->u == 1);
        x = x->next;
        CHECK(x->is_uint && x->u == UINT64_MAX);
        x = x->next;
        CHECK(!x->is_uint && !strcmp(x->str, "-3"));
        x = x->next;
        CHECK(!x->is_uint && !strcmp(x->str, "2.5"));
        x = x->next;
        CHECK(!x->is_uint);
        x = x->next; /* 2^53 + 1: a double would round it to 2^53 */
        CHECK(x->is_uint && x->u == 9007199254740993ull);
    }
    const bj_value *s = bj_member(v, "s");
    /* x, U+00E9 as C3 A9, U+1F600 as F0 9F 98 80, newline */
    CHECK(s && s->len == 8 && !memcmp(s->str, "x\xc3\xa9\xf0\x9f\x98\x80\n", 8));
    CHECK(bj_member(v, "t")->type == BJ_BOOL && bj_member(v, "t")->boolean == 1);
    CHECK(bj_member(v, "n")->type == BJ_NULL);
    CHECK(bj_member(v, "missing") == NULL);

    /* One past 2^64 - 1 is a number, but not an exact u64. */
    v = parse(a, "18446744073709551616", msg);
    CHECK(v && v->type == BJ_NUMBER && !v->is_uint);

    CHECK(!parse(a, "[1,]", msg));
    CHECK_CONTAINS(msg, "at byte 3: unexpected character ']'");
    CHECK(!parse(a, "01", msg));
    CHECK_CONTAINS(msg, "leading zero");
    CHECK(!parse(a, "\"abc", msg));
    CHECK_CONTAINS(msg, "unterminated string");
    CHECK(!parse(a, "\"a\tb\"", msg));
    CHECK_CONTAINS(msg, "control character 0x09");
    CHECK(!parse(a, "\"\\ud800x\"", msg));
    CHECK_CONTAINS(msg, "without its low half");
    CHECK(!parse(a, "\"\\q\"", msg));
    CHECK_CONTAINS(msg, "bad escape");
    CHECK(!parse(a, "{\"a\" 1}", msg));
    CHECK_CONTAINS(msg, "expected ':'");
    CHECK(!parse(a, "", msg));
    CHECK_CONTAINS(msg, "unexpected end");
    CHECK(!parse(a, "\"\xe2\x82\"", msg));
    CHECK_CONTAINS(msg, "at byte 1: invalid UTF-8");

    /* Limits: depth, values, string bytes. */
    bj_limits lim = {3, 10, 4};
    CHECK(bj_parse(a, "[[[]]]", 6, &lim, msg, sizeof msg) != NULL);
    CHECK(!bj_parse(a, "[[[[]]]]", 8, &lim, msg, sizeof msg));
    CHECK_CONTAINS(msg, "nesting deeper than 3 levels");
    CHECK(!bj_parse(a, "[1,2,3,4,5,6,7,8,9,10]", 22, &lim, msg, sizeof msg));
    CHECK_CONTAINS(msg, "more than 10 values");
    CHECK(bj_parse(a, "\"abcd\"", 6, &lim, msg, sizeof msg) != NULL);
    CHECK(!bj_parse(a, "\"abcde\"", 7, &lim, msg, sizeof msg));
    CHECK_CONTAINS(msg, "string of 5 bytes");

    /* UTF-8 validation at its edges. */
    CHECK(bj_utf8_invalid_at("\xf4\x8f\xbf\xbf", 4) == 4); /* U+10FFFF */
    CHECK(bj_utf8_invalid_at("a\xf4\x90\x80\x80", 5) == 1); /* above U+10FFFF */
    CHECK(bj_utf8_invalid_at("ab\xe0\x9f\xbf", 5) == 2);   /* overlong */
    CHECK(bj_utf8_invalid_at("\xed\x9f\xbf", 3) == 3);     /* U+D7FF */
    CHECK(bj_utf8_invalid_at("\xed\xa0\x80", 3) == 0);     /* surrogate */
    CHECK(bj_utf8_invalid_at("\xc3", 1) == 0);             /* truncated */

    berth_arena_free(a);
    return check_exit();
}
