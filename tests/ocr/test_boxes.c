/* The DB post-process on probability maps drawn here: an axis-aligned
 * region's box is the region grown by the unclip distance and scaled to
 * the page; a rotated region gives a rotated box; regions that are too
 * thin, too faint or too small after all are dropped; boxes come out in
 * reading order. Then cutting out: an axis-aligned box is the page's
 * pixels, a tall box is turned a quarter, a half turn twice is the
 * identity; and a drawn page survives PNG and back. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boxes.h"
#include "check.h"
#include "crop.h"
#include "draw.h"
#include "image.h"

#define W 200
#define H 120
static float map[H][W];

static void clear(void) { memset(map, 0, sizeof map); }

static void fill_rect(int x0, int y0, int x1, int y1, float v) {
    for (int y = y0; y <= y1; y++)
        for (int x = x0; x <= x1; x++) map[y][x] = v;
}

/* Pixels whose centre lies in the rectangle of centre (cx, cy), sizes
 * w x h, turned by `deg` degrees. */
static void fill_rotated(double cx, double cy, double w, double h, double deg, float v) {
    double a = deg * M_PI / 180, c = cos(a), s = sin(a);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            double u = (x - cx) * c + (y - cy) * s, t = -(x - cx) * s + (y - cy) * c;
            if (fabs(u) <= w / 2 && fabs(t) <= h / 2) map[y][x] = v;
        }
}

static ocr_box_params params(void) {
    ocr_box_params p = ocr_box_defaults();
    CHECK(p.unclip_ratio == 1.5f && p.read_unclip_ratio == 2.0f); /* the arithmetic below assumes them */
    return p;
}

static void test_axis_aligned(void) {
    clear();
    /* pixels 20..79 x 30..39: their centres span 59 x 9, the contour's
     * minimum rectangle; unclip distance 59 * 9 * 1.5 / (2 * 68) = 5.856 */
    fill_rect(20, 30, 79, 39, 0.9f);
    ocr_box_params p = params();
    ocr_box *b = NULL;
    long n = ocr_find_boxes(&map[0][0], W, H, W, W * 2, H * 2, &p, &b); /* page twice the map */
    CHECK(n == 1);
    if (n == 1) {
        double d = 59.0 * 9 * 1.5 / (2 * 68);
        double want_x[4] = {20 - d, 79 + d, 79 + d, 20 - d}, want_y[4] = {30 - d, 30 - d, 39 + d, 39 + d};
        for (int k = 0; k < 4; k++) {
            CHECK(fabs(b[0].x[k] - round(want_x[k] * 2)) <= 1);
            CHECK(fabs(b[0].y[k] - round(want_y[k] * 2)) <= 1);
        }
        CHECK_NEAR(b[0].score, 0.9, 1e-5);
        /* the cut the recognizer reads grows by ratio 2.0 instead */
        double r = 59.0 * 9 * 2.0 / (2 * 68);
        CHECK(fabs(b[0].rx[0] - round((20 - r) * 2)) <= 1 && fabs(b[0].ry[2] - round((39 + r) * 2)) <= 1);
    }
    free(b);
}

static void test_rotated(void) {
    clear();
    fill_rotated(100, 60, 120, 14, 20, 0.8f);
    ocr_box_params p = params();
    ocr_box *b = NULL;
    long n = ocr_find_boxes(&map[0][0], W, H, W, W, H, &p, &b);
    CHECK(n == 1);
    if (n == 1) {
        /* the top edge slopes down to the right at about 20 degrees */
        double ang = atan2(b[0].y[1] - b[0].y[0], b[0].x[1] - b[0].x[0]) * 180 / M_PI;
        CHECK(fabs(ang - 20) < 2);
        double cx = (b[0].x[0] + b[0].x[2]) / 2, cy = (b[0].y[0] + b[0].y[2]) / 2;
        CHECK(fabs(cx - 100) < 2 && fabs(cy - 60) < 2);
        /* the top-left corner is the one with the smallest x + y */
        for (int k = 1; k < 4; k++) CHECK(b[0].x[0] + b[0].y[0] <= b[0].x[k] + b[0].y[k]);
    }
    free(b);
}

static void test_dropped(void) {
    clear();
    fill_rect(10, 10, 100, 11, 0.9f);   /* two pixels thin: shorter side 1 < 3 */
    fill_rect(10, 40, 100, 55, 0.45f);  /* above 0.3 but scoring 0.45 < 0.6 */
    fill_rect(10, 80, 100, 95, 0.25f);  /* below the threshold */
    ocr_box_params p = params();
    ocr_box *b = NULL;
    CHECK(ocr_find_boxes(&map[0][0], W, H, W, W, H, &p, &b) == 0);
    CHECK(b == NULL);
    p.box_thresh = 0.4f; /* now the second is kept */
    CHECK(ocr_find_boxes(&map[0][0], W, H, W, W, H, &p, &b) == 1);
    free(b);
    /* a map region outside map_w x map_h (the bucket's padding) is not read */
    clear();
    fill_rect(150, 10, 190, 30, 0.9f);
    CHECK(ocr_find_boxes(&map[0][0], 140, H, W, 140, H, &p, &b) == 0);
    free(b);
}

static void test_order(void) {
    clear();
    /* a row of two (the right one 5 pixels higher), then one below */
    fill_rect(120, 25, 180, 35, 0.9f);
    fill_rect(20, 30, 80, 40, 0.9f);
    fill_rect(20, 80, 80, 90, 0.9f);
    ocr_box_params p = params();
    ocr_box *b = NULL;
    long n = ocr_find_boxes(&map[0][0], W, H, W, W, H, &p, &b);
    CHECK(n == 3);
    if (n == 3) CHECK(b[0].x[0] < 40 && b[1].x[0] > 100 && b[2].y[0] > 60);
    free(b);
}

/* A box whose cut is the box itself. */
static ocr_box quad(float x0, float y0, float x1, float y1) {
    ocr_box b = {{x0, x1, x1, x0}, {y0, y0, y1, y1}, {x0, x1, x1, x0}, {y0, y0, y1, y1}, 1};
    return b;
}

static void test_crop(void) {
    ocr_image page = {40, 30, malloc(40 * 30 * 3)};
    if (!page.rgb) return;
    for (int i = 0; i < 40 * 30 * 3; i++) page.rgb[i] = (uint8_t)(i * 7 % 251);
    berth_error err;
    ocr_box box = quad(5, 3, 25, 13);
    ocr_image line;
    CHECK(ocr_crop_box(&page, &box, &line, &err) == BERTH_OK);
    CHECK(line.width == 20 && line.height == 10);
    int same = 1;
    for (int y = 0; y < 10 && line.rgb; y++)
        for (int x = 0; x < 20; x++)
            for (int c = 0; c < 3; c++)
                same &= line.rgb[(y * 20 + x) * 3 + c] == page.rgb[((y + 3) * 40 + x + 5) * 3 + c];
    CHECK(same);
    ocr_image_free(&line);
    /* 6 wide, 18 tall: turned a quarter counter-clockwise, 18 wide */
    ocr_box tall = quad(10, 2, 16, 20);
    CHECK(ocr_crop_box(&page, &tall, &line, &err) == BERTH_OK);
    CHECK(line.width == 18 && line.height == 6);
    /* the crop's column c became row 5 - c: its top-right is the box's top-left */
    if (line.rgb) CHECK(!memcmp(line.rgb + (0 * 18 + 0) * 3, page.rgb + (2 * 40 + 15) * 3, 3));
    if (line.rgb) CHECK(!memcmp(line.rgb + (5 * 18 + 0) * 3, page.rgb + (2 * 40 + 10) * 3, 3));
    ocr_image copy = {line.width, line.height, malloc(18 * 6 * 3)};
    if (copy.rgb && line.rgb) {
        memcpy(copy.rgb, line.rgb, 18 * 6 * 3);
        ocr_image_rotate180(&line);
        CHECK(!memcmp(line.rgb, copy.rgb + (18 * 6 - 1) * 3, 3));
        ocr_image_rotate180(&line);
        CHECK(!memcmp(line.rgb, copy.rgb, 18 * 6 * 3));
    }
    free(copy.rgb);
    ocr_image_free(&line);
    ocr_box flat = quad(5, 3, 5, 3);
    CHECK(ocr_crop_box(&page, &flat, &line, &err) == BERTH_ERR_INVALID);
    free(page.rgb);
}

static void test_draw_png(const char *dir) {
    ocr_image page = {60, 40, calloc(60 * 40 * 3, 1)};
    if (!page.rgb) return;
    memset(page.rgb, 255, 60 * 40 * 3);
    ocr_box box = quad(10, 20, 50, 35);
    ocr_draw_boxes(&page, &box, 1);
    int coloured = 0;
    for (int i = 0; i < 60 * 40 * 3; i += 3) coloured += page.rgb[i] != 255 || page.rgb[i + 1] != 255;
    CHECK(coloured > 100); /* an outline and a number */
    char path[512];
    snprintf(path, sizeof path, "%s/drawn.png", dir);
    berth_error err;
    CHECK(ocr_png_write(path, &page, &err) == BERTH_OK);
    ocr_image back;
    CHECK(ocr_image_load(path, NULL, &back, &err) == BERTH_OK);
    CHECK(back.width == 60 && back.height == 40 && !memcmp(back.rgb, page.rgb, 60 * 40 * 3));
    ocr_image_free(&back);
    snprintf(path, sizeof path, "%s/no/such/dir/drawn.png", dir);
    CHECK(ocr_png_write(path, &page, &err) == BERTH_ERR_IO);
    CHECK_CONTAINS(err.msg, "cannot write");
    free(page.rgb);
}

int main(int argc, char **argv) {
    test_axis_aligned();
    test_rotated();
    test_dropped();
    test_order();
    test_crop();
    test_draw_png(argc > 1 ? argv[1] : ".");
    return check_exit();
}
