/* Manifest plus blob: with and without the WGWT header, explicit paths in
 * other directories, unaligned spans, spans out of bounds. */
#include <stdint.h>
#include <sys/stat.h>

#include "archive.h"
#include "check.h"
#include "fake_backend.h"
#include "util.h"

static void write_blob(const char *path, int wgwt, uint32_t version, const unsigned char *data,
                       size_t n) {
    unsigned char b[256];
    size_t at = 0;
    if (wgwt) {
        memcpy(b, "WGWT", 4);
        for (int i = 0; i < 4; i++) b[4 + i] = (unsigned char)(version >> (8 * i));
        at = 8;
    }
    memcpy(b + at, data, n);
    tu_write(path, b, at + n);
}

static void write_text(const char *path, const char *s) { tu_write(path, s, strlen(s)); }

/* Data: 3 junk bytes, then f32 {1.5, -4} at the unaligned offset 3, then
 * i8 {-1, 7, 100} at offset 11. */
static size_t make_data(unsigned char *d) {
    memset(d, 0x5A, 3);
    tu_put_f32(d + 3, 1.5f);
    tu_put_f32(d + 7, -4.0f);
    d[11] = 0xFF, d[12] = 7, d[13] = 100;
    return 14;
}

static const char *MANIFEST =
    "{\"format\": \"wg-weights-manifest\", \"tensors\": {"
    "\"enc.w\": {\"dataType\": \"float32\", \"shape\": [2], \"byteOffset\": 3, \"byteLength\": 8},"
    "\"b\": {\"dataType\": \"int8\", \"shape\": [3], \"byteOffset\": 11, \"byteLength\": 3}}}";

static void load_and_check(const char *blob, const char *manifest, uint64_t data_start) {
    berth_error err;
    berth_archive *a = berth_archive_open(blob, manifest, &err);
    CHECK(a != NULL);
    if (!a) {
        fprintf(stderr, "  %s\n", err.msg);
        return;
    }
    CHECK(berth_archive_count(a) == 2);
    const ba_entry *e = berth_archive_entry(a, 0); /* file order: enc.w first */
    CHECK(!strcmp(e->name, "enc.w") && e->dtype == BA_F32 && e->offset == data_start + 3 &&
          e->bytes == 8);
    e = berth_archive_entry(a, 1);
    CHECK(!strcmp(e->name, "b") && e->dtype == BA_I8 && e->offset == data_start + 11);

    fake_reset();
    int64_t d2[] = {2}, d3[] = {3};
    berth_weight_request req[2] = {fake_req("b", BERTH_DTYPE_I8, 0, 1, d3),
                                   fake_req("enc_w", BERTH_DTYPE_F32, 1, 1, d2)};
    berth_weights *w = NULL;
    CHECK(berth_archive_stream(a, req, 2, &fake_backend, NULL, &fake_host, &w, NULL, &err) ==
          BERTH_OK);
    const fake_tensor *t = fake_find("enc_w");
    float want[2] = {1.5f, -4.0f};
    CHECK(t && t->bytes == 8 && !memcmp(t->copy, want, 8));
    t = fake_find("b");
    signed char want8[3] = {-1, 7, 100};
    CHECK(t && t->bytes == 3 && !memcmp(t->copy, want8, 3));
    if (w) fake_backend.free_weights(w);
    CHECK(host_live == 0);
    berth_archive_close(a);
}

static void refused(const char *blob, const char *manifest, const char *expect) {
    berth_error err;
    memset(err.msg, 0, sizeof err.msg);
    berth_archive *a = berth_archive_open(blob, manifest, &err);
    CHECK(a == NULL);
    berth_archive_close(a);
    CHECK_CONTAINS(err.msg, expect);
}

int main(void) {
    char *dir = tu_tempdir();
    unsigned char data[64];
    size_t n = make_data(data);
    char sub[600];
    snprintf(sub, sizeof sub, "%s/manifests", dir);
    mkdir(sub, 0755);

    /* Headerless blob, manifest next to it. */
    const char *blob = tu_path(dir, "model.bin");
    const char *mf = tu_path(dir, "model.json");
    write_blob(blob, 0, 0, data, n);
    write_text(mf, MANIFEST);
    load_and_check(blob, mf, 0);

    /* WGWT blob, manifest in another directory (explicit paths). */
    const char *wblob = tu_path(dir, "model.weights");
    const char *wmf = tu_path(sub, "spans.json");
    write_blob(wblob, 1, 1, data, n);
    write_text(wmf, MANIFEST);
    load_and_check(wblob, wmf, 8);

    /* A .safetensors path ignores any manifest, even a missing one. */
    const char *st = tu_path(dir, "m.safetensors");
    float one = 2.0f;
    berth_st_tensor t = {"x", BA_F32, 1, {1}, &one, 4};
    berth_error err;
    CHECK(berth_st_write(st, &t, 1, NULL, &err) == 0);
    berth_archive *a = berth_archive_open(st, tu_path(dir, "does-not-exist.json"), &err);
    CHECK(a && berth_archive_count(a) == 1);
    berth_archive_close(a);

    /* A blob without a manifest cannot be read. */
    refused(blob, NULL, "model.bin: not a .safetensors file, and no manifest was given");
    refused(blob, tu_path(dir, "nope.json"), "nope.json: cannot open the manifest");

    /* Out-of-bounds span: 14 bytes of data, the span ends at 16. */
    write_text(mf, "{\"tensors\": {\"w\": {\"dataType\": \"float32\", \"shape\": [2], "
                   "\"byteOffset\": 8, \"byteLength\": 8}}}");
    refused(blob, mf, "model.json: tensor 'w': span byteOffset 8 + byteLength 8 runs past the 14 "
                      "bytes of data in");
    /* With the WGWT header the data is 8 bytes shorter than the file. */
    write_text(wmf, "{\"tensors\": {\"w\": {\"dataType\": \"uint8\", \"shape\": [8], "
                    "\"byteOffset\": 7, \"byteLength\": 8}}}");
    refused(wblob, wmf, "runs past the 14 bytes of data");
    /* Offset + length that would wrap around 64 bits. */
    write_text(mf, "{\"tensors\": {\"w\": {\"dataType\": \"uint8\", \"shape\": [2], "
                   "\"byteOffset\": 18446744073709551615, \"byteLength\": 2}}}");
    refused(blob, mf, "span byteOffset 18446744073709551615 + byteLength 2 runs past");
    write_text(mf, "{\"tensors\": {\"w\": {\"dataType\": \"float32\", \"shape\": [2], "
                   "\"byteOffset\": 0, \"byteLength\": 7}}}");
    refused(blob, mf, "tensor 'w': byteLength 7 but float32[2] needs 8");
    write_text(mf, "{\"tensors\": {\"w\": {\"dataType\": \"bfloat16\", \"shape\": [2], "
                   "\"byteOffset\": 0, \"byteLength\": 4}}}");
    refused(blob, mf, "tensor 'w': unknown dataType 'bfloat16'");
    write_text(mf, "{\"tensors\": {\"w\": {\"dataType\": \"uint8\", \"shape\": [2], "
                   "\"byteOffset\": -1, \"byteLength\": 2}}}");
    refused(blob, mf, "tensor 'w': byteOffset is -1, expected a non-negative integer");
    write_text(mf, "{\"tensors\": {\"w\": {\"dataType\": \"uint8\", \"shape\": [1], \"byteOffset\": "
                   "0, \"byteLength\": 1}, \"w\": {\"dataType\": \"uint8\", \"shape\": [1], "
                   "\"byteOffset\": 1, \"byteLength\": 1}}}");
    refused(blob, mf, "model.json: tensor 'w': duplicate tensor name");
    write_text(mf, "{\"format\": 2, \"tensors\": {}}");
    refused(blob, mf, "model.json: \"format\" is a number, expected a string");
    write_text(mf, "{\"spans\": {}}");
    refused(blob, mf, "model.json: \"tensors\" is missing");
    write_text(mf, "[]");
    refused(blob, mf, "model.json: manifest is an array, expected one JSON object");
    write_text(mf, "{\"tensors\": {\"w\": 1}");
    refused(blob, mf, "model.json: manifest is not valid JSON");

    /* A WGWT blob of another version. */
    write_blob(wblob, 1, 2, data, n);
    write_text(wmf, MANIFEST);
    refused(wblob, wmf, "model.weights: WGWT blob version 2 is not supported (expected 1)");

    /* Native 4-bit spans in a manifest feed a 4-bit declaration as is:
     * 5 int4 values take 3 bytes. */
    unsigned char nib[3] = {0x21, 0x43, 0x05};
    write_blob(blob, 0, 0, nib, 3);
    write_text(mf, "{\"tensors\": {\"q\": {\"dataType\": \"int4\", \"shape\": [5], "
                   "\"byteOffset\": 0, \"byteLength\": 3}}}");
    a = berth_archive_open(blob, mf, &err);
    CHECK(a != NULL);
    if (a) {
        fake_reset();
        int64_t d5[] = {5};
        berth_weight_request r = fake_req("q", BERTH_DTYPE_I4, 0, 1, d5);
        berth_weights *w = NULL;
        CHECK(berth_archive_stream(a, &r, 1, &fake_backend, NULL, &fake_host, &w, NULL, &err) ==
              BERTH_OK);
        const fake_tensor *q = fake_find("q");
        CHECK(q && q->bytes == 3 && !memcmp(q->copy, nib, 3));
        if (w) fake_backend.free_weights(w);
    }
    berth_archive_close(a);

    tu_rmdir(sub);
    tu_rmdir(dir);
    return check_exit();
}
