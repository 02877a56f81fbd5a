/* The writer: a round trip through the reader, the exact bytes of the
 * header, and every refusal leaving no file and no temporary behind. */
#include <sys/stat.h>

#include "archive.h"
#include "check.h"
#include "util.h"

static void refuse(const char *dir, const char *path, const berth_st_tensor *t, uint32_t n,
                   const char *const *meta, const char *expect) {
    berth_error err;
    int before = tu_count(dir);
    memset(err.msg, 0, sizeof err.msg);
    CHECK(berth_st_write(path, t, n, meta, &err) == -1);
    CHECK_CONTAINS(err.msg, expect);
    CHECK(tu_count(dir) == before);
    CHECK(!tu_any(dir, ".tmp."));
}

int main(void) {
    char *dir = tu_tempdir();
    const char *path = tu_path(dir, "w.safetensors");
    berth_error err;

    float f[3] = {1.5f, -2.0f, 3.25f};
    unsigned char packed[2] = {0x21, 0x03}; /* 1, 2, 3 as 4-bit, low nibble first */
    int64_t i64[2] = {-7, 1ll << 40};
    berth_st_tensor t[4] = {
        {"layer.0.w", BA_F32, 2, {1, 3}, f, 12},
        {"q\"uote", BA_U8, 1, {2}, packed, 2},
        {"ids", BA_I64, 1, {2}, i64, 16},
        {"empty", BA_F16, 2, {0, 4}, NULL, 0},
    };
    const char *meta[] = {"rustnn.webnn.packed4", "1", "note", "a \"quoted\" value", NULL};
    CHECK(berth_st_write(path, t, 4, meta, &err) == 0);
    CHECK(tu_count(dir) == 1);

    /* The bytes: u64 length, header padded to 8 with spaces, data in order. */
    unsigned char buf[4096];
    size_t n = tu_read(path, buf, sizeof buf);
    uint64_t hlen = 0;
    for (int i = 7; i >= 0; i--) hlen = hlen << 8 | buf[i];
    CHECK(hlen % 8 == 0);
    CHECK(n == 8 + hlen + 12 + 2 + 16);
    CHECK(buf[8] == '{' && buf[8 + hlen - 1] == ' ');
    CHECK(!memcmp(buf + 8 + hlen, f, 12));
    CHECK(!memcmp(buf + 8 + hlen + 12, packed, 2));
    CHECK(!memcmp(buf + 8 + hlen + 14, i64, 16));

    berth_archive *a = berth_archive_open(path, NULL, &err);
    CHECK(a != NULL);
    if (a) {
        CHECK(berth_archive_count(a) == 4);
        const ba_entry *e = berth_archive_entry(a, 0);
        CHECK(!strcmp(e->name, "layer.0.w") && e->dtype == BA_F32 && e->rank == 2 &&
              e->dims[0] == 1 && e->dims[1] == 3 && e->offset == 8 + hlen && e->bytes == 12);
        e = berth_archive_entry(a, 1);
        CHECK(!strcmp(e->name, "q\"uote") && e->dtype == BA_U8 && e->bytes == 2);
        e = berth_archive_entry(a, 2);
        CHECK(!strcmp(e->name, "ids") && e->dtype == BA_I64 && e->offset == 8 + hlen + 14);
        CHECK(berth_archive_entry(a, 3)->bytes == 0);
        CHECK(berth_archive_meta_count(a) == 2);
        CHECK(berth_archive_meta(a, "rustnn.webnn.packed4") &&
              !strcmp(berth_archive_meta(a, "rustnn.webnn.packed4"), "1"));
        CHECK(berth_archive_meta(a, "note") &&
              !strcmp(berth_archive_meta(a, "note"), "a \"quoted\" value"));
    }
    berth_archive_close(a);

    /* Refusals: an existing file stays untouched, nothing else appears. */
    berth_st_tensor bad = {"x", BA_F32, 1, {4}, NULL, 16};
    refuse(dir, path, &bad, 1, NULL, "tensor 'x': data is missing for 16 bytes");
    bad.data = f;
    bad.bytes = 12;
    refuse(dir, path, &bad, 1, NULL, "tensor 'x': 12 bytes given but F32[4] needs 16");
    berth_st_tensor big = {"big", BA_F32, 3, {1ll << 31, 1ll << 31, 1ll << 31}, f, 12};
    refuse(dir, path, &big, 1, NULL, "tensor 'big': F32[2147483648,2147483648,2147483648] overflows");
    berth_st_tensor dup[2] = {{"d", BA_F32, 1, {1}, f, 4}, {"d", BA_F32, 1, {1}, f, 4}};
    refuse(dir, path, dup, 2, NULL, "tensor 'd': duplicate tensor name");
    berth_st_tensor neg = {"n", BA_F32, 1, {-1}, f, 0};
    refuse(dir, path, &neg, 1, NULL, "tensor 'n': dim 0 is -1");
    berth_st_tensor nib = {"p", BA_I4, 1, {3}, packed, 2};
    refuse(dir, path, &nib, 1, NULL, "tensor 'p': dtype I4 cannot be stored");
    berth_st_tensor meta_name = {"__metadata__", BA_U8, 1, {1}, packed, 1};
    refuse(dir, path, &meta_name, 1, NULL, "the reserved __metadata__");
    CHECK(tu_read(path, buf, sizeof buf) == n); /* the earlier file survived */

    /* An unwritable place: a directory that does not exist. */
    const char *nowhere = tu_path(dir, "no/such/dir/w.safetensors");
    refuse(dir, nowhere, t, 1, NULL, "cannot create a temporary file beside it");

    /* A parent that is a file, not a directory. */
    tu_write(tu_path(dir, "plain"), "x", 1);
    refuse(dir, tu_path(dir, "plain/w.safetensors"), t, 1, NULL, "cannot create a temporary file");
    unlink(tu_path(dir, "plain"));

    /* The rename fails (the target is a directory) after the temporary
     * was fully written: the temporary must still go. */
    char target[600];
    snprintf(target, sizeof target, "%s/taken.safetensors", dir);
    mkdir(target, 0755);
    tu_write(tu_path(target, "keep"), "x", 1); /* non-empty, so rename cannot replace it */
    refuse(dir, target, t, 1, NULL, "taken.safetensors: writing failed");
    tu_rmdir(target);

    tu_rmdir(dir);
    return check_exit();
}
