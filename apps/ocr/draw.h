/* The annotated page: each box outlined and numbered (1, 2, ... in
 * reading order) on a copy of the page, written as PNG with libpng. */
#ifndef OCR_DRAW_H
#define OCR_DRAW_H

#include <stddef.h>

#include <berth/berth.h>

#include "boxes.h"
#include "image.h"

/* Draws on img in place. */
void ocr_draw_boxes(ocr_image *img, const ocr_box *boxes, size_t n);

/* Writes img as an 8-bit RGB PNG; a new file or a replaced regular one. */
berth_status ocr_png_write(const char *path, const ocr_image *img, berth_error *err);

#endif
