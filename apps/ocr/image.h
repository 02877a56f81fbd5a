/* Decoding PNG and JPEG files into 8-bit RGB for the OCR example. */
#ifndef OCR_IMAGE_H
#define OCR_IMAGE_H

#include <stddef.h>
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

/* The widest image the caller can use: one that would be more than
 * max_width pixels wide once resized to `height` rows (ocr_resized_width)
 * is refused from the sizes in its header, before its pixels are decoded
 * or allocated, with "PATH: WxH image is N pixels wide at height H; the
 * widest bucket takes MAX". */
typedef struct ocr_image_fit {
    int height;
    int64_t max_width;
} ocr_image_fit;

/* Read a PNG or JPEG file (told apart by its first bytes, not its name).
 * Grey, palette, 16-bit and alpha images become RGB; transparent pixels
 * are composited on white, the usual background of a text line. fit may
 * be NULL for no width limit. On failure *img is left empty and err names
 * the file and the reason. */
berth_status ocr_image_load(const char *path, const ocr_image_fit *fit, ocr_image *img,
                            berth_error *err);
/* The same for a whole file already in memory; `name` stands for it in
 * messages. */
berth_status ocr_image_decode(const char *name, const unsigned char *data, size_t size,
                              const ocr_image_fit *fit, ocr_image *img, berth_error *err);
void ocr_image_free(ocr_image *img);

#endif
