#include "preprocess.h"

#include <math.h>

int64_t ocr_resized_width(int w, int h, int height) {
    int64_t rw = ((int64_t)height * w + h - 1) / h;
    return rw < 1 ? 1 : rw;
}

/* Source coordinate and weight of the next sample for destination index
 * d, OpenCV style: centres aligned, clamped at both edges. */
static void bilinear_tap(int64_t d, double scale, int src_len, int *i0, int *i1, float *frac) {
    double s = ((double)d + 0.5) * scale - 0.5;
    int i = (int)floor(s);
    double f = s - i;
    if (i < 0) {
        i = 0;
        f = 0;
    }
    if (i >= src_len - 1) {
        i = src_len - 1;
        f = 0;
    }
    *i0 = i;
    *i1 = i + 1 < src_len ? i + 1 : i;
    *frac = (float)f;
}

void ocr_to_planes(const ocr_image *img, int out_w, int out_h, const float mean[3], const float std[3], float *dst,
                   int64_t stride, size_t plane) {
    double sx = (double)img->width / (double)out_w;
    double sy = (double)img->height / (double)out_h;
    size_t row_bytes = (size_t)img->width * 3;
    for (int y = 0; y < out_h; y++) {
        int y0, y1;
        float fy;
        bilinear_tap(y, sy, img->height, &y0, &y1, &fy);
        const uint8_t *r0 = img->rgb + row_bytes * (size_t)y0;
        const uint8_t *r1 = img->rgb + row_bytes * (size_t)y1;
        for (int64_t x = 0; x < out_w; x++) {
            int x0, x1;
            float fx;
            bilinear_tap(x, sx, img->width, &x0, &x1, &fx);
            for (int c = 0; c < 3; c++) {
                float top = r0[x0 * 3 + c] * (1 - fx) + r0[x1 * 3 + c] * fx;
                float bottom = r1[x0 * 3 + c] * (1 - fx) + r1[x1 * 3 + c] * fx;
                float v = top * (1 - fy) + bottom * fy;
                /* RGB source channel c goes to plane 2 - c (BGR). */
                int k = 2 - c;
                dst[plane * (size_t)k + (size_t)y * (size_t)stride + (size_t)x] = (v / 255.0f - mean[k]) / std[k];
            }
        }
    }
}

void ocr_preprocess(const ocr_image *img, int height, float *dst, int64_t stride) {
    static const float half[3] = {0.5f, 0.5f, 0.5f};
    ocr_to_planes(img, (int)ocr_resized_width(img->width, img->height, height), height, half, half, dst, stride,
                  (size_t)height * (size_t)stride);
}
