/* `berth inspect`, called as a function with stdout and stderr captured
 * into files. */
#include <fcntl.h>
#include <unistd.h>

#include "archive.h"
#include "check.h"
#include "inspect.h"
#include "util.h"

static char out[8192], errs[8192];

static int run(const char *dir, int argc, char **argv) {
    fflush(stdout);
    fflush(stderr);
    int so = dup(1), se = dup(2);
    const char *po = tu_path(dir, "stdout.txt"), *pe = tu_path(dir, "stderr.txt");
    int fo = open(po, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int fe = open(pe, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fo, 1);
    dup2(fe, 2);
    int rc = berth_inspect_main(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(so, 1);
    dup2(se, 2);
    close(so), close(se), close(fo), close(fe);
    memset(out, 0, sizeof out);
    memset(errs, 0, sizeof errs);
    tu_read(po, (unsigned char *)out, sizeof out - 1);
    tu_read(pe, (unsigned char *)errs, sizeof errs - 1);
    unlink(po);
    unlink(pe);
    return rc;
}

int main(void) {
    char *dir = tu_tempdir();
    char path[600];
    snprintf(path, sizeof path, "%s", tu_path(dir, "m.safetensors"));
    float f[6] = {0};
    unsigned char b[3] = {1, 2, 3};
    berth_st_tensor t[2] = {{"enc.w", BA_F32, 2, {2, 3}, f, 24}, {"ids", BA_U8, 1, {3}, b, 3}};
    const char *meta[] = {"source", "unit test", NULL};
    berth_error err;
    CHECK(berth_st_write(path, t, 2, meta, &err) == 0);

    char *a1[] = {"inspect", path};
    CHECK(run(dir, 2, a1) == 0);
    CHECK_CONTAINS(out, "enc.w");
    CHECK_CONTAINS(out, "F32");
    CHECK_CONTAINS(out, "[2,3]");
    CHECK_CONTAINS(out, "ids");
    CHECK_CONTAINS(out, "U8");
    CHECK_CONTAINS(out, "source = unit test");
    CHECK_CONTAINS(out, "2 tensors, 27 bytes");
    CHECK(errs[0] == 0);

    char *help[] = {"inspect", "--help"};
    CHECK(run(dir, 2, help) == 0);
    CHECK_CONTAINS(out, "usage: berth inspect FILE [--manifest M]");

    /* A broken file: the rule on stderr, status 1, nothing on stdout. */
    char bad[600];
    snprintf(bad, sizeof bad, "%s", tu_path(dir, "bad.safetensors"));
    tu_write_st(bad, "{\"w1\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,12]}}", NULL, 12);
    char *a2[] = {"inspect", bad};
    CHECK(run(dir, 2, a2) == 1);
    CHECK_CONTAINS(errs, "berth inspect: ");
    CHECK_CONTAINS(errs, "bad.safetensors: tensor 'w1': data_offsets [0, 12] span 12 bytes but "
                         "F32[2,2] needs 16");
    CHECK(out[0] == 0);

    /* Manifest form, offsets reported where the bytes are in the blob. */
    char blob[600], mf[600];
    snprintf(blob, sizeof blob, "%s", tu_path(dir, "m.bin"));
    snprintf(mf, sizeof mf, "%s", tu_path(dir, "m.json"));
    tu_write(blob, "WGWT\x01\0\0\0abcdef", 14);
    const char *json = "{\"tensors\":{\"x\":{\"dataType\":\"uint8\",\"shape\":[2],\"byteOffset\":3,"
                       "\"byteLength\":2}}}";
    tu_write(mf, json, strlen(json));
    char *a3[] = {"inspect", blob, "--manifest", mf};
    CHECK(run(dir, 4, a3) == 0);
    CHECK_CONTAINS(out, "1 tensors, 2 bytes");
    CHECK_CONTAINS(out, "11"); /* 8-byte WGWT header + offset 3 */

    /* Usage errors. */
    char *a4[] = {"inspect"};
    CHECK(run(dir, 1, a4) == 2);
    CHECK_CONTAINS(errs, "usage:");
    char *a5[] = {"inspect", blob, "--manifest"};
    CHECK(run(dir, 3, a5) == 2);
    CHECK_CONTAINS(errs, "--manifest needs a file");
    char *a6[] = {"inspect", "--frob", blob};
    CHECK(run(dir, 3, a6) == 2);
    CHECK_CONTAINS(errs, "unknown option '--frob'");
    char *a7[] = {"inspect", blob};
    CHECK(run(dir, 2, a7) == 1);
    CHECK_CONTAINS(errs, "berth inspect: ");
    CHECK_CONTAINS(errs, "no manifest was given");

    tu_rmdir(dir);
    return check_exit();
}
