/* Resize and normalize on tiny images whose results are worked out by
 * hand in the comments: v -> (v / 255 - 0.5) / 0.5 = v / 127.5 - 1. */
#include <stdint.h>

#include "check.h"
#include "preprocess.h"

static float norm(double v) { return (float)(v / 127.5 - 1.0); }

static void test_widths(void) {
    CHECK(ocr_resized_width(100, 32, 48) == 150); /* 48 * 100 / 32 = 150 exactly */
    CHECK(ocr_resized_width(101, 32, 48) == 152); /* 151.5 rounds up */
    CHECK(ocr_resized_width(5, 3, 48) == 80);
    CHECK(ocr_resized_width(1, 1000, 48) == 1); /* 0.048, never 0 */
    CHECK(ocr_resized_width(640, 48, 48) == 640);
}

/* Same size: a copy, channels reordered to B, G, R planes. */
static void test_identity_bgr(void) {
    uint8_t px[2][3][3] = {
        {{0, 51, 255}, {10, 20, 30}, {255, 0, 127}},
        {{1, 2, 3}, {100, 150, 200}, {0, 0, 0}},
    };
    ocr_image img = {3, 2, &px[0][0][0]};
    float out[3][2][5];
    for (int i = 0; i < 30; i++) (&out[0][0][0])[i] = 7.0f;
    ocr_preprocess(&img, 2, &out[0][0][0], 5);
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 3; x++) {
            CHECK_NEAR(out[0][y][x], norm(px[y][x][2]), 1e-6); /* B */
            CHECK_NEAR(out[1][y][x], norm(px[y][x][1]), 1e-6); /* G */
            CHECK_NEAR(out[2][y][x], norm(px[y][x][0]), 1e-6); /* R */
        }
    CHECK_NEAR(out[2][0][0], -1.0, 1e-6);
    CHECK_NEAR(out[1][0][0], -0.6, 1e-6); /* 51 / 127.5 - 1 */
    CHECK_NEAR(out[0][0][0], 1.0, 1e-6);
    /* Columns past the resized width are the caller's padding. */
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 2; y++) CHECK(out[c][y][3] == 7.0f && out[c][y][4] == 7.0f);
}

/* 2x1 grey [0, 255] to height 2: width 4. Source x for column d is
 * (d + 0.5) / 2 - 0.5 = -0.25 (clamped to 0), 0.25, 0.75, 1.25 (clamped
 * to the last pixel): values 0, 63.75, 191.25, 255 on both rows. */
static void test_upscale(void) {
    uint8_t px[1][2][3] = {{{0, 0, 0}, {255, 255, 255}}};
    ocr_image img = {2, 1, &px[0][0][0]};
    float out[3][2][4];
    ocr_preprocess(&img, 2, &out[0][0][0], 4);
    const double want[4] = {-1.0, -0.5, 0.5, 1.0};
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < 2; y++)
            for (int x = 0; x < 4; x++) CHECK_NEAR(out[c][y][x], want[x], 1e-6);
}

/* 4x2 to height 1: width 2. Source x = (d + 0.5) * 2 - 0.5 = 0.5, 2.5 and
 * source y = 0.5: each output is the mean of a 2x2 block. Red only:
 * blocks {10, 30, 50, 70} -> 40 and {100, 200, 0, 60} -> 90. */
static void test_downscale(void) {
    uint8_t px[2][4][3] = {
        {{10, 9, 0}, {30, 9, 0}, {100, 9, 0}, {200, 9, 0}},
        {{50, 9, 0}, {70, 9, 0}, {0, 9, 0}, {60, 9, 0}},
    };
    ocr_image img = {4, 2, &px[0][0][0]};
    float out[3][1][2];
    ocr_preprocess(&img, 1, &out[0][0][0], 2);
    CHECK_NEAR(out[2][0][0], norm(40), 1e-5);
    CHECK_NEAR(out[2][0][1], norm(90), 1e-5);
    CHECK_NEAR(out[1][0][0], norm(9), 1e-5);
    CHECK_NEAR(out[0][0][1], -1.0, 1e-6);
}

int main(void) {
    test_widths();
    test_identity_bgr();
    test_upscale();
    test_downscale();
    return check_exit();
}
