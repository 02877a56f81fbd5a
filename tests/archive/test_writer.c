/* The writer: a round trip through the reader, the exact bytes of the
 * header, and every refusal leaving no file and no temporary behind. */
#include <sys/stat.h>
#include <sys/sysmacros.h>

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

/* Links are written through, to their target's directory, and the link
 * stays a link; anything but a regular file is refused untouched. */
static void test_links_and_kinds(const char *dir, const berth_st_tensor *t, const unsigned char *first,
                                 size_t first_len) {
    berth_error err;
    unsigned char buf[4096];
    char sub[600], real[700], link[700], dangling[700], fresh[700], loop[700];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    mkdir(sub, 0755);
    snprintf(real, sizeof real, "%s/real.safetensors", sub);
    snprintf(link, sizeof link, "%s/link.safetensors", dir);
    tu_write(real, "old", 3);
    CHECK(symlink("sub/real.safetensors", link) == 0); /* relative to the link's directory */
    CHECK(berth_st_write(link, t, 4, (const char *const[]){"rustnn.webnn.packed4", "1", "note",
                                                           "a \"quoted\" value", NULL}, &err) == 0);
    struct stat sb;
    CHECK(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode));
    CHECK(tu_read(real, buf, sizeof buf) == first_len && !memcmp(buf, first, first_len));
    CHECK(!tu_any(dir, ".tmp.") && !tu_any(sub, ".tmp."));

    /* A dangling link: its target is created where it points. */
    snprintf(dangling, sizeof dangling, "%s/dangling.safetensors", dir);
    snprintf(fresh, sizeof fresh, "%s/fresh.safetensors", sub);
    CHECK(symlink(fresh, dangling) == 0);
    CHECK(berth_st_write(dangling, t, 1, NULL, &err) == 0);
    CHECK(lstat(dangling, &sb) == 0 && S_ISLNK(sb.st_mode));
    CHECK(stat(fresh, &sb) == 0 && S_ISREG(sb.st_mode));

    /* A device, directly or through a link: refused, nothing created
     * beside it. As root a rename would replace the node itself, so root
     * tests a node of its own (the same device as /dev/null) rather than
     * risk the system's; others cannot rename into /dev and use it. */
    char dev[700];
    snprintf(dev, sizeof dev, "%s/null", dir);
    if (mknod(dev, S_IFCHR | 0666, makedev(1, 3)) != 0) snprintf(dev, sizeof dev, "/dev/null");
    char want[800];
    CHECK(berth_st_write(dev, t, 1, NULL, &err) == -1);
    snprintf(want, sizeof want, "%s: is a character device; only a regular file or a new name is written", dev);
    CHECK_CONTAINS(err.msg, want);
    snprintf(link, sizeof link, "%s/null.safetensors", dir);
    CHECK(symlink(dev, link) == 0);
    CHECK(berth_st_write(link, t, 1, NULL, &err) == -1);
    snprintf(want, sizeof want, "null.safetensors: links to %s, which is a character device", dev);
    CHECK_CONTAINS(err.msg, want);
    CHECK(stat(dev, &sb) == 0 && S_ISCHR(sb.st_mode));
    CHECK(!tu_any(dir, "null.tmp.") && !tu_any("/dev", "null.tmp."));

    /* A named pipe is refused without blocking and stays a pipe. */
    snprintf(link, sizeof link, "%s/pipe", dir);
    CHECK(mkfifo(link, 0600) == 0);
    CHECK(berth_st_write(link, t, 1, NULL, &err) == -1);
    CHECK_CONTAINS(err.msg, "pipe: is a named pipe (FIFO)");
    CHECK(lstat(link, &sb) == 0 && S_ISFIFO(sb.st_mode));

    /* A loop of links ends in an error, not a hang. */
    snprintf(loop, sizeof loop, "%s/loop", dir);
    CHECK(symlink("loop", loop) == 0);
    CHECK(berth_st_write(loop, t, 1, NULL, &err) == -1);
    CHECK_CONTAINS(err.msg, "loop: cannot write: too many levels of symbolic links");

    tu_rmdir(sub);
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
    refuse(dir, nowhere, t, 1, NULL, "cannot create a temporary file beside ");

    /* A parent that is a file, not a directory. */
    tu_write(tu_path(dir, "plain"), "x", 1);
    refuse(dir, tu_path(dir, "plain/w.safetensors"), t, 1, NULL, "plain/w.safetensors: cannot write: Not a directory");
    unlink(tu_path(dir, "plain"));

    /* A directory is not replaced: refused before any temporary exists. */
    char target[600];
    snprintf(target, sizeof target, "%s/taken.safetensors", dir);
    mkdir(target, 0755);
    refuse(dir, target, t, 1, NULL, "taken.safetensors: is a directory; only a regular file or a new name is written");
    rmdir(target);

    test_links_and_kinds(dir, t, buf, n);
    tu_rmdir(dir);
    return check_exit();
}
