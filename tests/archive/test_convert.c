/* Conversion on the way to the backend: BF16 widened to f32 bit-exactly,
 * packed 4-bit with its marker, BOOL feeding u8, and every refusal. */
#include <stdint.h>

#include "archive.h"
#include "check.h"
#include "fake_backend.h"
#include "util.h"

/* Packs 4-bit values two per byte, low nibble first; returns the bytes. */
static size_t pack4(const int *v, size_t n, unsigned char *out) {
    memset(out, 0, n / 2 + 1);
    for (size_t i = 0; i < n; i++) out[i / 2] |= (unsigned char)((v[i] & 0xF) << (4 * (i % 2)));
    return n / 2 + n % 2;
}

static berth_status stream(berth_archive *a, const berth_weight_request *r, uint32_t n,
                           const berth_backend *be, berth_error *err) {
    berth_weights *w = NULL;
    fake_reset();
    berth_status st = berth_archive_stream(a, r, n, be, NULL, &fake_host, &w, NULL, err);
    if (w) be->free_weights(w);
    return st;
}

static void bf16_case(const char *dir, const berth_backend *be, int dest) {
    /* Sign, zero, one, a fraction, infinity, a NaN, a subnormal, the max. */
    const uint16_t bits[] = {0x8000, 0x0000, 0x3F80, 0xBEAA, 0x7F80, 0x7FC1, 0x0001, 0x7F7F, 0xC2F7};
    const size_t n = sizeof bits / sizeof bits[0];
    unsigned char raw[2 * 9];
    for (size_t i = 0; i < n; i++) raw[2 * i] = bits[i] & 0xFF, raw[2 * i + 1] = bits[i] >> 8;
    /* A one-byte tensor first puts the BF16 data at an odd offset. */
    unsigned char pad = 9;
    berth_st_tensor t[2] = {{"pad", BA_U8, 1, {1}, &pad, 1}, {"h", BA_BF16, 2, {3, 3}, raw, 18}};
    const char *path = tu_path(dir, "bf16.safetensors");
    berth_error err;
    CHECK(berth_st_write(path, t, 2, NULL, &err) == 0);
    berth_archive *a = berth_archive_open(path, NULL, &err);
    CHECK(a != NULL);
    if (!a) return;
    int64_t d[] = {3, 3};
    berth_weight_request r = fake_req("h", BERTH_DTYPE_F32, 0, 2, d);
    berth_weights *w = NULL;
    fake_reset();
    if (dest) F.dest_for[0] = "h";
    CHECK(berth_archive_stream(a, &r, 1, be, NULL, &fake_host, &w, NULL, &err) == BERTH_OK);
    const fake_tensor *h = fake_find("h");
    CHECK(h && h->bytes == 36 && h->dtype == BERTH_DTYPE_F32);
    CHECK(h && h->flags == (dest ? BERTH_UPLOAD_IN_PLACE : BERTH_UPLOAD_GIVEN));
    CHECK(F.info.total_bytes == 36 && F.info.largest_bytes == 36);
    for (size_t i = 0; h && i < n; i++) {
        uint32_t want = (uint32_t)bits[i] << 16, got;
        memcpy(&got, h->copy + 4 * i, 4);
        CHECK(got == want);
    }
    if (w) be->free_weights(w);
    /* BF16 feeds only f32; a bf16 tensor declared f16 is a mismatch. */
    r.dtype = BERTH_DTYPE_F16;
    CHECK(stream(a, &r, 1, be, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "tensor 'h' is BF16[3,3] in the archive but const 'h' declares "
                            "f16[3,3]: dtype mismatch");
    berth_archive_close(a);
}

int main(void) {
    char *dir = tu_tempdir();
    berth_error err;
    bf16_case(dir, &fake_backend_nodest, 0);
    bf16_case(dir, &fake_backend, 1);

    /* Mixed packed and unpacked tensors with odd 4-bit counts. */
    const int q5[5] = {1, -2, 7, -8, 3}, u7[7] = {0, 15, 1, 14, 2, 13, 9};
    unsigned char p5[4], p7[5];
    size_t b5 = pack4(q5, 5, p5), b7 = pack4(u7, 7, p7);
    CHECK(b5 == 3 && b7 == 4);
    float f3[3] = {0.5f, 1.0f, -3.0f};
    unsigned char flags[4] = {1, 0, 1, 1};
    berth_st_tensor t[4] = {
        {"q5", BA_U8, 1, {3}, p5, 3},
        {"f", BA_F32, 1, {3}, f3, 12},
        {"u7", BA_U8, 1, {4}, p7, 4},
        {"mask", BA_BOOL, 2, {2, 2}, flags, 4},
    };
    const char *marked[] = {"rustnn.webnn.packed4", "1", NULL};
    const char *path = tu_path(dir, "packed.safetensors");
    CHECK(berth_st_write(path, t, 4, marked, &err) == 0);
    berth_archive *a = berth_archive_open(path, NULL, &err);
    CHECK(a != NULL);
    int64_t d5[] = {5}, d7[] = {7}, d3[] = {3}, d22[] = {2, 2}, d4[] = {4};
    berth_weight_request r[4] = {
        fake_req("u7", BERTH_DTYPE_U4, 0, 1, d7), fake_req("q5", BERTH_DTYPE_I4, 1, 1, d5),
        fake_req("mask", BERTH_DTYPE_U8, 2, 2, d22), fake_req("f", BERTH_DTYPE_F32, 3, 1, d3)};
    CHECK(a && berth_archive_stream(a, r, 4, &fake_backend, NULL, &fake_host, &(berth_weights *){0},
                                    NULL, &err) == BERTH_OK);
    const fake_tensor *x = fake_find("q5");
    CHECK(x && x->dtype == BERTH_DTYPE_I4 && x->bytes == 3 && !memcmp(x->copy, p5, 3));
    /* Unpack in the test and compare with the values, sign-extending i4. */
    for (size_t i = 0; x && i < 5; i++) {
        int nibble = (x->copy[i / 2] >> (4 * (i % 2))) & 0xF;
        CHECK((nibble >= 8 ? nibble - 16 : nibble) == q5[i]);
    }
    x = fake_find("u7");
    CHECK(x && x->dtype == BERTH_DTYPE_U4 && x->bytes == 4);
    for (size_t i = 0; x && i < 7; i++) CHECK(((x->copy[i / 2] >> (4 * (i % 2))) & 0xF) == u7[i]);
    x = fake_find("mask");
    CHECK(x && x->bytes == 4 && !memcmp(x->copy, flags, 4));
    x = fake_find("f");
    CHECK(x && x->bytes == 12 && !memcmp(x->copy, f3, 12));
    fake_free_weights(NULL);
    CHECK(host_live == 0);

    /* Packed storage must be U8[ceil(n/2)]. */
    berth_weight_request bad = fake_req("u7", BERTH_DTYPE_U4, 0, 1, d5);
    CHECK(a && stream(a, &bad, 1, &fake_backend, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "tensor 'u7' is U8[4] in the archive but const 'u7' declares u4[5], "
                            "whose packed storage must be U8[3]");
    bad = fake_req("f", BERTH_DTYPE_I4, 0, 1, d5);
    CHECK(a && stream(a, &bad, 1, &fake_backend, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "tensor 'f' is F32[3] in the archive but const 'f' declares i4[5], "
                            "whose packed storage must be U8[3]");
    /* Other mismatches: dtype, shape, BOOL for i8. */
    bad = fake_req("f", BERTH_DTYPE_I32, 0, 1, d3);
    CHECK(a && stream(a, &bad, 1, &fake_backend, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "tensor 'f' is F32[3] in the archive but const 'f' declares i32[3]: "
                            "dtype mismatch");
    bad = fake_req("f", BERTH_DTYPE_F32, 0, 1, d4);
    CHECK(a && stream(a, &bad, 1, &fake_backend, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "tensor 'f' is F32[3] in the archive but const 'f' declares f32[4]: "
                            "shape mismatch");
    bad = fake_req("mask", BERTH_DTYPE_I8, 0, 2, d22);
    CHECK(a && stream(a, &bad, 1, &fake_backend, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "BOOL[2,2] in the archive but const 'mask' declares i8[2,2]");
    CHECK(F.began == 0); /* refused before upload_begin */
    berth_archive_close(a);

    /* The packed marker missing, or with a value we do not know. */
    const char *odd[] = {"rustnn.webnn.packed4", "2", NULL};
    const char *const *metas[2] = {NULL, odd};
    const char *expect[2] = {"packed.safetensors: tensor 'q5': const 'q5' declares i4[5] but the "
                             "archive lacks the packed marker __metadata__ rustnn.webnn.packed4",
                             "packed.safetensors: tensor 'q5': packed marker rustnn.webnn.packed4 "
                             "= \"2\" is unsupported (expected \"1\")"};
    for (int k = 0; k < 2; k++) {
        CHECK(berth_st_write(path, t, 4, metas[k], &err) == 0);
        a = berth_archive_open(path, NULL, &err);
        CHECK(a != NULL);
        bad = fake_req("q5", BERTH_DTYPE_I4, 0, 1, d5);
        CHECK(a && stream(a, &bad, 1, &fake_backend, &err) == BERTH_ERR_INVALID);
        CHECK_CONTAINS(err.msg, expect[k]);
        /* Unpacked tensors in the same archive still load. */
        bad = fake_req("q5", BERTH_DTYPE_U8, 0, 1, d3);
        CHECK(a && stream(a, &bad, 1, &fake_backend, &err) == BERTH_OK);
        berth_archive_close(a);
    }
    CHECK(host_live == 0);
    tu_rmdir(dir);
    return check_exit();
}
