/* Offsets past 4 GiB: a sparse SafeTensors file (a few KiB on disk) whose
 * tensors sit across and beyond the 4 GiB mark are read back byte for
 * byte, through the header and through a manifest over the same bytes;
 * a tensor of more than 4 GiB is refused by name where a size_t is
 * 32-bit (on a 64-bit build the limit is lowered to a 32-bit build's).
 * A 32-bit build (make test-32) runs this same program for real.
 * Exits 77 (skipped) where the file system cannot hold a sparse file. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "archive_internal.h"
#include "check.h"
#include "fake_backend.h"
#include "util.h"

#define GIB4 ((uint64_t)1 << 32)
#define HLEN 512 /* header bytes, padded with spaces: fixes where data starts */
#define DATA_START (8 + (uint64_t)HLEN)

/* Absolute file offsets. */
#define CROSS_AT (GIB4 - 8)    /* F32[4]: 8 bytes below 4 GiB, 8 above */
#define FAR_AT (GIB4 + 4096)   /* F32[4]: wholly above 4 GiB */
#define HUGE_AT (FAR_AT + 16)  /* U8[4 GiB + 16]: more than a 32-bit size_t */
#define HUGE_BYTES (GIB4 + 16)
#define FILE_BYTES (HUGE_AT + HUGE_BYTES)

static const float cross_v[4] = {1.5f, -2.25f, 3.125f, 1e-3f};
static const float far_v[4] = {-7.0f, 0.5f, 65504.0f, -0.0f};

static int pwrite_full(int fd, const void *p, size_t n, uint64_t at) {
    return pwrite(fd, p, n, (off_t)at) == (ssize_t)n ? 0 : -1;
}

/* Writes the sparse file; 0, or 77 when the file system cannot hold it
 * sparsely (nothing is left behind then). */
static int write_sparse(const char *path) {
    /* Relative to the data start; "head" and "gap" pad with holes. */
    uint64_t head = CROSS_AT - DATA_START, cross = head + 16, gap = FAR_AT - DATA_START,
             far = gap + 16, huge = far + HUGE_BYTES;
    char h[HLEN + 1];
    int n = snprintf(h, sizeof h,
                     "{\"head\":{\"dtype\":\"U8\",\"shape\":[%llu],\"data_offsets\":[0,%llu]},"
                     "\"cross\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[%llu,%llu]},"
                     "\"gap\":{\"dtype\":\"U8\",\"shape\":[%llu],\"data_offsets\":[%llu,%llu]},"
                     "\"far\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[%llu,%llu]},"
                     "\"huge\":{\"dtype\":\"U8\",\"shape\":[%llu],\"data_offsets\":[%llu,%llu]}}",
                     (unsigned long long)head, (unsigned long long)head, (unsigned long long)head,
                     (unsigned long long)cross, (unsigned long long)(gap - cross),
                     (unsigned long long)cross, (unsigned long long)gap, (unsigned long long)gap,
                     (unsigned long long)far, (unsigned long long)HUGE_BYTES,
                     (unsigned long long)far, (unsigned long long)huge);
    if (n < 0 || n >= HLEN) {
        fprintf(stderr, "header does not fit %d bytes\n", HLEN);
        exit(2);
    }
    memset(h + n, ' ', HLEN - (size_t)n);
    unsigned char len8[8];
    for (int i = 0; i < 8; i++) len8[i] = (unsigned char)((uint64_t)HLEN >> (8 * i));
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(path);
        exit(2);
    }
    if (ftruncate(fd, (off_t)FILE_BYTES) != 0) {
        fprintf(stderr, "skipped: cannot make a %llu-byte sparse file here: %s\n",
                (unsigned long long)FILE_BYTES, strerror(errno));
        close(fd);
        unlink(path);
        return 77;
    }
    if (pwrite_full(fd, len8, 8, 0) || pwrite_full(fd, h, HLEN, 8) ||
        pwrite_full(fd, cross_v, 16, CROSS_AT) || pwrite_full(fd, far_v, 16, FAR_AT)) {
        perror(path);
        exit(2);
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || close(fd) != 0) {
        perror(path);
        exit(2);
    }
    /* A few blocks were written; a file system without holes would have
     * allocated gigabytes. */
    if ((uint64_t)sb.st_blocks * 512 > ((uint64_t)64 << 20)) {
        fprintf(stderr, "skipped: the file system here does not keep files sparse\n");
        unlink(path);
        return 77;
    }
    return 0;
}

static const int64_t four = 4;

/* Streams "cross" (into a scratch) and "far" (into memory the backend
 * offers) and checks their bytes. */
static void read_back(berth_archive *a) {
    berth_weight_request r[2] = {fake_req("far", BERTH_DTYPE_F32, 0, 1, &four),
                                 fake_req("cross", BERTH_DTYPE_F32, 1, 1, &four)};
    berth_error err = {0};
    berth_weights *w = NULL;
    fake_reset();
    F.dest_for[0] = "far";
    berth_status st = berth_archive_stream(a, r, 2, &fake_backend, NULL, &fake_host, &w, NULL, &err);
    CHECK(st == BERTH_OK);
    if (st != BERTH_OK) fprintf(stderr, "%s\n", err.msg);
    const fake_tensor *c = fake_find("cross"), *f = fake_find("far");
    CHECK(c && c->bytes == 16 && !memcmp(c->copy, cross_v, 16) && c->flags == BERTH_UPLOAD_GIVEN);
    CHECK(f && f->bytes == 16 && !memcmp(f->copy, far_v, 16) && f->flags == BERTH_UPLOAD_IN_PLACE);
    if (w) fake_backend.free_weights(w);
}

static const ba_entry *entry(berth_archive *a, const char *name) {
    berth_error err;
    int32_t i = berth_archive_lookup(a, name, &err);
    return i < 0 ? NULL : berth_archive_entry(a, (uint32_t)i);
}

static void test_safetensors(const char *path) {
    berth_error err = {0};
    berth_archive *a = berth_archive_open(path, NULL, &err);
    CHECK(a);
    if (!a) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    const ba_entry *c = entry(a, "cross"), *f = entry(a, "far"), *h = entry(a, "huge");
    CHECK(c && c->offset == CROSS_AT && c->bytes == 16);
    CHECK(f && f->offset == FAR_AT && f->bytes == 16);
    CHECK(h && h->offset == HUGE_AT && h->bytes == HUGE_BYTES);
    read_back(a);

    /* A tensor over 4 GiB: refused by name before any upload where
     * size_t is 32-bit. On a 64-bit build the limit is lowered to what a
     * 32-bit build's SIZE_MAX is. */
    uint64_t saved = ba_tensor_bytes_max;
    if (ba_tensor_bytes_max > UINT32_MAX) ba_tensor_bytes_max = UINT32_MAX;
    int64_t huge_dims = (int64_t)HUGE_BYTES;
    berth_weight_request r[2] = {fake_req("far", BERTH_DTYPE_F32, 0, 1, &four),
                                 fake_req("huge", BERTH_DTYPE_U8, 1, 1, &huge_dims)};
    berth_weights *w = NULL;
    fake_reset();
    berth_status st = berth_archive_stream(a, r, 2, &fake_backend, NULL, &fake_host, &w, NULL, &err);
    CHECK(st == BERTH_ERR_INVALID && !w && F.began == 0 && F.nt == 0);
    CHECK_CONTAINS(err.msg, path);
    CHECK_CONTAINS(err.msg, "tensor 'huge': 4294967312 bytes do not fit this ");
    CHECK_CONTAINS(err.msg, "-bit build's address space");
    if (sizeof(size_t) == 4) CHECK_CONTAINS(err.msg, "this 32-bit build's address space");
    ba_tensor_bytes_max = saved;
    berth_archive_close(a);
}

/* The same bytes as a raw blob under a manifest: spans past 4 GiB. */
static void test_manifest(const char *dir, const char *st_path) {
    const char *blob = tu_path(dir, "big.bin"), *mf = tu_path(dir, "big.json");
    CHECK(link(st_path, blob) == 0);
    char text[512];
    snprintf(text, sizeof text,
             "{\"tensors\":{\"cross\":{\"dataType\":\"float32\",\"shape\":[4],\"byteOffset\":%llu,"
             "\"byteLength\":16},\"far\":{\"dataType\":\"float32\",\"shape\":[4],\"byteOffset\":"
             "%llu,\"byteLength\":16}}}",
             (unsigned long long)CROSS_AT, (unsigned long long)FAR_AT);
    tu_write(mf, text, strlen(text));
    berth_error err = {0};
    berth_archive *a = berth_archive_open(blob, mf, &err);
    CHECK(a);
    if (!a) {
        fprintf(stderr, "%s\n", err.msg);
        return;
    }
    const ba_entry *f = entry(a, "far");
    CHECK(f && f->offset == FAR_AT);
    read_back(a);
    berth_archive_close(a);
}

int main(void) {
    char *dir = tu_tempdir();
    const char *path = tu_path(dir, "big.safetensors");
    int rc = write_sparse(path);
    if (rc) {
        tu_rmdir(dir);
        return rc;
    }
    test_safetensors(path);
    test_manifest(dir, path);
    tu_rmdir(dir);
    return check_exit();
}
