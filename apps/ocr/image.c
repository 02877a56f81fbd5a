/* PNG through libpng's simplified API (no setjmp, every colour type
 * converted for us), JPEG through libjpeg(-turbo) with its error exit
 * turned into a longjmp, so a corrupt file is a message, not an exit. */
#include "image.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h> /* before jpeglib.h, which uses FILE */
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include <jpeglib.h>
#include <jerror.h> /* after jpeglib.h: the message codes */
#include <png.h>

#include "preprocess.h"
#include "util.h"

/* Larger files are not text-line images; refusing them early keeps a
 * wrong argument (a disk image, a video) from being read into memory. */
#define OCR_FILE_MAX (256L * 1024 * 1024)

/* A message "PATH: what", cut to fit the error buffer. */
__attribute__((format(printf, 4, 5)))
static berth_status fail(berth_error *err, berth_status st, const char *path, const char *fmt,
                         ...) {
    int n = snprintf(err->msg, sizeof err->msg, "%s: ", path);
    if (n < 0 || (size_t)n >= sizeof err->msg) return st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg + n, sizeof err->msg - (size_t)n, fmt, ap);
    va_end(ap);
    return st;
}

static berth_status read_file(const char *path, unsigned char **data, size_t *size,
                              berth_error *err) {
    struct stat st;
    int fd = berth_open_regular(path, "image", &st, err);
    if (fd < 0) return BERTH_ERR_IO;
    off_t n = st.st_size;
    if (n > OCR_FILE_MAX) {
        close(fd);
        return fail(err, BERTH_ERR_INVALID, path, "file larger than 256 MiB, not a text-line image");
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        close(fd);
        return fail(err, BERTH_ERR_IO, path, "cannot open: %s", strerror(errno));
    }
    unsigned char *buf = malloc(n ? (size_t)n : 1);
    if (!buf) {
        fclose(f);
        return fail(err, BERTH_ERR_NOMEM, path, "out of memory reading the file");
    }
    size_t got = fread(buf, 1, (size_t)n, f);
    int bad = ferror(f);
    fclose(f);
    if (bad || got != (size_t)n) {
        free(buf);
        return fail(err, BERTH_ERR_IO, path, "short read");
    }
    *data = buf;
    *size = (size_t)n;
    return BERTH_OK;
}

/* Called with the sizes from the header, before anything is decoded:
 * an image refused here never has its pixels allocated. */
static berth_status check_size(const char *path, long w, long h, const ocr_image_fit *fit,
                               berth_error *err) {
    if (w < 1 || h < 1 || w > OCR_IMAGE_MAX_SIDE || h > OCR_IMAGE_MAX_SIDE ||
        (unsigned long)w * (unsigned long)h > OCR_IMAGE_MAX_PIXELS)
        return fail(err, BERTH_ERR_INVALID, path,
                    "image is %ldx%ld pixels; expected each side 1..65535 and at most 64 Mpixels",
                    w, h);
    if (fit && fit->height > 0) {
        int64_t rw = ocr_resized_width((int)w, (int)h, fit->height);
        if (rw > fit->max_width)
            return fail(err, BERTH_ERR_INVALID, path,
                        "%ldx%ld image is %lld pixels wide at height %d; the widest bucket takes %lld",
                        w, h, (long long)rw, fit->height, (long long)fit->max_width);
    }
    return BERTH_OK;
}

static berth_status load_png(const char *path, const unsigned char *data, size_t size,
                             const ocr_image_fit *fit, ocr_image *img, berth_error *err) {
    png_image pi;
    memset(&pi, 0, sizeof pi);
    pi.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&pi, data, size)) {
        berth_status st = fail(err, BERTH_ERR_INVALID, path, "bad PNG: %s", pi.message);
        png_image_free(&pi);
        return st;
    }
    berth_status st = check_size(path, (long)pi.width, (long)pi.height, fit, err);
    if (st != BERTH_OK) {
        png_image_free(&pi);
        return st;
    }
    pi.format = PNG_FORMAT_RGB;
    uint8_t *rgb = malloc(PNG_IMAGE_SIZE(pi));
    if (!rgb) {
        png_image_free(&pi);
        return fail(err, BERTH_ERR_NOMEM, path, "out of memory decoding the PNG");
    }
    png_color white = {255, 255, 255};
    if (!png_image_finish_read(&pi, &white, rgb, 0, NULL)) {
        st = fail(err, BERTH_ERR_INVALID, path, "bad PNG: %s", pi.message);
        png_image_free(&pi);
        free(rgb);
        return st;
    }
    img->width = (int)pi.width;
    img->height = (int)pi.height;
    img->rgb = rgb;
    png_image_free(&pi);
    return BERTH_OK;
}

typedef struct jpeg_failure {
    struct jpeg_error_mgr mgr;
    jmp_buf jump;
    char msg[JMSG_LENGTH_MAX];
} jpeg_failure;

static void jpeg_on_error(j_common_ptr c) {
    jpeg_failure *f = (jpeg_failure *)c->err;
    c->err->format_message(c, f->msg);
    longjmp(f->jump, 1);
}

/* libjpeg prints warnings to stderr and decodes on; a library never
 * prints, and a warning here means corrupt or truncated data (a file
 * cut short, an end marker in the middle of a scan, a bad Huffman code,
 * bytes lost before a marker) whose damaged rows libjpeg fills with grey
 * or garbage: each is an error with libjpeg's message, as error_exit
 * would be. Two warnings say only that a header field is of a newer or
 * unknown kind and the image decodes as usual; trace messages (level 0
 * and up) are not wanted at all. */
static void jpeg_on_emit(j_common_ptr c, int msg_level) {
    if (msg_level >= 0) return;
    if (c->err->msg_code == JWRN_JFIF_MAJOR || c->err->msg_code == JWRN_ADOBE_XFORM) return;
    jpeg_on_error(c);
}

static berth_status load_jpeg(const char *path, const unsigned char *data, size_t size,
                              const ocr_image_fit *fit, ocr_image *img, berth_error *err) {
    struct jpeg_decompress_struct ci;
    jpeg_failure jf;
    /* Written after setjmp and read after longjmp: must be volatile. */
    uint8_t *volatile rgb = NULL;
    volatile berth_status st = BERTH_OK;
    ci.err = jpeg_std_error(&jf.mgr);
    jf.mgr.error_exit = jpeg_on_error;
    jf.mgr.emit_message = jpeg_on_emit;
    if (setjmp(jf.jump)) {
        jpeg_destroy_decompress(&ci);
        free(rgb);
        return fail(err, BERTH_ERR_INVALID, path, "bad JPEG: %s", jf.msg);
    }
    jpeg_create_decompress(&ci);
    jpeg_mem_src(&ci, (unsigned char *)data, (unsigned long)size);
    jpeg_read_header(&ci, TRUE);
    st = check_size(path, (long)ci.image_width, (long)ci.image_height, fit, err);
    if (st != BERTH_OK) {
        jpeg_destroy_decompress(&ci);
        return st;
    }
    ci.out_color_space = JCS_RGB;
    jpeg_start_decompress(&ci);
    if (ci.output_components != 3) {
        jpeg_destroy_decompress(&ci);
        return fail(err, BERTH_ERR_INVALID, path, "JPEG did not decode to 3 components");
    }
    size_t row = (size_t)ci.output_width * 3;
    rgb = malloc(row * ci.output_height);
    if (!rgb) {
        jpeg_destroy_decompress(&ci);
        return fail(err, BERTH_ERR_NOMEM, path, "out of memory decoding the JPEG");
    }
    while (ci.output_scanline < ci.output_height) {
        JSAMPROW line = rgb + row * ci.output_scanline;
        jpeg_read_scanlines(&ci, &line, 1);
    }
    jpeg_finish_decompress(&ci);
    img->width = (int)ci.output_width;
    img->height = (int)ci.output_height;
    img->rgb = rgb;
    jpeg_destroy_decompress(&ci);
    return BERTH_OK;
}

berth_status ocr_image_decode(const char *name, const unsigned char *data, size_t size,
                              const ocr_image_fit *fit, ocr_image *img, berth_error *err) {
    memset(img, 0, sizeof *img);
    static const unsigned char png_magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (size >= 8 && memcmp(data, png_magic, 8) == 0) return load_png(name, data, size, fit, img, err);
    if (size >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff)
        return load_jpeg(name, data, size, fit, img, err);
    char found[32] = "an empty file";
    if (size > 0)
        snprintf(found, sizeof found, "first bytes %02x %02x %02x %02x", data[0],
                 size > 1 ? data[1] : 0, size > 2 ? data[2] : 0, size > 3 ? data[3] : 0);
    return fail(err, BERTH_ERR_INVALID, name, "not a PNG or JPEG image (%s)", found);
}

berth_status ocr_image_load(const char *path, const ocr_image_fit *fit, ocr_image *img,
                            berth_error *err) {
    memset(img, 0, sizeof *img);
    unsigned char *data = NULL;
    size_t size = 0;
    berth_status st = read_file(path, &data, &size, err);
    if (st != BERTH_OK) return st;
    st = ocr_image_decode(path, data, size, fit, img, err);
    free(data);
    return st;
}

void ocr_image_free(ocr_image *img) {
    free(img->rgb);
    memset(img, 0, sizeof *img);
}
