/* Decoding PNG and JPEG files into 8-bit RGB for the OCR example. */
#ifndef OCR_IMAGE_H
#define OCR_IMAGE_H

#include <stdint.h>

#include <berth/berth.h>

/* Width and height stay below this, so that every size the example
 * computes from them fits an int without overflow checks downstream. */
#define OCR_IMAGE_MAX_SIDE 65535
/* A text line is small; refuse absurd pixel counts before allocating. */
#define OCR_IMAGE_MAX_PIXELS (64u * 1024u * 1024u)

typedef struct ocr_image {
    int width;
    int height;
    uint8_t *rgb; /* height rows of width R, G, B triples */
} ocr_image;

/* Read a PNG or JPEG file (told apart by its first bytes, not its name).
 * Grey, palette, 16-bit and alpha images become RGB; transparent pixels
 * are composited on white, the usual background of a text line. On
 * failure *img is left empty and err names the file and the reason. */
berth_status ocr_image_load(const char *path, ocr_image *img, berth_error *err);
void ocr_image_free(ocr_image *img);

#endif
