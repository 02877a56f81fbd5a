/* Text lines cut out of a page: the quadrilateral of a box's cut (its rx,
 * ry corners) warped to an upright rectangle, as PP-OCR's get_rotate_crop_image does (its width
 * the longer of the top and bottom edges, its height the longer of the
 * sides; bilinear, edges repeated), turned a quarter when it stands
 * taller than 1.5 times its width; and the half turn the angle
 * classifier asks for. */
#ifndef OCR_CROP_H
#define OCR_CROP_H

#include <berth/berth.h>

#include "boxes.h"
#include "image.h"

/* out is allocated; BERTH_ERR_NOMEM or BERTH_ERR_INVALID (a box under
 * one pixel) with err set. */
berth_status ocr_crop_box(const ocr_image *page, const ocr_box *box, ocr_image *out, berth_error *err);

/* Turns img by 180 degrees in place. */
void ocr_image_rotate180(ocr_image *img);

#endif
