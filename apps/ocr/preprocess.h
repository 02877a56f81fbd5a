/* PaddleOCR's recognizer input: a text line resized to a fixed height
 * keeping its aspect ratio, scaled to [-1, 1], planar channels. */
#ifndef OCR_PREPROCESS_H
#define OCR_PREPROCESS_H

#include <stdint.h>

#include "image.h"

/* The width a w x h image gets at `height`: ceil(height * w / h), at
 * least 1, computed in integers so it never depends on rounding. */
int64_t ocr_resized_width(int w, int h, int height);

/* Resize img to `height` rows and ocr_resized_width() columns with
 * bilinear interpolation (half-pixel centres, edges clamped: OpenCV's
 * INTER_LINEAR, which PaddleOCR uses), normalize each value v to
 * (v / 255 - 0.5) / 0.5 and write three planes into dst, a [3, height,
 * stride] block, leaving columns past the resized width untouched.
 * Planes are written B, G, R: PaddleOCR trains on images OpenCV loaded,
 * which are BGR. stride must be at least the resized width. */
void ocr_preprocess(const ocr_image *img, int height, float *dst, int64_t stride);

/* img resized bilinearly (pixel centres aligned, edges clamped) to
 * out_w x out_h into three planes in BGR order, `plane` floats apart with
 * rows `stride` floats apart, each value (v / 255 - mean[k]) / std[k] for
 * plane k: the input PP-OCR's models take (the recognizer and angle
 * classifier with mean and std 0.5, the detector with ImageNet's). */
void ocr_to_planes(const ocr_image *img, int out_w, int out_h, const float mean[3], const float std[3], float *dst,
                   int64_t stride, size_t plane);

#endif
