/* libFuzzer target for berth-ocr's image decoding and preprocessing:
 * any bytes must be either refused with a one-line message naming the
 * input, leaving the image empty, or decoded into an image within the
 * fit whose every pixel can be read and resized to the model's input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "preprocess.h"

static void require(int cond) {
    if (!cond) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* berth-ocr's own fit: PP-OCRv4's height and its widest bucket. */
    static const ocr_image_fit fit = {48, 1280};
    ocr_image img;
    berth_error err;
    memset(&err, 0, sizeof err);
    if (ocr_image_decode("fuzz.img", data, size, &fit, &img, &err) != BERTH_OK) {
        require(!strncmp(err.msg, "fuzz.img: ", 10));
        require(strchr(err.msg, '\n') == NULL);
        require(img.rgb == NULL && img.width == 0 && img.height == 0);
        return 0;
    }
    require(img.rgb != NULL && img.width >= 1 && img.height >= 1);
    require(img.width <= OCR_IMAGE_MAX_SIDE && img.height <= OCR_IMAGE_MAX_SIDE);
    int64_t rw = ocr_resized_width(img.width, img.height, fit.height);
    require(rw >= 1 && rw <= fit.max_width);
    /* Read every byte, so AddressSanitizer checks the whole buffer. */
    size_t n = (size_t)img.width * (size_t)img.height * 3;
    size_t sum = 0;
    for (size_t i = 0; i < n; i++) sum += img.rgb[i];
    require(sum <= 255 * n);
    float *planes = malloc(sizeof(float) * 3 * (size_t)fit.height * (size_t)rw);
    require(planes != NULL);
    ocr_preprocess(&img, fit.height, planes, rw);
    /* Bilinear mixes of 0..255 scaled to [-1, 1], give or take rounding. */
    for (size_t i = 0; i < 3 * (size_t)fit.height * (size_t)rw; i++)
        require(planes[i] >= -1.0001f && planes[i] <= 1.0001f);
    free(planes);
    ocr_image_free(&img);
    return 0;
}
