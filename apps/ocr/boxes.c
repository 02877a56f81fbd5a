#include "boxes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

ocr_box_params ocr_box_defaults(void) {
    ocr_box_params p = {0.3f, 0.6f, 1.5f, 2.0f, 3.0f, 1000};
    return p;
}

typedef struct pt {
    double x, y;
} pt;

/* A rotated rectangle: centre, unit direction u of its width, sizes. */
typedef struct rrect {
    double cx, cy, ux, uy, w, h;
} rrect;

static double cross(pt o, pt a, pt b) { return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x); }

static int pt_cmp(const void *a, const void *b) {
    const pt *p = a, *q = b;
    if (p->x != q->x) return p->x < q->x ? -1 : 1;
    return (p->y > q->y) - (p->y < q->y);
}

/* Convex hull (Andrew's monotone chain) of pts, in place: returns its
 * size, the hull counter-clockwise in pts[0..size) (hull needs n + 1). */
static size_t convex_hull(pt *pts, size_t n, pt *hull) {
    if (n < 3) {
        memcpy(hull, pts, n * sizeof *pts);
        return n;
    }
    qsort(pts, n, sizeof *pts, pt_cmp);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        while (k >= 2 && cross(hull[k - 2], hull[k - 1], pts[i]) <= 0) k--;
        hull[k++] = pts[i];
    }
    for (size_t i = n - 1, t = k + 1; i-- > 0;) {
        while (k >= t && cross(hull[k - 2], hull[k - 1], pts[i]) <= 0) k--;
        hull[k++] = pts[i];
    }
    return k - 1;
}

/* The minimum-area rectangle around a convex polygon: one of its sides
 * lies along a hull edge (rotating calipers, every edge tried). */
static rrect min_area_rect(const pt *hull, size_t n) {
    rrect best = {hull[0].x, hull[0].y, 1, 0, 0, 0};
    double best_area = INFINITY;
    for (size_t i = 0; i < n; i++) {
        pt a = hull[i], b = hull[(i + 1) % n];
        double ex = b.x - a.x, ey = b.y - a.y, len = hypot(ex, ey);
        if (len == 0) continue;
        double ux = ex / len, uy = ey / len;
        double lo_u = INFINITY, hi_u = -INFINITY, lo_v = INFINITY, hi_v = -INFINITY;
        for (size_t j = 0; j < n; j++) {
            double du = hull[j].x * ux + hull[j].y * uy, dv = -hull[j].x * uy + hull[j].y * ux;
            lo_u = fmin(lo_u, du), hi_u = fmax(hi_u, du), lo_v = fmin(lo_v, dv), hi_v = fmax(hi_v, dv);
        }
        double area = (hi_u - lo_u) * (hi_v - lo_v);
        if (area < best_area) {
            double mu = (lo_u + hi_u) / 2, mv = (lo_v + hi_v) / 2;
            best = (rrect){mu * ux - mv * uy, mu * uy + mv * ux, ux, uy, hi_u - lo_u, hi_v - lo_v};
            best_area = area;
        }
    }
    if (n == 1) best.w = best.h = 0;
    return best;
}

static void rect_corners(const rrect *r, pt c[4]) {
    double ax = r->ux * r->w / 2, ay = r->uy * r->w / 2, bx = -r->uy * r->h / 2, by = r->ux * r->h / 2;
    c[0] = (pt){r->cx - ax - bx, r->cy - ay - by};
    c[1] = (pt){r->cx + ax - bx, r->cy + ay - by};
    c[2] = (pt){r->cx + ax + bx, r->cy + ay + by};
    c[3] = (pt){r->cx - ax + bx, r->cy - ay + by};
}

/* Mean of the map inside the polygon c (its corners truncated to whole
 * pixels, edges included), over the polygon's bounding box: PP-OCR's
 * "fast" box score. */
static float box_score(const float *map, int w, int h, size_t stride, const pt c[4]) {
    double min_x = c[0].x, max_x = c[0].x, min_y = c[0].y, max_y = c[0].y;
    for (int k = 1; k < 4; k++) {
        min_x = fmin(min_x, c[k].x), max_x = fmax(max_x, c[k].x);
        min_y = fmin(min_y, c[k].y), max_y = fmax(max_y, c[k].y);
    }
    int x0 = (int)fmin(fmax(floor(min_x), 0), w - 1), x1 = (int)fmin(fmax(ceil(max_x), 0), w - 1);
    int y0 = (int)fmin(fmax(floor(min_y), 0), h - 1), y1 = (int)fmin(fmax(ceil(max_y), 0), h - 1);
    pt q[4];
    for (int k = 0; k < 4; k++) q[k] = (pt){(double)(int)c[k].x, (double)(int)c[k].y};
    double orient = cross(q[0], q[1], q[2]) + cross(q[0], q[2], q[3]) >= 0 ? 1 : -1;
    double sum = 0;
    long count = 0;
    for (int y = y0; y <= y1; y++)
        for (int x = x0; x <= x1; x++) {
            pt p = {x, y};
            int in = 1;
            for (int k = 0; k < 4 && in; k++) in = orient * cross(q[k], q[(k + 1) % 4], p) >= 0;
            if (in) sum += map[(size_t)y * stride + (size_t)x], count++;
        }
    return count ? (float)(sum / (double)count) : 0.0f;
}

/* PP-OCR's order: top-left (smallest x + y), bottom-right (largest),
 * then of the other two the one with the smaller y - x is top-right. */
static void order_clockwise(pt c[4]) {
    int tl = 0, br = 0;
    for (int k = 1; k < 4; k++) {
        if (c[k].x + c[k].y < c[tl].x + c[tl].y) tl = k;
        if (c[k].x + c[k].y > c[br].x + c[br].y) br = k;
    }
    if (tl == br) br = (tl + 2) % 4;
    int rest[2], n = 0;
    for (int k = 0; k < 4; k++)
        if (k != tl && k != br) rest[n++] = k;
    int tr = c[rest[0]].y - c[rest[0]].x <= c[rest[1]].y - c[rest[1]].x ? rest[0] : rest[1];
    int bl = tr == rest[0] ? rest[1] : rest[0];
    pt o[4] = {c[tl], c[tr], c[br], c[bl]};
    memcpy(c, o, sizeof o);
}

static double clampd(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The rectangle grown on every side by area * ratio / perimeter: what
 * offsetting it with round joins and taking the minimum-area rectangle of
 * that gives (PP-OCR's unclip). */
static rrect unclip(rrect r, float ratio) {
    double d = r.w * r.h * ratio / (2 * (r.w + r.h));
    r.w += 2 * d, r.h += 2 * d;
    return r;
}

/* Corners scaled from the map to the page, rounded, ordered clockwise
 * from the top left and kept on the page. */
static void page_corners(const rrect *r, int map_w, int map_h, int page_w, int page_h, pt c[4]) {
    rect_corners(r, c);
    for (int k = 0; k < 4; k++) {
        c[k].x = clampd(round(c[k].x / map_w * page_w), 0, page_w);
        c[k].y = clampd(round(c[k].y / map_h * page_h), 0, page_h);
    }
    order_clockwise(c);
    for (int k = 0; k < 4; k++) c[k].x = clampd(c[k].x, 0, page_w - 1), c[k].y = clampd(c[k].y, 0, page_h - 1);
}

long ocr_find_boxes(const float *map, int map_w, int map_h, size_t stride, int page_w, int page_h,
                    const ocr_box_params *p, ocr_box **out) {
    *out = NULL;
    if (map_w <= 0 || map_h <= 0) return 0;
    size_t npix = (size_t)map_w * (size_t)map_h;
    int32_t *label = calloc(npix, sizeof *label);
    size_t *stack = malloc(npix * sizeof *stack);
    pt *pts = malloc((npix + 1) * sizeof *pts), *hull = malloc((npix + 2) * sizeof *hull);
    ocr_box *boxes = NULL;
    size_t n_boxes = 0, cap = 0, regions = 0;
    long result = -1;
    if (!label || !stack || !pts || !hull) goto done;
#define ON(i) (map[((i) / (size_t)map_w) * stride + (i) % (size_t)map_w] > p->thresh)
    for (size_t seed = 0; seed < npix && regions < p->max_boxes; seed++) {
        if (label[seed] || !ON(seed)) continue;
        regions++;
        /* flood the 8-connected region; its boundary pixels (a 4-neighbour
         * outside it) are the points of its contour */
        size_t top = 0, n_pts = 0;
        stack[top++] = seed;
        label[seed] = (int32_t)regions;
        while (top) {
            size_t i = stack[--top];
            int x = (int)(i % (size_t)map_w), y = (int)(i / (size_t)map_w), edge = 0;
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int nx = x + dx, ny = y + dy;
                    int inside = nx >= 0 && ny >= 0 && nx < map_w && ny < map_h;
                    size_t j = inside ? (size_t)ny * (size_t)map_w + (size_t)nx : 0;
                    int on = inside && ON(j);
                    if (!on && (dx == 0 || dy == 0)) edge = 1;
                    if (on && !label[j]) {
                        label[j] = (int32_t)regions;
                        stack[top++] = j;
                    }
                }
            if (edge) pts[n_pts++] = (pt){x, y};
        }
        size_t nh = convex_hull(pts, n_pts, hull);
        rrect r = min_area_rect(hull, nh ? nh : 1);
        if (fmin(r.w, r.h) < p->min_size) continue;
        pt c[4];
        rect_corners(&r, c);
        float score = box_score(map, map_w, map_h, stride, c);
        if (score < p->box_thresh) continue;
        rrect grown = unclip(r, p->unclip_ratio), read = unclip(r, p->read_unclip_ratio);
        if (fmin(grown.w, grown.h) < p->min_size + 2) continue;
        pt rc[4];
        page_corners(&grown, map_w, map_h, page_w, page_h, c);
        page_corners(&read, map_w, map_h, page_w, page_h, rc);
        if ((int)hypot(c[0].x - c[1].x, c[0].y - c[1].y) <= 3 || (int)hypot(c[0].x - c[3].x, c[0].y - c[3].y) <= 3)
            continue;
        if (n_boxes == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            ocr_box *g = realloc(boxes, ncap * sizeof *g);
            if (!g) goto done;
            boxes = g, cap = ncap;
        }
        ocr_box *b = &boxes[n_boxes++];
        for (int k = 0; k < 4; k++) {
            b->x[k] = (float)c[k].x, b->y[k] = (float)c[k].y;
            b->rx[k] = (float)rc[k].x, b->ry[k] = (float)rc[k].y;
        }
        b->score = score;
    }
#undef ON
    ocr_sort_boxes(boxes, n_boxes);
    *out = boxes;
    boxes = NULL;
    result = (long)n_boxes;
done:
    free(label);
    free(stack);
    free(pts);
    free(hull);
    free(boxes);
    return result;
}

static int box_before(const ocr_box *a, const ocr_box *b) {
    return a->y[0] != b->y[0] ? a->y[0] < b->y[0] : a->x[0] < b->x[0];
}

void ocr_sort_boxes(ocr_box *boxes, size_t n) {
    for (size_t i = 1; i < n; i++) /* insertion sort: stable, n is small */
        for (size_t j = i; j > 0 && box_before(&boxes[j], &boxes[j - 1]); j--) {
            ocr_box t = boxes[j];
            boxes[j] = boxes[j - 1];
            boxes[j - 1] = t;
        }
    for (size_t i = 0; i + 1 < n; i++)
        for (size_t j = i + 1; j > 0; j--) {
            if (fabsf(boxes[j].y[0] - boxes[j - 1].y[0]) < 10 && boxes[j].x[0] < boxes[j - 1].x[0]) {
                ocr_box t = boxes[j];
                boxes[j] = boxes[j - 1];
                boxes[j - 1] = t;
            } else {
                break;
            }
        }
}
