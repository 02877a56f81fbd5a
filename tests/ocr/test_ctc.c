/* CTC decoding and the key table on hand-made inputs whose answers are
 * written out here by reasoning, not computed by the code under test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "ctc.h"

#define C 5 /* blank, 'a', 'b', 'c', space */

static char dir[256];

static void write_keys(const char *name, const char *text) {
    char path[300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    fputs(text, f);
    fclose(f);
}

static ocr_keys load(const char *name, berth_status want) {
    char path[300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ocr_keys k;
    berth_error err;
    CHECK(ocr_keys_load(path, &k, &err) == want);
    return k;
}

static void test_decode(void) {
    /* Steps: a a _ a b b _ _ c (argmax), with these max probabilities. */
    static const float p[9][C] = {
        {0.1f, 0.6f, 0.1f, 0.1f, 0.1f},  /* a 0.6  kept */
        {0.1f, 0.7f, 0.1f, 0.05f, 0.05f}, /* a 0.7  repeat, collapsed */
        {0.9f, 0.05f, 0.05f, 0, 0},       /* blank */
        {0.2f, 0.8f, 0, 0, 0},            /* a 0.8  kept: a blank came between */
        {0.1f, 0, 0.5f, 0.4f, 0},         /* b 0.5  kept */
        {0, 0, 1.0f, 0, 0},               /* b      repeat */
        {1.0f, 0, 0, 0, 0},               /* blank */
        {0.5f, 0.2f, 0.1f, 0.1f, 0.1f},   /* blank */
        {0.1f, 0, 0, 0.3f, 0.6f},         /* space 0.6 kept */
    };
    int64_t ids[9], n = -1;
    float conf = -1;
    ocr_ctc_decode(&p[0][0], 9, C, ids, &n, &conf);
    CHECK(n == 4);
    CHECK(ids[0] == 1 && ids[1] == 1 && ids[2] == 2 && ids[3] == 4);
    CHECK_NEAR(conf, (0.6 + 0.8 + 0.5 + 0.6) / 4, 1e-6);

    /* All blank: nothing kept, confidence 0. */
    static const float blank[2][C] = {{0.9f, 0.1f, 0, 0, 0}, {0.6f, 0, 0.4f, 0, 0}};
    ocr_ctc_decode(&blank[0][0], 2, C, ids, &n, &conf);
    CHECK(n == 0);
    CHECK(conf == 0.0f);

    /* A tie goes to the lower class: blank beats 'a' here. */
    static const float tie[1][C] = {{0.4f, 0.4f, 0.1f, 0.1f, 0}};
    ocr_ctc_decode(&tie[0][0], 1, C, ids, &n, &conf);
    CHECK(n == 0);

    /* Zero steps. */
    ocr_ctc_decode(NULL, 0, C, ids, &n, &conf);
    CHECK(n == 0 && conf == 0.0f);
}

static void test_keys(void) {
    write_keys("abc.txt", "a\nb\nc\n");
    ocr_keys k = load("abc.txt", BERTH_OK);
    CHECK(k.count == 3);
    CHECK(ocr_keys_classes(&k) == 5);
    CHECK(ocr_keys_text(&k, 0) == NULL);
    CHECK(strcmp(ocr_keys_text(&k, 1), "a") == 0);
    CHECK(strcmp(ocr_keys_text(&k, 3), "c") == 0);
    CHECK(strcmp(ocr_keys_text(&k, 4), " ") == 0);
    CHECK(ocr_keys_text(&k, 5) == NULL);
    CHECK(ocr_keys_text(&k, -1) == NULL);

    int64_t ids[] = {3, 4, 1, 1, 2};
    char out[16];
    berth_error err;
    CHECK(ocr_keys_join(&k, ids, 5, out, sizeof out, &err) == BERTH_OK);
    CHECK(strcmp(out, "c aab") == 0);
    CHECK(ocr_keys_join(&k, ids, 5, out, 5, &err) == BERTH_ERR_NOMEM);
    int64_t bad[] = {1, 7};
    CHECK(ocr_keys_join(&k, bad, 2, out, sizeof out, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "class 7");
    ocr_keys_free(&k);

    /* No final newline, CRLF line ends and multi-byte characters. */
    write_keys("zh.txt", "\xe4\xb8\xad\r\n\xe6\x96\x87\r\nx");
    k = load("zh.txt", BERTH_OK);
    CHECK(k.count == 3);
    CHECK(strcmp(ocr_keys_text(&k, 1), "\xe4\xb8\xad") == 0);
    CHECK(strcmp(ocr_keys_text(&k, 2), "\xe6\x96\x87") == 0);
    CHECK(strcmp(ocr_keys_text(&k, 3), "x") == 0);
    ocr_keys_free(&k);

    write_keys("empty.txt", "");
    k = load("empty.txt", BERTH_ERR_INVALID);
    CHECK(k.count == 0 && k.text == NULL);

    berth_error e2;
    ocr_keys k2;
    char path[300];
    snprintf(path, sizeof path, "%s/missing.txt", dir);
    CHECK(ocr_keys_load(path, &k2, &e2) == BERTH_ERR_IO);
    CHECK_CONTAINS(e2.msg, "missing.txt");
}

/* A named pipe, a directory and a character device given as the key
 * file: each refused at once with its one line, the table left empty. The
 * open never waits for a FIFO writer; if it did, the alarm ends the test
 * as a failure, not a hang. */
static void test_key_file_kinds(void) {
    char fifo[300], sub[300];
    snprintf(fifo, sizeof fifo, "%s/keys.fifo", dir);
    snprintf(sub, sizeof sub, "%s/keys.dir", dir);
    unlink(fifo);
    CHECK(mkfifo(fifo, 0600) == 0);
    rmdir(sub);
    CHECK(mkdir(sub, 0700) == 0);
    const char *paths[] = {fifo, sub, "/dev/null"};
    const char *kinds[] = {"a named pipe (FIFO)", "a directory", "a character device"};
    alarm(20);
    for (int i = 0; i < 3; i++) {
        ocr_keys k;
        berth_error err;
        CHECK(ocr_keys_load(paths[i], &k, &err) == BERTH_ERR_IO);
        char want[600];
        snprintf(want, sizeof want, "%s: the key file is %s, expected a regular file", paths[i],
                 kinds[i]);
        CHECK_MSG(err.msg, want);
        CHECK(k.count == 0 && k.text == NULL && k.line == NULL);
    }
    alarm(0);
    unlink(fifo);
    rmdir(sub);
}

int main(int argc, char **argv) {
    snprintf(dir, sizeof dir, "%s", argc > 1 ? argv[1] : ".");
    test_decode();
    test_keys();
    test_key_file_kinds();
    return check_exit();
}
