/* libberthocr (berth_ocr.h): ocr_read_page's results copied into one
 * block the caller frees with berth_ocr_result_free. */
#include "berth_ocr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "page.h"

#define EXPORT __attribute__((visibility("default")))

struct berth_ocr {
    ocr_pipeline p;
};

EXPORT berth_status berth_ocr_open(const char *config, const char *keys, int max_side, int with_cls, berth_ocr **out,
                                   berth_error *err) {
    *out = NULL;
    if (!config || !keys) {
        snprintf(err->msg, sizeof err->msg, "berth_ocr_open: expected a config and a key file, found NULL");
        return BERTH_ERR_INVALID;
    }
    berth_ocr *o = calloc(1, sizeof *o);
    if (!o) {
        snprintf(err->msg, sizeof err->msg, "out of memory");
        return BERTH_ERR_NOMEM;
    }
    berth_status st = ocr_pipeline_open(&o->p, config, keys, max_side, with_cls, err);
    if (st != BERTH_OK) {
        free(o);
        return st;
    }
    *out = o;
    return BERTH_OK;
}

EXPORT void berth_ocr_close(berth_ocr *o) {
    if (!o) return;
    ocr_pipeline_close(&o->p);
    free(o);
}

EXPORT void berth_ocr_result_free(berth_ocr_result *r) { free(r); }

/* The result, its lines and their texts in one allocation. */
static berth_status collect(const ocr_page *page, const ocr_image *img, berth_ocr_result **out, berth_error *err) {
    size_t n = 0, text = 0;
    for (size_t i = 0; i < page->n; i++)
        if (!page->lines[i].failed) n++, text += strlen(page->lines[i].text) + 1;
    size_t head = sizeof(berth_ocr_result) + n * sizeof(berth_ocr_line);
    berth_ocr_result *r = calloc(1, head + text);
    if (!r) {
        snprintf(err->msg, sizeof err->msg, "out of memory for %zu lines", n);
        return BERTH_ERR_NOMEM;
    }
    berth_ocr_line *lines = (berth_ocr_line *)(r + 1);
    char *chars = (char *)r + head;
    for (size_t i = 0, k = 0; i < page->n; i++) {
        const ocr_line *l = &page->lines[i];
        if (l->failed) continue;
        size_t len = strlen(l->text) + 1;
        memcpy(chars, l->text, len);
        lines[k].text = chars;
        chars += len;
        lines[k].confidence = l->confidence;
        lines[k].turned = page->turned[i];
        for (int c = 0; c < 4; c++) lines[k].box[2 * c] = page->boxes[i].x[c], lines[k].box[2 * c + 1] = page->boxes[i].y[c];
        k++;
    }
    r->n_lines = (uint32_t)n;
    r->lines = lines;
    r->width = img->width, r->height = img->height;
    r->detect_ms = page->t.detect, r->boxes_ms = page->t.boxes, r->classify_ms = page->t.classify;
    r->recognize_ms = page->t.recognize, r->total_ms = page->t.total;
    *out = r;
    return BERTH_OK;
}

static berth_status read_image(berth_ocr *o, const char *name, const ocr_image *img, berth_ocr_result **out,
                               berth_error *err) {
    ocr_page page;
    berth_status st = ocr_read_page(&o->p, name, img, &page, err);
    if (st != BERTH_OK) return st;
    st = collect(&page, img, out, err);
    ocr_page_free(&page);
    return st;
}

EXPORT berth_status berth_ocr_read_file(berth_ocr *o, const char *path, berth_ocr_result **out, berth_error *err) {
    *out = NULL;
    ocr_image img;
    berth_status st = ocr_image_load(path, NULL, &img, err);
    if (st != BERTH_OK) return st;
    st = read_image(o, path, &img, out, err);
    ocr_image_free(&img);
    return st;
}

EXPORT berth_status berth_ocr_read_rgb(berth_ocr *o, const char *name, const uint8_t *rgb, int width, int height,
                                       size_t stride, berth_ocr_result **out, berth_error *err) {
    *out = NULL;
    if (!name) name = "image";
    if (!rgb || width <= 0 || height <= 0 || width > OCR_IMAGE_MAX_SIDE || height > OCR_IMAGE_MAX_SIDE ||
        stride < (size_t)width * 3 || (uint64_t)width * (uint64_t)height > OCR_IMAGE_MAX_PIXELS) {
        snprintf(err->msg, sizeof err->msg,
                 "%.200s: expected RGB pixels at most %d a side and %u in all, rows of at least 3 x width bytes; "
                 "found %d x %d, rows of %zu bytes",
                 name, OCR_IMAGE_MAX_SIDE, OCR_IMAGE_MAX_PIXELS, width, height, stride);
        return BERTH_ERR_INVALID;
    }
    ocr_image img = {width, height, malloc((size_t)width * (size_t)height * 3)};
    if (!img.rgb) {
        snprintf(err->msg, sizeof err->msg, "%.200s: out of memory for a %d x %d image", name, width, height);
        return BERTH_ERR_NOMEM;
    }
    for (int y = 0; y < height; y++) memcpy(img.rgb + (size_t)y * (size_t)width * 3, rgb + (size_t)y * stride, (size_t)width * 3);
    berth_status st = read_image(o, name, &img, out, err);
    ocr_image_free(&img);
    return st;
}
