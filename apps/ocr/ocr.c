/* berth-ocr: read pages (or single text lines) with PaddleOCR's PP-OCR
 * models, on the public berth API only.
 *
 *   berth-ocr [options] CONFIG KEYS IMAGE...
 *
 * CONFIG describes the pipeline ([model.det], [model.cls], [model.rec];
 * config/ocr-cpu.ini), KEYS is the recognizer's ppocr_keys_v1.txt. Each
 * page (PNG or JPEG) is read in four stages: the detector finds text
 * boxes (detect.c, boxes.c), each box is cut out upright (crop.c), the
 * angle classifier turns upside-down lines back (classify.c), and the
 * recognizer reads the lines in batches (recognize.c).
 *
 * Prints, per page, one line per text line in reading order:
 *   FILE <TAB> N <TAB> TEXT <TAB> confidence C <TAB> box X,Y X,Y X,Y X,Y
 * (corners clockwise from the top left), and on stderr the stages' times.
 * --json prints the same as one JSON array. With --lines, each image is
 * one text line (no detection), printed as
 *   FILE <TAB> TEXT <TAB> confidence C <TAB> bucket B <TAB> time T
 * A bad image gets a one-line error on stderr and the others go on; the
 * exit status is 1 if any image failed, 2 for a usage error. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <berth/berth.h>

#include "boxes.h"
#include "classify.h"
#include "crop.h"
#include "detect.h"
#include "draw.h"
#include "image.h"
#include "page.h"
#include "recognize.h"


static const char *usage_text =
    "usage: berth-ocr [options] CONFIG KEYS IMAGE...\n"
    "\n"
    "Reads the text of pages (PNG or JPEG) with the pipeline CONFIG describes\n"
    "([model.det], [model.cls], [model.rec]; KEYS: the recognizer's key file).\n"
    "\n"
    "  --json              print the results as JSON\n"
    "  --draw PATH         write each page with its boxes outlined and numbered:\n"
    "                      PATH.png for one image, else PATH/NAME.png\n"
    "  --no-cls            skip the angle classifier\n"
    "  --max-side N        resize pages within N pixels a side (default: the\n"
    "                      detector's largest bucket, at most 960)\n"
    "  --repeat N          read each page N more times (warm) and give every\n"
    "                      read's total time (for measuring)\n"
    "  --lines             read each image as one text line (no detection)\n"
    "  --dump-input F.npy  with --lines: write the first batch's input\n"
    "  --dump-output F.npy with --lines: write the first batch's output\n";

typedef struct opts {
    int json, no_cls, lines, max_side, repeat;
    const char *draw, *dump_input, *dump_output;
    const char *config, *keys;
    char **images;
    int n_images;
} opts;

static int usage(const char *why) {
    if (why) fprintf(stderr, "berth-ocr: %s\n", why);
    fputs(usage_text, stderr);
    return 2;
}

/* Where a model runs, for the stderr line: "NAME (DEVICE)", or with
 * split = on every backend it holds, "A (DEVICE) and B (DEVICE), split":
 * naming only the first would hide that part of the model ran
 * elsewhere. */
static const char *where(berth_executor *ex, char *buf, size_t cap) {
    uint32_t n = berth_executor_backend_count(ex);
    size_t used = 0;
    buf[0] = 0;
    for (uint32_t k = 0; k < n && used < cap; k++) {
        const char *dev = NULL, *name = berth_executor_backend_at(ex, k, &dev);
        used += (size_t)snprintf(buf + used, cap - used, "%s%s (%s)", k == 0 ? "" : k + 1 == n ? " and " : ", ", name,
                                 dev ? dev : "?");
    }
    if (n > 1 && used < cap) snprintf(buf + used, cap - used, ", split");
    return buf;
}

/* ---- --lines: today's line reader ---- */

static int read_lines(const opts *o) {
    berth_error err;
    ocr_rec rec;
    if (ocr_rec_open(&rec, o->config, "rec", NULL, o->keys, &err) != BERTH_OK) {
        fprintf(stderr, "berth-ocr: %s\n", err.msg);
        return 1;
    }
    char on[512];
    fprintf(stderr, "%s: recognizer on %s\n", o->config, where(rec.ex, on, sizeof on));
    rec.dump_input = o->dump_input;
    rec.dump_output = o->dump_output;
    ocr_line *lines = calloc((size_t)o->n_images, sizeof *lines);
    if (!lines) {
        fprintf(stderr, "berth-ocr: out of memory\n");
        ocr_rec_close(&rec);
        return 1;
    }
    ocr_image_fit fit = ocr_rec_fit(&rec);
    for (int i = 0; i < o->n_images; i++) {
        lines[i].name = o->images[i];
        ocr_image img;
        /* The loader refuses an image too wide for every bucket from its
         * header's sizes, so a 65535-pixel-wide line is never decoded. */
        if (ocr_image_load(o->images[i], &fit, &img, &err) != BERTH_OK) {
            fprintf(stderr, "berth-ocr: %s\n", err.msg);
            lines[i].failed = 1;
            continue;
        }
        ocr_rec_prepare(&rec, &lines[i], &img);
        ocr_image_free(&img);
    }
    ocr_rec_run(&rec, lines, o->n_images);
    int failed = 0;
    for (int i = 0; i < o->n_images; i++) {
        ocr_line *it = &lines[i];
        if (it->failed) {
            failed = 1;
        } else {
            char plan[64] = "";
            if (it->plan_ms >= 0) snprintf(plan, sizeof plan, "; plan built in %.0f ms", it->plan_ms);
            printf("%s\t%s\tconfidence %.4f\tbucket %s\ttime %.1f ms (batch of %d%s)\n", it->name, it->text,
                   (double)it->confidence, it->bucket, it->ms, it->batch_n, plan);
        }
        free(it->text);
        free(it->pixels);
    }
    free(lines);
    ocr_rec_close(&rec);
    return failed;
}

/* ---- pages ---- */

static void json_string(const char *s) {
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') printf("\\%c", *p);
        else if (*p < 0x20) printf("\\u%04x", *p);
        else putchar(*p);
    }
    putchar('"');
}

/* PATH.png for one image, else DIR/NAME.png (NAME the image's file name
 * without its extension). */
static int draw_path(const opts *o, const char *image, char *out, size_t cap) {
    size_t n = strlen(o->draw);
    if (o->n_images == 1 && n > 4 && strcmp(o->draw + n - 4, ".png") == 0)
        return snprintf(out, cap, "%s", o->draw) < (int)cap;
    const char *base = strrchr(image, '/');
    base = base ? base + 1 : image;
    const char *dot = strrchr(base, '.');
    int len = dot && dot != base ? (int)(dot - base) : (int)strlen(base);
    return snprintf(out, cap, "%s/%.*s.png", o->draw, len, base) < (int)cap;
}

/* Prints a read page as its JSON object, with the earlier reads' times
 * `runs`; the lines berth could not read are left out, as in the text
 * output, so users see only text the recognizer gave. */
static void print_page_json(const char *path, const ocr_image *img, const ocr_page *page, int *first_json,
                            const double *runs, int n_runs) {
    size_t n = page->n;
    const ocr_box *boxes = page->boxes;
    const ocr_line *lines = page->lines;
    const ocr_page_times t = page->t;
    printf("%s\n  {\"file\": ", *first_json ? "" : ",");
    *first_json = 0;
    json_string(path);
    printf(", \"width\": %d, \"height\": %d, \"lines\": [", img->width, img->height);
    for (size_t i = 0, k = 0; i < n; i++) {
        if (lines[i].failed) continue;
        printf("%s\n    {\"text\": ", k++ ? "," : "");
        json_string(lines[i].text);
        printf(", \"confidence\": %.4f, \"box\": [", (double)lines[i].confidence);
        for (int c = 0; c < 4; c++) printf("%s[%.0f, %.0f]", c ? ", " : "", boxes[i].x[c], boxes[i].y[c]);
        printf("], \"turned\": %s}", page->turned[i] ? "true" : "false");
    }
    printf("%s], \"times_ms\": {\"detect\": %.1f, \"boxes\": %.1f, \"classify\": %.1f, \"recognize\": %.1f, "
           "\"total\": %.1f}",
           n ? "\n  " : "", t.detect, t.boxes, t.classify, t.recognize, t.total);
    if (n_runs) {
        printf(", \"runs_ms\": [");
        for (int r = 0; r < n_runs; r++) printf("%s%.1f", r ? ", " : "", runs[r]);
        printf("]");
    }
    printf("}");
}

/* Prints a read page as one tab-separated line per text line it holds,
 * in reading order, so users can cut and grep berth's output. */
static void print_page_text(const char *path, const ocr_page *page) {
    const ocr_box *boxes = page->boxes;
    const ocr_line *lines = page->lines;
    for (size_t i = 0; i < page->n; i++) {
        if (lines[i].failed) continue;
        printf("%s\t%zu\t%s\tconfidence %.4f\tbox", path, i + 1, lines[i].text, (double)lines[i].confidence);
        for (int c = 0; c < 4; c++) printf(" %.0f,%.0f", boxes[i].x[c], boxes[i].y[c]);
        printf("\n");
    }
}

/* Says on stderr how long each stage took on a page and which detector
 * bucket it ran in, keeping stdout for the text itself. */
static void report_page_times(const char *path, const ocr_page *page) {
    const ocr_page_times t = page->t;
    const ocr_det_report rep = page->rep;
    char plan[48] = "";
    if (rep.plan_ms >= 0) snprintf(plan, sizeof plan, ", plan built in %.0f ms", rep.plan_ms);
    fprintf(stderr, "%s: %zu lines; detect %.1f ms (%dx%d in bucket %s%s), boxes %.1f ms, classify %.1f ms, "
                    "recognize %.1f ms; %.1f ms in all\n",
            path, page->n, t.detect, rep.width, rep.height, rep.bucket, plan, t.boxes, t.classify, t.recognize,
            t.total);
}

/* For --draw: outlines the page's boxes on its image and writes it, so
 * users can see what berth found. Returns 1 when it could not be
 * written (the reason already said), else 0. */
static int draw_page(const opts *o, const char *path, ocr_image *img, const ocr_page *page) {
    berth_error err;
    char out[4096];
    ocr_draw_boxes(img, page->boxes, page->n);
    if (!draw_path(o, path, out, sizeof out)) {
        fprintf(stderr, "berth-ocr: %s: --draw path too long\n", path);
        return 1;
    }
    if (ocr_png_write(out, img, &err) != BERTH_OK) {
        fprintf(stderr, "berth-ocr: %s\n", err.msg);
        return 1;
    }
    fprintf(stderr, "%s: annotated image %s\n", path, out);
    return 0;
}

/* Says why a page could not be read: on stderr, and for --json also as
 * the page's object, so the array still names every image. */
static void report_page_error(const opts *o, const char *path, const char *why, int *first_json) {
    fprintf(stderr, "berth-ocr: %s\n", why);
    if (o->json) {
        printf("%s\n  {\"file\": ", *first_json ? "" : ",");
        *first_json = 0;
        json_string(path);
        printf(", \"error\": ");
        json_string(why);
        printf("}");
    }
}

/* Reads one page; prints its lines (or, for JSON, its object, with the
 * earlier reads' times `runs`). Returns 0 when the page was read, 1 when
 * it failed (the reason already said). A quiet read (a repeat for
 * measuring) prints and draws nothing and gives its time in *total_ms. */
static int read_page(ocr_pipeline *p, const opts *o, const char *path, int *first_json, const double *runs,
                     int n_runs, int quiet, double *total_ms) {
    berth_error err;
    ocr_image img = {0, 0, NULL};
    ocr_page page;
    memset(&page, 0, sizeof page);
    int failed = 1;
    char why[BERTH_ERROR_CAP] = "";
    double t_start = ocr_now_ms();
    if (ocr_image_load(path, NULL, &img, &err) != BERTH_OK || ocr_read_page(p, path, &img, &page, &err) != BERTH_OK) {
        snprintf(why, sizeof why, "%s", err.msg);
        goto done;
    }
    failed = 0;
    for (size_t i = 0; i < page.n; i++) failed |= page.lines[i].failed;
    page.t.total = ocr_now_ms() - t_start;
    if (quiet) goto done;
    if (o->json) print_page_json(path, &img, &page, first_json, runs, n_runs);
    else print_page_text(path, &page);
    report_page_times(path, &page);
    if (o->draw && draw_page(o, path, &img, &page)) failed = 1;
done:
    if (total_ms) *total_ms = page.t.total;
    if (why[0]) report_page_error(o, path, why, first_json);
    ocr_page_free(&page);
    ocr_image_free(&img);
    return failed;
}

static int read_pages(const opts *o) {
    berth_error err;
    ocr_pipeline p;
    if (ocr_pipeline_open(&p, o->config, o->keys, o->max_side, !o->no_cls, &err) != BERTH_OK) {
        fprintf(stderr, "berth-ocr: %s\n", err.msg);
        return 1;
    }
    /* On stderr, so stdout stays the lines: where each model runs. */
    char on_det[512], on_cls[512], on_rec[512];
    fprintf(stderr, "%s: detector on %s, classifier %s%s, recognizer on %s\n", o->config,
            where(p.det.ex, on_det, sizeof on_det), p.with_cls ? "on " : "off",
            p.with_cls ? where(p.cls.ex, on_cls, sizeof on_cls) : "", where(p.rec.ex, on_rec, sizeof on_rec));
    if (o->draw && !(o->n_images == 1 && strlen(o->draw) > 4 && !strcmp(o->draw + strlen(o->draw) - 4, ".png")) &&
        mkdir(o->draw, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "berth-ocr: --draw %s: cannot make the folder: %s\n", o->draw, strerror(errno));
        ocr_pipeline_close(&p);
        return 1;
    }
    int failed = 0, first_json = 1;
    double *runs = calloc((size_t)o->repeat + 1, sizeof *runs);
    if (o->json) printf("[");
    for (int i = 0; i < o->n_images && runs; i++) {
        int bad = 0;
        for (int r = 0; r < o->repeat && !bad; r++) bad = read_page(&p, o, o->images[i], &first_json, NULL, 0, 1, &runs[r]);
        failed |= bad ? read_page(&p, o, o->images[i], &first_json, NULL, 0, 0, NULL)
                      : read_page(&p, o, o->images[i], &first_json, runs, o->repeat, 0, NULL);
    }
    if (!runs) {
        fprintf(stderr, "berth-ocr: out of memory\n");
        failed = 1;
    }
    free(runs);
    if (o->json) printf("\n]\n");
    ocr_pipeline_close(&p);
    return failed;
}

int main(int argc, char **argv) {
    opts o;
    memset(&o, 0, sizeof o);
    /* Options anywhere; "--" ends them. The rest: CONFIG KEYS IMAGE... */
    char **pos = calloc((size_t)argc, sizeof *pos);
    int n_pos = 0, opts_done = 0;
    if (!pos) return usage("out of memory");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (opts_done || strncmp(a, "--", 2) != 0) {
            pos[n_pos++] = argv[i];
        } else if (!strcmp(a, "--")) {
            opts_done = 1;
        } else if (!strcmp(a, "--help")) {
            fputs(usage_text, stdout);
            free(pos);
            return 0;
        } else if (!strcmp(a, "--json")) {
            o.json = 1;
        } else if (!strcmp(a, "--no-cls")) {
            o.no_cls = 1;
        } else if (!strcmp(a, "--lines")) {
            o.lines = 1;
        } else if (!strcmp(a, "--draw") || !strcmp(a, "--max-side") || !strcmp(a, "--dump-input") ||
                   !strcmp(a, "--dump-output") || !strcmp(a, "--repeat")) {
            if (!next) {
                free(pos);
                return usage("an option needs a value");
            }
            i++;
            if (!strcmp(a, "--draw")) {
                o.draw = next;
            } else if (!strcmp(a, "--dump-input")) {
                o.dump_input = next;
            } else if (!strcmp(a, "--dump-output")) {
                o.dump_output = next;
            } else if (!strcmp(a, "--repeat")) {
                char *end;
                long v = strtol(next, &end, 10);
                if (*end || v < 0 || v > 10000) {
                    free(pos);
                    return usage("--repeat expects 0 to 10000");
                }
                o.repeat = (int)v;
            } else {
                char *end;
                long v = strtol(next, &end, 10);
                if (*end || v < 32 || v > 4096) {
                    free(pos);
                    return usage("--max-side expects 32 to 4096");
                }
                o.max_side = (int)v;
            }
        } else {
            fprintf(stderr, "berth-ocr: unknown option '%s'\n", a);
            free(pos);
            return usage(NULL);
        }
    }
    const char *bad = n_pos < 3 ? "expected CONFIG KEYS IMAGE..."
                      : (o.dump_input || o.dump_output) && !o.lines ? "--dump-input and --dump-output go with --lines"
                      : o.lines && (o.draw || o.json || o.repeat) ? "--draw, --json and --repeat read pages; --lines reads single lines"
                                                      : NULL;
    if (bad) {
        free(pos);
        return usage(bad);
    }
    o.config = pos[0];
    o.keys = pos[1];
    o.images = pos + 2;
    o.n_images = n_pos - 2;
    int rc = o.lines ? read_lines(&o) : read_pages(&o);
    free(pos);
    return rc;
}
