/* Text boxes from a DBNet probability map, as PP-OCR's DB post-process
 * makes them: the map thresholded, each 8-connected region's
 * minimum-area rotated rectangle, its score (the mean probability inside
 * it), the rectangle grown by the unclip distance (area * ratio /
 * perimeter), small boxes dropped, the corners scaled to the page and
 * ordered clockwise from the top left; then sorted top to bottom, left to
 * right within a line. */
#ifndef OCR_BOXES_H
#define OCR_BOXES_H

#include <stddef.h>
#include <stdint.h>

typedef struct ocr_box {
    float x[4], y[4];   /* corners on the page: top-left, top-right, bottom-right, bottom-left */
    float rx[4], ry[4]; /* the wider cut the recognizer reads (read_unclip_ratio), same order */
    float score;        /* mean probability inside the unexpanded rectangle */
} ocr_box;

typedef struct ocr_box_params {
    float thresh;       /* a pixel is text above this (PP-OCR: 0.3) */
    float box_thresh;   /* a region is kept when its score reaches this (0.6) */
    float unclip_ratio; /* growth: area * ratio / perimeter (1.5) */
    float read_unclip_ratio; /* the same for the cut the recognizer reads (2.0, see ocr_box_defaults) */
    float min_size;     /* shorter side, in map pixels, before and after growth (3; + 2 after) */
    size_t max_boxes;   /* regions examined at most (1000) */
} ocr_box_params;

/* PP-OCR's defaults; and the recognizer reads a cut grown with ratio
 * 2.0: cut at the box (1.5) the glyphs touch its edges and the recognizer
 * drops the spaces between Latin words (on samples/pages, 11 of the 32
 * lines lose one at 1.5, none at 2.0; at 2.5 a few gain a leading
 * space). */
ocr_box_params ocr_box_defaults(void);

/* Boxes of the map's top-left map_w x map_h region (rows `stride`
 * floats apart), scaled from that region to a page of page_w x page_h.
 * Returns how many were found (sorted), or -1 when out of memory; *out is
 * malloc'd (NULL when none), the caller frees it. */
long ocr_find_boxes(const float *map, int map_w, int map_h, size_t stride, int page_w, int page_h,
                    const ocr_box_params *p, ocr_box **out);

/* PP-OCR's reading order: by the top-left corner's y, then x; a box
 * whose top is within 10 pixels of the one before and left of it goes
 * first. */
void ocr_sort_boxes(ocr_box *boxes, size_t n);

#endif
