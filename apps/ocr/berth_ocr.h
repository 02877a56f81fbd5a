/* libberthocr: whole-page OCR (PP-OCR's detector, angle classifier and
 * recognizer, as berth-ocr reads pages) behind five C functions, for
 * programs that call it through a foreign-function interface (the Python
 * package's berth.ocr). Only these names are exported.
 *
 *   berth_ocr *o;
 *   berth_error err;
 *   berth_ocr_open("config/ocr-cpu.ini", "ppocr_keys_v1.txt", 0, 1, &o, &err);
 *   berth_ocr_result *r;
 *   if (berth_ocr_read_file(o, "page.png", &r, &err) == BERTH_OK) {
 *       for (uint32_t i = 0; i < r->n_lines; i++) puts(r->lines[i].text);
 *       berth_ocr_result_free(r);
 *   }
 *   berth_ocr_close(o);
 *
 * A berth_ocr is one thread's at a time. */
#ifndef BERTH_OCR_H
#define BERTH_OCR_H

#include <stddef.h>
#include <stdint.h>

#include <berth/berth.h>

typedef struct berth_ocr berth_ocr;

typedef struct berth_ocr_line {
    const char *text;  /* UTF-8 */
    float confidence;  /* the recognizer's mean probability over the text */
    float box[8];      /* x, y of the corners: top left, top right, bottom right, bottom left */
    int turned;        /* 1: the angle classifier turned the line back by 180 degrees */
} berth_ocr_line;

typedef struct berth_ocr_result {
    uint32_t n_lines; /* in reading order; lines the recognizer could not read are left out */
    const berth_ocr_line *lines;
    int width, height; /* the page */
    double detect_ms, boxes_ms, classify_ms, recognize_ms, total_ms;
} berth_ocr_result;

/* Opens [model.det], [model.cls] (with_cls) and [model.rec] of config;
 * keys: the recognizer's key file; max_side 0: the detector's largest
 * bucket, at most 960. */
berth_status berth_ocr_open(const char *config, const char *keys, int max_side, int with_cls, berth_ocr **out,
                            berth_error *err);
/* A PNG or JPEG file. */
berth_status berth_ocr_read_file(berth_ocr *o, const char *path, berth_ocr_result **out, berth_error *err);
/* Pixels already decoded: height rows of `stride` bytes, each width
 * R, G, B triples. `name` stands for them in messages (NULL: "image"). */
berth_status berth_ocr_read_rgb(berth_ocr *o, const char *name, const uint8_t *rgb, int width, int height,
                                size_t stride, berth_ocr_result **out, berth_error *err);
void berth_ocr_result_free(berth_ocr_result *r);
void berth_ocr_close(berth_ocr *o);

#endif
