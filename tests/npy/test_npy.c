/* The .npy reader behind `berth run --input NAME=FILE.npy`, on files
 * written byte by byte here: one ctest per case (the case is argv[2]).
 * Each bad file must be refused with its one-line message, leave the
 * tensor empty and never ask for the data's memory before the file is
 * known to hold it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "largest_alloc.h"
#include "npy.h"

static char dir[256];

static const char *path_of(const char *name) {
    static char p[320];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return p;
}

/* Version 1.0 preamble, the header text as given, then `data`. */
static size_t build(unsigned char *out, const char *header, const void *data, size_t n) {
    size_t h = strlen(header);
    memcpy(out, "\x93NUMPY\x01\x00", 8);
    out[8] = (unsigned char)(h & 0xff);
    out[9] = (unsigned char)(h >> 8);
    memcpy(out + 10, header, h);
    if (n) memcpy(out + 10 + h, data, n);
    return 10 + h + n;
}

static void write_file(const char *name, const void *bytes, size_t n) {
    FILE *f = fopen(path_of(name), "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(bytes, 1, n, f) == n);
    fclose(f);
}

/* Largest allocation a refusal may make: the header copy and stdio's
 * buffer, nowhere near any data size the cases claim. */
#define REFUSAL_ALLOC_MAX (64u * 1024u)

/* Write the file, read it both from disk and from memory, expect the
 * refusal `why` (after "PATH: ") with status want. */
static void expect_refused(const char *name, const unsigned char *bytes, size_t n,
                           berth_status want, const char *why) {
    write_file(name, bytes, n);
    char msg[600];
    berth_tensor t;
    berth_error err;
    memset(&t, 0xab, sizeof t);
    largest_alloc_start();
    berth_status st = berth_npy_read(path_of(name), &t, &err);
    size_t largest = largest_alloc_stop();
    CHECK(st == want);
    snprintf(msg, sizeof msg, "%s: %s", path_of(name), why);
    CHECK_MSG(err.msg, msg);
    CHECK(t.data == NULL && t.bytes == 0 && t.rank == 0);
    if (largest >= REFUSAL_ALLOC_MAX)
        fprintf(stderr, "largest allocation while refusing %s: %zu bytes\n", name, largest);
    CHECK(largest > 0); /* stdio's buffer at least: the counter is live */
    CHECK(largest < REFUSAL_ALLOC_MAX);

    memset(&t, 0xab, sizeof t);
    largest_alloc_start();
    st = berth_npy_parse("in-memory.npy", bytes, n, &t, &err);
    largest = largest_alloc_stop();
    CHECK(st == want);
    snprintf(msg, sizeof msg, "in-memory.npy: %s", why);
    CHECK_MSG(err.msg, msg);
    CHECK(t.data == NULL && t.bytes == 0 && t.rank == 0);
    CHECK(largest < REFUSAL_ALLOC_MAX);
}

static const float six[6] = {1, 2, 3, 4, 5, 6};

static void case_valid(void) {
    unsigned char b[256];
    size_t n = build(b, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", six,
                     sizeof six);
    write_file("valid.npy", b, n);
    berth_tensor t;
    berth_error err;
    CHECK(berth_npy_read(path_of("valid.npy"), &t, &err) == BERTH_OK);
    CHECK(t.dtype == BERTH_DTYPE_F32 && t.rank == 2 && t.dims[0] == 2 && t.dims[1] == 3);
    CHECK(t.bytes == sizeof six && t.capacity == sizeof six);
    CHECK(t.data && memcmp(t.data, six, sizeof six) == 0);
    free(t.data);
    CHECK(berth_npy_parse("valid", b, n, &t, &err) == BERTH_OK);
    CHECK(t.rank == 2 && t.bytes == sizeof six && t.data && memcmp(t.data, six, sizeof six) == 0);
    free(t.data);

    /* A scalar and an empty array: one element, and none. */
    n = build(b, "{'descr': '|u1', 'fortran_order': False, 'shape': ()}", "\x07", 1);
    CHECK(berth_npy_parse("scalar", b, n, &t, &err) == BERTH_OK);
    CHECK(t.rank == 0 && t.bytes == 1 && t.data && *(unsigned char *)t.data == 7);
    free(t.data);
    n = build(b, "{'descr': '<i8', 'fortran_order': False, 'shape': (0, 5)}", NULL, 0);
    CHECK(berth_npy_parse("empty", b, n, &t, &err) == BERTH_OK);
    CHECK(t.rank == 2 && t.dims[0] == 0 && t.bytes == 0 && t.data != NULL);
    free(t.data);
}

/* 2^32 * 2^32 elements overflow 64 bits: once read as a 0-byte tensor,
 * because the byte count's overflow flag was overwritten. */
static void case_shape_overflow(void) {
    unsigned char b[256];
    size_t n = build(b, "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
                     NULL, 0);
    expect_refused("overflow.npy", b, n, BERTH_ERR_INVALID,
                   "npy shape (4294967296, 4294967296) of f32 is too large: its byte size overflows 64 bits");
    /* Elements that fit but bytes that do not: 2^62 f32 values. */
    n = build(b, "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904,)}", NULL, 0);
    expect_refused("overflow_bytes.npy", b, n, BERTH_ERR_INVALID,
                   "npy shape (4611686018427387904,) of f32 is too large: its byte size overflows 64 bits");
}

/* 2^31 f32 values promise 8 GiB; the file holds 16 bytes of data. */
static void case_claims_8gb(void) {
    unsigned char b[256];
    size_t n = build(b, "{'descr': '<f4', 'fortran_order': False, 'shape': (2147483648,), }", six, 16);
    expect_refused("claims_8gb.npy", b, n, BERTH_ERR_INVALID,
                   "npy shape (2147483648,) of f32: expected 8589934592 bytes of data after the header, file has 16");
}

static void case_truncated(void) {
    unsigned char b[256];
    size_t n = build(b, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", six, sizeof six);
    expect_refused("truncated.npy", b, n - 5, BERTH_ERR_INVALID,
                   "npy shape (2, 3) of f32: expected 24 bytes of data after the header, file has 19");
    /* Cut inside the header itself. */
    expect_refused("header_cut.npy", b, 30, BERTH_ERR_INVALID,
                   "npy file is truncated: expected a 59-byte header, file has 20 bytes after the preamble");
}

static void case_trailing(void) {
    unsigned char b[256];
    size_t n = build(b, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", six, sizeof six);
    memcpy(b + n, "junk", 4);
    expect_refused("trailing.npy", b, n + 4, BERTH_ERR_INVALID,
                   "npy shape (2, 3) of f32: expected 24 bytes of data after the header, file has 28");
}

static void case_bad_dims(void) {
    unsigned char b[256];
    size_t n = build(b, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", six, sizeof six);
    expect_refused("negative.npy", b, n, BERTH_ERR_INVALID,
                   "npy shape dim 1 is negative, expected a size >= 0");
    n = build(b, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 1), }",
              NULL, 0);
    expect_refused("huge_dim.npy", b, n, BERTH_ERR_INVALID,
                   "npy shape dim 0 (99999999999999999999) does not fit 64 bits");
    n = build(b, "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1)}",
              six, 4);
    expect_refused("rank9.npy", b, n, BERTH_ERR_INVALID, "npy shape has more than 8 dims");
    n = build(b, "{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", six, sizeof six);
    expect_refused("no_comma.npy", b, n, BERTH_ERR_INVALID,
                   "npy shape is malformed, expected ',' or ')' at byte 53 of the header");
}

static void case_preamble(void) {
    static const unsigned char zip[] = "PK\x03\x04 a zip file";
    expect_refused("no_magic.npy", zip, sizeof zip - 1, BERTH_ERR_INVALID,
                   "not a .npy file (no \\x93NUMPY magic)");
    expect_refused("empty.npy", zip, 0, BERTH_ERR_INVALID, "not a .npy file (no \\x93NUMPY magic)");
    unsigned char b[256];
    size_t n = build(b, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", six, sizeof six);
    b[6] = 9;
    expect_refused("version9.npy", b, n, BERTH_ERR_INVALID,
                   "npy format version 9.0 is not one berth reads (1.0 to 3.0)");
    /* Version 2.0 with a 4-byte length of 16 MiB: refused, not read. */
    static const unsigned char big[] = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0, 0, 0, 1, '{', '}'};
    expect_refused("header_16m.npy", big, sizeof big, BERTH_ERR_INVALID,
                   "npy header of 16777216 bytes is larger than 1 MiB");
}

int main(int argc, char **argv) {
    snprintf(dir, sizeof dir, "%s", argc > 1 ? argv[1] : ".");
    const char *which = argc > 2 ? argv[2] : "";
    static const struct {
        const char *name;
        void (*run)(void);
    } cases[] = {{"valid", case_valid},         {"shape_overflow", case_shape_overflow},
                 {"claims_8gb", case_claims_8gb}, {"truncated", case_truncated},
                 {"trailing", case_trailing},   {"bad_dims", case_bad_dims},
                 {"preamble", case_preamble}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (!strcmp(which, cases[i].name)) {
            cases[i].run();
            return check_exit();
        }
    fprintf(stderr, "usage: test_npy DIR CASE (unknown case '%s')\n", which);
    return 2;
}
