/* A whole page through detection, cutting out, the angle classifier and
 * recognition (page.h). */
#include "page.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crop.h"

berth_status ocr_pipeline_open(ocr_pipeline *p, const char *config, const char *keys, int max_side, int with_cls,
                               berth_error *err) {
    memset(p, 0, sizeof *p);
    p->with_cls = with_cls;
    berth_status st = ocr_det_open(&p->det, config, "det", NULL, max_side, err);
    if (st == BERTH_OK && with_cls) st = ocr_cls_open(&p->cls, config, "cls", NULL, err);
    if (st == BERTH_OK) st = ocr_rec_open(&p->rec, config, "rec", NULL, keys, err);
    if (st != BERTH_OK) {
        ocr_det_close(&p->det);
        ocr_cls_close(&p->cls);
        memset(p, 0, sizeof *p);
    }
    return st;
}

void ocr_pipeline_close(ocr_pipeline *p) {
    ocr_det_close(&p->det);
    ocr_cls_close(&p->cls);
    ocr_rec_close(&p->rec);
    memset(p, 0, sizeof *p);
}

void ocr_page_free(ocr_page *page) {
    for (size_t i = 0; page->lines && i < page->n; i++) {
        free(page->lines[i].text);
        free(page->lines[i].pixels);
    }
    free(page->lines);
    free(page->turned);
    free(page->boxes);
    free(page->names);
    memset(page, 0, sizeof *page);
}

berth_status ocr_read_page(ocr_pipeline *p, const char *name, const ocr_image *img, ocr_page *page,
                           berth_error *err) {
    memset(page, 0, sizeof *page);
    double t_start = ocr_now_ms();
    int lo = img->width < img->height ? img->width : img->height, hi = img->width + img->height - lo;
    if (lo < OCR_PAGE_MIN_SIDE || hi > (long)lo * OCR_PAGE_MAX_RATIO) {
        snprintf(err->msg, sizeof err->msg,
                 "%.200s: %dx%d image: a page is at least %d pixels a side and at most %d times as long as wide "
                 "(a single text line reads with --lines)",
                 name, img->width, img->height, OCR_PAGE_MIN_SIDE, OCR_PAGE_MAX_RATIO);
        return BERTH_ERR_INVALID;
    }
    berth_error why;
    berth_status st = ocr_det_run(&p->det, img, &page->boxes, &page->n, &page->rep, &why);
    if (st != BERTH_OK) {
        snprintf(err->msg, sizeof err->msg, "%.200s: detection: %.280s", name, why.msg);
        return st;
    }
    size_t n = page->n, cap = n ? n : 1;
    page->t.detect = page->rep.run_ms, page->t.boxes = page->rep.boxes_ms;
    ocr_image *crops = calloc(cap, sizeof *crops);
    page->lines = calloc(cap, sizeof *page->lines);
    page->turned = calloc(cap, sizeof *page->turned);
    page->names = calloc(cap, sizeof *page->names);
    if (!crops || !page->lines || !page->turned || !page->names) {
        snprintf(err->msg, sizeof err->msg, "%.200s: out of memory for %zu lines", name, n);
        st = BERTH_ERR_NOMEM;
        goto done;
    }
    for (size_t i = 0; i < n && st == BERTH_OK; i++)
        if ((st = ocr_crop_box(img, &page->boxes[i], &crops[i], &why)) != BERTH_OK)
            snprintf(err->msg, sizeof err->msg, "%.200s: line %zu: %.280s", name, i + 1, why.msg);
    if (st == BERTH_OK && p->with_cls && n &&
        (st = ocr_cls_run(&p->cls, crops, (int)n, page->turned, &page->t.classify, &why)) != BERTH_OK)
        snprintf(err->msg, sizeof err->msg, "%.200s: angle classifier: %.260s", name, why.msg);
    if (st != BERTH_OK) goto done;
    for (size_t i = 0; i < n; i++) {
        snprintf(page->names[i], sizeof page->names[i], "%.40s line %zu", name, i + 1);
        page->lines[i].name = page->names[i];
        ocr_rec_prepare(&p->rec, &page->lines[i], &crops[i]);
    }
    double t0 = ocr_now_ms();
    ocr_rec_run(&p->rec, page->lines, (int)n);
    page->t.recognize = ocr_now_ms() - t0;
    page->t.total = ocr_now_ms() - t_start;
done:
    for (size_t i = 0; crops && i < n; i++) ocr_image_free(&crops[i]);
    free(crops);
    if (st != BERTH_OK) ocr_page_free(page);
    return st;
}
