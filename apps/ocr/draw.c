#include "draw.h"

#include <errno.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* Digits 0-9, 3 x 5 pixels, a row per byte (bit 2 leftmost). */
static const unsigned char DIGITS[10][5] = {
    {7, 5, 5, 5, 7}, {2, 6, 2, 2, 7}, {7, 1, 7, 4, 7}, {7, 1, 7, 1, 7}, {5, 5, 7, 1, 1},
    {7, 4, 7, 1, 7}, {7, 4, 7, 5, 7}, {7, 1, 1, 1, 1}, {7, 5, 7, 5, 7}, {7, 5, 7, 1, 7},
};

/* Colours that stand out on paper, one per box in turn. */
static const unsigned char COLOURS[6][3] = {{220, 30, 30}, {30, 120, 220}, {20, 160, 60},
                                            {200, 100, 0}, {150, 40, 180}, {0, 150, 150}};

static void put(ocr_image *img, int x, int y, const unsigned char c[3]) {
    if (x < 0 || y < 0 || x >= img->width || y >= img->height) return;
    memcpy(img->rgb + ((size_t)y * (size_t)img->width + (size_t)x) * 3, c, 3);
}

/* A line `thick` pixels wide (a square brush along Bresenham's path). */
static void line(ocr_image *img, int x0, int y0, int x1, int y1, int thick, const unsigned char c[3]) {
    int dx = abs(x1 - x0), dy = -abs(y1 - y0), sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1, e = dx + dy;
    for (;;) {
        for (int a = 0; a < thick; a++)
            for (int b = 0; b < thick; b++) put(img, x0 + a - thick / 2, y0 + b - thick / 2, c);
        if (x0 == x1 && y0 == y1) break;
        int e2 = 2 * e;
        if (e2 >= dy) e += dy, x0 += sx;
        if (e2 <= dx) e += dx, y0 += sy;
    }
}

/* The number n, white on the box's colour, its top-left corner at (x, y). */
static void label(ocr_image *img, int x, int y, unsigned n, int scale, const unsigned char c[3]) {
    char s[16];
    int len = snprintf(s, sizeof s, "%u", n);
    static const unsigned char white[3] = {255, 255, 255};
    int w = (len * 4 + 1) * scale, h = 7 * scale;
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) put(img, x + i, y + j, c);
    for (int k = 0; k < len; k++)
        for (int row = 0; row < 5; row++)
            for (int col = 0; col < 3; col++)
                if (DIGITS[s[k] - '0'][row] & (4 >> col))
                    for (int a = 0; a < scale; a++)
                        for (int b = 0; b < scale; b++)
                            put(img, x + (1 + k * 4 + col) * scale + a, y + (1 + row) * scale + b, white);
}

void ocr_draw_boxes(ocr_image *img, const ocr_box *boxes, size_t n) {
    int side = img->width > img->height ? img->width : img->height;
    int thick = side > 1500 ? 3 : 2, scale = side > 1500 ? 4 : 3;
    for (size_t i = 0; i < n; i++) {
        const ocr_box *b = &boxes[i];
        const unsigned char *c = COLOURS[i % 6];
        for (int k = 0; k < 4; k++)
            line(img, (int)lrintf(b->x[k]), (int)lrintf(b->y[k]), (int)lrintf(b->x[(k + 1) % 4]),
                 (int)lrintf(b->y[(k + 1) % 4]), thick, c);
        /* the number just above the top-left corner, or inside the box at
         * the page's top edge */
        int ly = (int)lrintf(b->y[0]) - 7 * scale - thick;
        label(img, (int)lrintf(b->x[0]), ly < 0 ? (int)lrintf(b->y[0]) + thick : ly, (unsigned)(i + 1), scale, c);
    }
}

typedef struct png_err_ctx {
    jmp_buf jmp;
    char msg[200];
} png_err_ctx;

static void on_png_error(png_structp png, png_const_charp msg) {
    png_err_ctx *ctx = png_get_error_ptr(png);
    snprintf(ctx->msg, sizeof ctx->msg, "%s", msg);
    longjmp(ctx->jmp, 1);
}

static void on_png_warning(png_structp png, png_const_charp msg) {
    (void)png;
    (void)msg;
}

berth_status ocr_png_write(const char *path, const ocr_image *img, berth_error *err) {
    FILE *f = fopen(path, "wb");
    if (!f) {
        snprintf(err->msg, sizeof err->msg, "%s: cannot write: %s", path, strerror(errno));
        return BERTH_ERR_IO;
    }
    static png_err_ctx ctx; /* static: longjmp may not restore automatic variables */
    ctx.msg[0] = '\0';
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &ctx, on_png_error, on_png_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info || setjmp(ctx.jmp)) {
        snprintf(err->msg, sizeof err->msg, "%s: cannot write the PNG: %s", path, ctx.msg[0] ? ctx.msg : "out of memory");
        png_destroy_write_struct(&png, &info);
        fclose(f);
        remove(path);
        return BERTH_ERR_IO;
    }
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)img->width, (png_uint_32)img->height, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < img->height; y++) png_write_row(png, img->rgb + (size_t)y * (size_t)img->width * 3);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    if (fclose(f) != 0) {
        snprintf(err->msg, sizeof err->msg, "%s: cannot write: %s", path, strerror(errno));
        remove(path);
        return BERTH_ERR_IO;
    }
    return BERTH_OK;
}
