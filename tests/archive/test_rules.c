/* One case per SafeTensors header rule: a hand-built malformed file and
 * the part of the message that names the rule. Run with a rule name to
 * run that case alone (ctest registers one test per rule), or with no
 * argument to run them all. */
#include <stdint.h>

#include "archive.h"
#include "check.h"
#include "util.h"

typedef struct rule_case {
    const char *rule;
    const char *header; /* NULL: the case builds its own bytes */
    size_t data_len;
    const char *expect[3];
} rule_case;

#define W1 "{\"w1\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]}"

static const rule_case cases[] = {
    {"utf8", "{\"w\xff\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
     {"not valid UTF-8 at header byte 3"}},
    {"utf8_overlong", "{\"\xc0\xaf\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
     {"not valid UTF-8 at header byte 2"}},
    {"utf8_surrogate", "{\"\xed\xa0\x80\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]}}",
     1, {"not valid UTF-8"}},
    {"json_syntax", "{\"w1\":{\"dtype\":\"F32\",}}", 0, {"header is not valid JSON", "at byte 21: expected a string key"}},
    {"json_trailing", "{} {}", 0, {"not valid JSON", "text after the end"}},
    {"json_not_object", "[1,2]", 0, {"header is an array, expected one JSON object"}},
    {"json_depth", NULL, 0, {"nesting deeper than 64"}},
    {"json_escape_nul", "{\"a\\u0000b\":{}}", 0, {"\\u0000 in a string"}},
    {"meta_not_object", "{\"__metadata__\":[\"x\"]}", 0,
     {"__metadata__ is an array, expected an object of strings"}},
    {"meta_not_string", "{\"__metadata__\":{\"k\":1}}", 0,
     {"__metadata__ 'k' is a number, expected a string"}},
    {"entry_not_object", "{\"w\":3}", 0, {"tensor 'w': entry is a number, expected an object"}},
    {"dtype_unknown", "{\"w\":{\"dtype\":\"F8\",\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
     {"tensor 'w': unknown dtype 'F8'"}},
    {"dtype_missing", "{\"w\":{\"shape\":[1],\"data_offsets\":[0,1]}}", 1,
     {"tensor 'w': dtype is missing"}},
    {"shape_negative", "{\"w\":{\"dtype\":\"U8\",\"shape\":[2,-1],\"data_offsets\":[0,2]}}", 2,
     {"tensor 'w': shape[1] is -1, expected a non-negative integer"}},
    {"shape_fraction", "{\"w\":{\"dtype\":\"U8\",\"shape\":[2.0],\"data_offsets\":[0,2]}}", 2,
     {"tensor 'w': shape[0] is 2.0"}},
    {"shape_not_array", "{\"w\":{\"dtype\":\"U8\",\"shape\":2,\"data_offsets\":[0,2]}}", 2,
     {"tensor 'w': shape is a number, expected an array"}},
    {"shape_rank", "{\"w\":{\"dtype\":\"U8\",\"shape\":[1,1,1,1,1,1,1,1,1],\"data_offsets\":[0,1]}}",
     1, {"tensor 'w': shape has rank 9, more than the limit 8"}},
    {"offsets_form", "{\"w\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0]}}", 1,
     {"tensor 'w': data_offsets must be [begin, end]"}},
    {"offsets_huge",
     "{\"w\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,18446744073709551616]}}", 1,
     {"tensor 'w': data_offsets must be [begin, end] of non-negative integers"}},
    {"offsets_reversed", "{\"w\":{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[4,0]}}", 4,
     {"tensor 'w': data_offsets [4, 0] end before they begin"}},
    {"offsets_past_data", "{\"w\":{\"dtype\":\"U8\",\"shape\":[400],\"data_offsets\":[0,400]}}", 8,
     {"tensor 'w': data_offsets [0, 400] run past the 8 bytes of data"}},
    {"span_mismatch", "{\"w1\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,12]}}", 12,
     {"tensor 'w1': data_offsets [0, 12] span 12 bytes but F32[2,2] needs 16"}},
    {"span_overflow",
     "{\"w\":{\"dtype\":\"F64\",\"shape\":[4294967296,4294967296,2],\"data_offsets\":[0,0]}}", 0,
     {"tensor 'w': F64[4294967296,4294967296,2] has more bytes than 64 bits can count"}},
    {"tile_first_gap", "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[4,8]}}", 8,
     {"tensor 'a': the first tensor starts at data byte 4, not 0: a gap"}},
    {"tile_gap", "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
                 "\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[8,12]}}", 12,
     {"tensor 'b': starts at data byte 8 but 'a' ends at 4: a gap of 4 bytes"}},
    {"tile_overlap", "{\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]},"
                     "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 12,
     {"tensor 'b': starts at data byte 4, inside 'a' which ends at 8: an overlap"}},
    {"tile_short_of_end", W1 "}", 20,
     {"tensors end at data byte 16 but the file holds 20 bytes of data after the header"}},
    {"duplicate_name", "{\"w\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[0,1]},"
                       "\"w\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}", 2,
     {"tensor 'w': duplicate tensor name"}},
    {"meta_twice", "{\"__metadata__\":{},\"__metadata__\":{}}", 0, {"__metadata__ appears twice"}},
};

/* Rules about the 8-byte length prefix need bytes no header text gives. */
static void length_rules(const char *dir, const char *only) {
    berth_error err;
    const char *p = tu_path(dir, "model.safetensors");
    if (!only || !strcmp(only, "file_too_short")) {
        tu_write(p, "\x05\0\0\0\0", 5);
        CHECK(!berth_archive_open(p, NULL, &err));
        CHECK_CONTAINS(err.msg, "model.safetensors: file is 5 bytes, too short for the 8-byte");
    }
    if (!only || !strcmp(only, "header_limit")) {
        tu_write_st_len(p, 100000001ull, "{}", 2, NULL, 0);
        CHECK(!berth_archive_open(p, NULL, &err));
        CHECK_CONTAINS(err.msg, "model.safetensors: header length 100000001 is over the limit of "
                                "100000000 bytes");
    }
    if (!only || !strcmp(only, "header_past_end")) {
        tu_write_st_len(p, 64, "{}", 2, NULL, 4);
        CHECK(!berth_archive_open(p, NULL, &err));
        CHECK_CONTAINS(err.msg, "model.safetensors: header length 64 runs past the end of the "
                                "file (14 bytes)");
    }
    if (!only || !strcmp(only, "valid_minimal")) {
        /* The boundaries: an empty header object with padding, no data. */
        tu_write_st(p, "{}      ", NULL, 0);
        berth_archive *a = berth_archive_open(p, NULL, &err);
        CHECK(a != NULL);
        if (a) CHECK(berth_archive_count(a) == 0);
        berth_archive_close(a);
        tu_write_st(p, W1 ",\"z\":{\"dtype\":\"BOOL\",\"shape\":[0],\"data_offsets\":[16,16]}}",
                    NULL, 16);
        a = berth_archive_open(p, NULL, &err);
        CHECK(a != NULL);
        if (a) {
            CHECK(berth_archive_count(a) == 2);
            CHECK(berth_archive_entry(a, 0)->bytes == 16);
            CHECK(berth_archive_entry(a, 1)->bytes == 0);
        }
        berth_archive_close(a);
    }
}

static int run_case(const char *dir, const rule_case *c) {
    berth_error err;
    const char *p = tu_path(dir, "model.safetensors");
    if (c->header) {
        tu_write_st(p, c->header, NULL, c->data_len);
    } else {
        /* json_depth: metadata nested 100 deep. */
        char h[512];
        size_t n = (size_t)snprintf(h, sizeof h, "{\"__metadata__\":{\"k\":");
        for (int i = 0; i < 100; i++) h[n++] = '[';
        for (int i = 0; i < 100; i++) h[n++] = ']';
        h[n++] = '}', h[n++] = '}', h[n] = 0;
        tu_write_st(p, h, NULL, 0);
    }
    memset(err.msg, 0, sizeof err.msg);
    berth_archive *a = berth_archive_open(p, NULL, &err);
    CHECK(a == NULL);
    berth_archive_close(a);
    CHECK_CONTAINS(err.msg, "model.safetensors: ");
    for (int i = 0; i < 3 && c->expect[i]; i++) CHECK_CONTAINS(err.msg, c->expect[i]);
    return 1;
}

int main(int argc, char **argv) {
    const char *only = argc > 1 ? argv[1] : NULL;
    char *dir = tu_tempdir();
    int ran = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!only || !strcmp(only, cases[i].rule)) ran += run_case(dir, &cases[i]);
    const char *length_cases[] = {"file_too_short", "header_limit", "header_past_end",
                                  "valid_minimal"};
    for (size_t i = 0; i < 4; i++)
        if (!only || !strcmp(only, length_cases[i])) ran++;
    length_rules(dir, only);
    tu_rmdir(dir);
    if (!ran) {
        fprintf(stderr, "unknown rule '%s'\n", only);
        return 1;
    }
    return check_exit();
}
