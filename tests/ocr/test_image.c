/* Decoding: PNG and JPEG files written here with libpng and libjpeg
 * from known pixels, then read back; and every refusal path. */
#include <stdio.h> /* before jpeglib.h, which uses FILE */
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include <jpeglib.h>
#include <png.h>

#include "check.h"
#include "image.h"
#include "largest_alloc.h"

static char dir[256];

static const char *path_of(const char *name) {
    static char p[4][320];
    static int k;
    k = (k + 1) % 4;
    snprintf(p[k], sizeof p[k], "%s/%s", dir, name);
    return p[k];
}

static void write_bytes(const char *name, const void *data, size_t n) {
    FILE *f = fopen(path_of(name), "wb");
    fwrite(data, 1, n, f);
    fclose(f);
}

/* Grey + alpha: opaque pixels keep their grey in R, G and B; a fully
 * transparent pixel becomes white; half-transparent black on white is
 * composited in linear light, so it is sRGB (128/255)^(1/2.2) * 255,
 * about 186, not the 127 that blending the 8-bit values would give. */
static void test_png_grey_alpha(void) {
    uint8_t ga[1][4][2] = {{{0, 255}, {200, 255}, {0, 0}, {0, 128}}};
    png_image pi;
    memset(&pi, 0, sizeof pi);
    pi.version = PNG_IMAGE_VERSION;
    pi.width = 4;
    pi.height = 1;
    pi.format = PNG_FORMAT_GA;
    CHECK(png_image_write_to_file(&pi, path_of("ga.png"), 0, ga, 0, NULL));
    ocr_image img;
    berth_error err;
    CHECK(ocr_image_load(path_of("ga.png"), NULL, &img, &err) == BERTH_OK);
    CHECK(img.width == 4 && img.height == 1);
    if (img.rgb) {
        for (int c = 0; c < 3; c++) {
            CHECK(img.rgb[c] == 0);
            CHECK(img.rgb[3 + c] == 200);
            CHECK(img.rgb[6 + c] == 255);
            CHECK(img.rgb[9 + c] >= 183 && img.rgb[9 + c] <= 190);
        }
    }
    ocr_image_free(&img);
}

static void test_png_rgb(void) {
    uint8_t rgb[2][3][3] = {{{255, 0, 0}, {0, 255, 0}, {0, 0, 255}},
                            {{1, 2, 3}, {4, 5, 6}, {250, 251, 252}}};
    png_image pi;
    memset(&pi, 0, sizeof pi);
    pi.version = PNG_IMAGE_VERSION;
    pi.width = 3;
    pi.height = 2;
    pi.format = PNG_FORMAT_RGB;
    CHECK(png_image_write_to_file(&pi, path_of("rgb.png"), 0, rgb, 0, NULL));
    ocr_image img;
    berth_error err;
    CHECK(ocr_image_load(path_of("rgb.png"), NULL, &img, &err) == BERTH_OK);
    CHECK(img.width == 3 && img.height == 2);
    if (img.rgb) CHECK(memcmp(img.rgb, rgb, sizeof rgb) == 0);
    ocr_image_free(&img);
}

/* A baseline JPEG of w x h RGB pixels at quality 100. */
static void write_jpeg(const char *name, int w, int h, const uint8_t *rgb) {
    struct jpeg_compress_struct cc;
    struct jpeg_error_mgr em;
    cc.err = jpeg_std_error(&em);
    jpeg_create_compress(&cc);
    FILE *f = fopen(path_of(name), "wb");
    jpeg_stdio_dest(&cc, f);
    cc.image_width = (JDIMENSION)w;
    cc.image_height = (JDIMENSION)h;
    cc.input_components = 3;
    cc.in_color_space = JCS_RGB;
    jpeg_set_defaults(&cc);
    jpeg_set_quality(&cc, 100, TRUE);
    jpeg_start_compress(&cc, TRUE);
    while (cc.next_scanline < (JDIMENSION)h) {
        JSAMPROW row = (JSAMPROW)(rgb + (size_t)cc.next_scanline * (size_t)w * 3);
        jpeg_write_scanlines(&cc, &row, 1);
    }
    jpeg_finish_compress(&cc);
    jpeg_destroy_compress(&cc);
    fclose(f);
}

/* JPEG is lossy: flat 8x8 blocks at quality 100 come back within a few
 * levels. Written with libjpeg, named .png to show the magic decides. */
static void test_jpeg(void) {
    enum { W = 16, H = 8 };
    uint8_t rgb[H][W][3];
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            uint8_t v = x < 8 ? 30 : 220;
            rgb[y][x][0] = rgb[y][x][1] = rgb[y][x][2] = v;
        }
    write_jpeg("block.png", W, H, &rgb[0][0][0]);

    ocr_image img;
    berth_error err;
    CHECK(ocr_image_load(path_of("block.png"), NULL, &img, &err) == BERTH_OK);
    CHECK(img.width == W && img.height == H);
    if (img.rgb) {
        int worst = 0;
        for (int i = 0; i < W * H * 3; i++) {
            int d = img.rgb[i] - (&rgb[0][0][0])[i];
            if (d < 0) d = -d;
            if (d > worst) worst = d;
        }
        CHECK(worst <= 3);
    }
    ocr_image_free(&img);

    /* The same file cut short: libjpeg would warn and fill the missing
     * rows with grey, an error here with libjpeg's warning; cut to the header alone it has no
     * scan at all, an error too. */
    FILE *g = fopen(path_of("block.png"), "rb");
    unsigned char buf[4096];
    size_t n = fread(buf, 1, sizeof buf, g);
    fclose(g);
    CHECK(n > 200);
    write_bytes("short.jpg", buf, n - 4);
    CHECK(ocr_image_load(path_of("short.jpg"), NULL, &img, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "short.jpg: bad JPEG: Premature end of JPEG file");
    CHECK(img.rgb == NULL);
    write_bytes("cut.jpg", buf, 20);
    CHECK(ocr_image_load(path_of("cut.jpg"), NULL, &img, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "cut.jpg: bad JPEG");
    CHECK(img.rgb == NULL);
}

static void test_refusals(void) {
    ocr_image img;
    berth_error err;
    CHECK(ocr_image_load(path_of("nope.png"), NULL, &img, &err) == BERTH_ERR_IO);
    CHECK_CONTAINS(err.msg, "nope.png: cannot open");

    write_bytes("text.png", "hello, not an image\n", 20);
    CHECK(ocr_image_load(path_of("text.png"), NULL, &img, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "text.png: not a PNG or JPEG image (first bytes 68 65 6c 6c)");

    write_bytes("empty.png", "", 0);
    CHECK(ocr_image_load(path_of("empty.png"), NULL, &img, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "an empty file");


    /* A PNG signature and IHDR claiming 100000 x 1 pixels (CRC wrong):
     * refused by libpng or by the size check, never allocated. */
    static const unsigned char wide[] = {
        0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R',
        0, 1, 0x86, 0xa0, 0, 0, 0, 1, 8, 2, 0, 0, 0, 0, 0, 0, 0};
    write_bytes("wide.png", wide, sizeof wide);
    CHECK(ocr_image_load(path_of("wide.png"), NULL, &img, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "wide.png: ");

    /* A valid PNG truncated after its header. */
    uint8_t px[4 * 4 * 3] = {0};
    png_image pi;
    memset(&pi, 0, sizeof pi);
    pi.version = PNG_IMAGE_VERSION;
    pi.width = 4;
    pi.height = 4;
    pi.format = PNG_FORMAT_RGB;
    CHECK(png_image_write_to_file(&pi, path_of("ok.png"), 0, px, 0, NULL));
    FILE *f = fopen(path_of("ok.png"), "rb");
    unsigned char buf[256];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    CHECK(n > 40);
    write_bytes("trunc.png", buf, 40);
    CHECK(ocr_image_load(path_of("trunc.png"), NULL, &img, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "trunc.png: bad PNG");
    CHECK(img.rgb == NULL);
}

static unsigned char *read_all(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static unsigned char buf[1 << 20];
    *n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return buf;
}

/* Expect `name` (in the test's dir) refused with exactly "PATH: why". */
static void expect_refused(const char *name, const char *why) {
    ocr_image img;
    berth_error err;
    CHECK(ocr_image_load(path_of(name), NULL, &img, &err) == BERTH_ERR_INVALID);
    char want[600];
    snprintf(want, sizeof want, "%s: %s", path_of(name), why);
    CHECK_MSG(err.msg, want);
    CHECK(img.rgb == NULL && img.width == 0);
}

/* The committed samples damaged as files are in transit: each is an
 * error naming the file and what libjpeg or libpng found, never an image
 * with garbage or grey where the data was lost. */
static void test_damaged_samples(const char *samples) {
    char p[512];
    size_t n = 0;
    ocr_image img;
    berth_error err;

    /* A JPEG cut at 60% with an end marker (FF D9) put back: libjpeg
     * meets the marker inside the scan, warns and decodes the rest as
     * grey; before the warning was an error this was read as a page. */
    snprintf(p, sizeof p, "%s/latin_long.jpg", samples);
    unsigned char *jpg = read_all(p, &n);
    CHECK(jpg && n > 1000);
    if (!jpg) return;
    CHECK(ocr_image_load(p, NULL, &img, &err) == BERTH_OK);
    ocr_image_free(&img);
    size_t cut = n * 6 / 10;
    jpg[cut] = 0xff;
    jpg[cut + 1] = 0xd9;
    write_bytes("cut60.jpg", jpg, cut + 2);
    expect_refused("cut60.jpg", "bad JPEG: Corrupt JPEG data: premature end of data segment");
    /* and without the marker: the file simply ends */
    write_bytes("cut60_open.jpg", jpg, cut);
    expect_refused("cut60_open.jpg", "bad JPEG: Premature end of JPEG file");

    snprintf(p, sizeof p, "%s/latin_sentence.png", samples);
    unsigned char *png = read_all(p, &n);
    CHECK(png && n > 1000 && !memcmp(png + 37, "IDAT", 4));
    if (!png || n <= 1000 || memcmp(png + 37, "IDAT", 4)) return;
    CHECK(ocr_image_load(p, NULL, &img, &err) == BERTH_OK);
    ocr_image_free(&img);
    /* cut at 60%, inside IDAT */
    write_bytes("cut60.png", png, n * 6 / 10);
    expect_refused("cut60.png", "bad PNG: read beyond end of data");
    /* one bit flipped in the middle of IDAT's compressed data: zlib or
     * the chunk's CRC finds it, whichever reads it first */
    size_t idat = (size_t)png[33] << 24 | (size_t)png[34] << 16 | (size_t)png[35] << 8 | png[36];
    png[41 + idat / 2] ^= 0x10;
    write_bytes("flip_idat.png", png, n);
    CHECK(ocr_image_load(path_of("flip_idat.png"), NULL, &img, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "flip_idat.png: bad PNG: IDAT: ");
    CHECK(img.rgb == NULL);
    png[41 + idat / 2] ^= 0x10;
    /* one bit flipped in IDAT's CRC alone: the data decodes, the CRC
     * does not match */
    png[41 + idat] ^= 0x01;
    write_bytes("flip_crc.png", png, n);
    expect_refused("flip_crc.png", "bad PNG: IDAT: CRC error");
}

/* berth-ocr's fit at the PP-OCRv4 height and its widest bucket. */
static const ocr_image_fit model_fit = {48, 1280};

/* An 8-bit grey PNG of w x h pixels of one value, written row by row so
 * the test never holds the whole image: 65535 x 1024 compresses to some
 * 70 KB, yet decodes to 200 MB of RGB. */
static void write_flat_png(const char *name, int w, int h) {
    FILE *f = fopen(path_of(name), "wb");
    png_structp ps = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(ps);
    png_init_io(ps, f);
    png_set_IHDR(ps, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_GRAY,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(ps, info);
    png_bytep row = malloc((size_t)w);
    memset(row, 200, (size_t)w);
    for (int y = 0; y < h; y++) png_write_row(ps, row);
    png_write_end(ps, NULL);
    png_destroy_write_struct(&ps, &info);
    free(row);
    fclose(f);
}

/* Load with the model's fit, expecting the refusal `why` after "PATH: "
 * and no allocation anywhere near the decoded size. */
static void expect_too_wide(const char *name, const char *why, size_t decoded) {
    ocr_image img;
    berth_error err;
    largest_alloc_start();
    berth_status st = ocr_image_load(path_of(name), &model_fit, &img, &err);
    size_t largest = largest_alloc_stop();
    CHECK(st == BERTH_ERR_INVALID);
    char want[600];
    snprintf(want, sizeof want, "%s: %s", path_of(name), why);
    CHECK_MSG(err.msg, want);
    CHECK(img.rgb == NULL && img.width == 0);
    fprintf(stderr, "%s: largest allocation %zu bytes, decoded would be %zu\n", name, largest,
            decoded);
    /* The file itself was read into memory: the counter saw that much. */
    CHECK(largest > 0);
    CHECK(largest < decoded / 16);
}

static void test_too_wide_from_header(void) {
    /* Decoded, this is 65535 * 1024 * 3 bytes; refused from IHDR. */
    write_flat_png("wide_65535.png", 65535, 1024);
    expect_too_wide("wide_65535.png",
                    "65535x1024 image is 3072 pixels wide at height 48; the widest bucket takes 1280",
                    (size_t)65535 * 1024 * 3);

    /* A 16x8 JPEG whose frame header (SOF0) is made to say 65000x1000:
     * refused from jpeg_read_header's sizes, before any scan is read. */
    uint8_t px[8 * 16 * 3];
    memset(px, 90, sizeof px);
    write_jpeg("small.jpg", 16, 8, px);
    FILE *f = fopen(path_of("small.jpg"), "rb");
    unsigned char buf[4096];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    size_t sof = 0;
    for (size_t i = 2; i + 9 < n && !sof; i++)
        if (buf[i] == 0xff && buf[i + 1] == 0xc0) sof = i;
    CHECK(sof != 0);
    buf[sof + 5] = 1000 >> 8;
    buf[sof + 6] = 1000 & 0xff;
    buf[sof + 7] = 65000 >> 8;
    buf[sof + 8] = 65000 & 0xff;
    write_bytes("wide_65000.jpg", buf, n);
    expect_too_wide("wide_65000.jpg",
                    "65000x1000 image is 3120 pixels wide at height 48; the widest bucket takes 1280",
                    (size_t)65000 * 1000 * 3);

    /* The edge: 1280 pixels at height 48 fits the widest bucket, 1281
     * does not. */
    write_flat_png("w1280.png", 1280, 48);
    ocr_image img;
    berth_error err;
    CHECK(ocr_image_load(path_of("w1280.png"), &model_fit, &img, &err) == BERTH_OK);
    CHECK(img.width == 1280 && img.height == 48 && img.rgb && img.rgb[0] == 200);
    ocr_image_free(&img);
    write_flat_png("w1281.png", 1281, 48);
    CHECK(ocr_image_load(path_of("w1281.png"), &model_fit, &img, &err) == BERTH_ERR_INVALID);
    char want[600];
    snprintf(want, sizeof want,
             "%s: 1281x48 image is 1281 pixels wide at height 48; the widest bucket takes 1280",
             path_of("w1281.png"));
    CHECK_MSG(err.msg, want);
    CHECK(img.rgb == NULL);
}

/* A named pipe, a directory and a character device given as the image:
 * each refused at once with its one line. The open never waits for a FIFO
 * writer; if it did, the alarm ends the test as a failure, not a hang. */
static void test_file_kinds(void) {
    char fifo[320], sub[320];
    snprintf(fifo, sizeof fifo, "%s", path_of("image.fifo"));
    snprintf(sub, sizeof sub, "%s", path_of("image.dir"));
    unlink(fifo);
    CHECK(mkfifo(fifo, 0600) == 0);
    rmdir(sub);
    CHECK(mkdir(sub, 0700) == 0);
    const char *kinds[] = {"a named pipe (FIFO)", "a directory", "a character device"};
    const char *paths[] = {fifo, sub, "/dev/null"};
    alarm(20);
    for (int k = 0; k < 3; k++) {
        ocr_image img;
        berth_error err;
        CHECK(ocr_image_load(paths[k], &model_fit, &img, &err) == BERTH_ERR_IO);
        char want[600];
        snprintf(want, sizeof want, "%s: the image is %s, expected a regular file", paths[k],
                 kinds[k]);
        CHECK_MSG(err.msg, want);
        CHECK(img.rgb == NULL);
    }
    alarm(0);
    unlink(fifo);
    rmdir(sub);
}

int main(int argc, char **argv) {
    snprintf(dir, sizeof dir, "%s", argc > 1 ? argv[1] : ".");
    test_png_grey_alpha();
    test_png_rgb();
    test_jpeg();
    test_refusals();
    test_too_wide_from_header();
    test_file_kinds();
    if (argc > 2) test_damaged_samples(argv[2]);
    else fprintf(stderr, "no samples dir given: the damaged samples are not tried\n");
    return check_exit();
}
