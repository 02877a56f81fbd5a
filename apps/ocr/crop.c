#include "crop.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Solves the 8 x 8 system of the homography taking (u, v) to (x, y) at
 * four point pairs, h[8] = 1; Gaussian elimination with partial
 * pivoting. Returns 0 for a degenerate quadrilateral. */
static int homography(const double u[4], const double v[4], const double x[4], const double y[4], double h[9]) {
    double a[8][9];
    for (int k = 0; k < 4; k++) {
        double r0[9] = {u[k], v[k], 1, 0, 0, 0, -u[k] * x[k], -v[k] * x[k], x[k]};
        double r1[9] = {0, 0, 0, u[k], v[k], 1, -u[k] * y[k], -v[k] * y[k], y[k]};
        memcpy(a[2 * k], r0, sizeof r0);
        memcpy(a[2 * k + 1], r1, sizeof r1);
    }
    for (int c = 0; c < 8; c++) {
        int piv = c;
        for (int r = c + 1; r < 8; r++)
            if (fabs(a[r][c]) > fabs(a[piv][c])) piv = r;
        if (fabs(a[piv][c]) < 1e-12) return 0;
        if (piv != c)
            for (int k = 0; k < 9; k++) {
                double t = a[c][k];
                a[c][k] = a[piv][k];
                a[piv][k] = t;
            }
        for (int r = 0; r < 8; r++) {
            if (r == c) continue;
            double f = a[r][c] / a[c][c];
            for (int k = c; k < 9; k++) a[r][k] -= f * a[c][k];
        }
    }
    for (int c = 0; c < 8; c++) h[c] = a[c][8] / a[c][c];
    h[8] = 1;
    return 1;
}

static double dist(float x0, float y0, float x1, float y1) { return hypot((double)x0 - x1, (double)y0 - y1); }

berth_status ocr_crop_box(const ocr_image *page, const ocr_box *b, ocr_image *out, berth_error *err) {
    memset(out, 0, sizeof *out);
    const float *bx = b->rx, *by = b->ry; /* the cut the recognizer reads */
    int w = (int)fmax(dist(bx[0], by[0], bx[1], by[1]), dist(bx[2], by[2], bx[3], by[3]));
    int h = (int)fmax(dist(bx[0], by[0], bx[3], by[3]), dist(bx[1], by[1], bx[2], by[2]));
    double u[4] = {0, w, w, 0}, v[4] = {0, 0, h, h}, x[4], y[4], m[9];
    for (int k = 0; k < 4; k++) x[k] = bx[k], y[k] = by[k];
    if (w < 1 || h < 1 || !homography(u, v, x, y, m)) {
        snprintf(err->msg, sizeof err->msg, "box of %d x %d pixels: nothing to cut out", w, h);
        return BERTH_ERR_INVALID;
    }
    int turn = (double)h / w >= 1.5; /* read it turned a quarter */
    out->width = turn ? h : w;
    out->height = turn ? w : h;
    out->rgb = malloc((size_t)w * (size_t)h * 3);
    if (!out->rgb) {
        snprintf(err->msg, sizeof err->msg, "out of memory cutting out a %d x %d line", w, h);
        return BERTH_ERR_NOMEM;
    }
    for (int r = 0; r < h; r++)
        for (int c = 0; c < w; c++) {
            double d = m[6] * c + m[7] * r + m[8];
            double sx = (m[0] * c + m[1] * r + m[2]) / d, sy = (m[3] * c + m[4] * r + m[5]) / d;
            sx = fmin(fmax(sx, 0), page->width - 1), sy = fmin(fmax(sy, 0), page->height - 1);
            int x0 = (int)sx, y0 = (int)sy;
            int x1 = x0 + 1 < page->width ? x0 + 1 : x0, y1 = y0 + 1 < page->height ? y0 + 1 : y0;
            double fx = sx - x0, fy = sy - y0;
            /* a quarter turn counter-clockwise: column c becomes row w - 1 - c */
            int orow = turn ? w - 1 - c : r, ocol = turn ? r : c;
            uint8_t *o = out->rgb + ((size_t)orow * (size_t)out->width + (size_t)ocol) * 3;
            const uint8_t *p00 = page->rgb + ((size_t)y0 * (size_t)page->width + (size_t)x0) * 3;
            const uint8_t *p01 = page->rgb + ((size_t)y0 * (size_t)page->width + (size_t)x1) * 3;
            const uint8_t *p10 = page->rgb + ((size_t)y1 * (size_t)page->width + (size_t)x0) * 3;
            const uint8_t *p11 = page->rgb + ((size_t)y1 * (size_t)page->width + (size_t)x1) * 3;
            for (int k = 0; k < 3; k++) {
                double top = p00[k] * (1 - fx) + p01[k] * fx, bottom = p10[k] * (1 - fx) + p11[k] * fx;
                o[k] = (uint8_t)lrint(top * (1 - fy) + bottom * fy);
            }
        }
    return BERTH_OK;
}

void ocr_image_rotate180(ocr_image *img) {
    size_t n = (size_t)img->width * (size_t)img->height;
    for (size_t i = 0, j = n ? n - 1 : 0; i < j; i++, j--)
        for (int k = 0; k < 3; k++) {
            uint8_t t = img->rgb[i * 3 + k];
            img->rgb[i * 3 + k] = img->rgb[j * 3 + k];
            img->rgb[j * 3 + k] = t;
        }
}
