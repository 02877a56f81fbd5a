/* Decoding: PNG and JPEG files written here with libpng and libjpeg
 * from known pixels, then read back; and every refusal path. */
#include <stdio.h> /* before jpeglib.h, which uses FILE */
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <png.h>

#include "check.h"
#include "image.h"

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
    CHECK(ocr_image_load(path_of("ga.png"), &img, &err) == BERTH_OK);
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
    CHECK(ocr_image_load(path_of("rgb.png"), &img, &err) == BERTH_OK);
    CHECK(img.width == 3 && img.height == 2);
    if (img.rgb) CHECK(memcmp(img.rgb, rgb, sizeof rgb) == 0);
    ocr_image_free(&img);
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
    struct jpeg_compress_struct cc;
    struct jpeg_error_mgr em;
    cc.err = jpeg_std_error(&em);
    jpeg_create_compress(&cc);
    FILE *f = fopen(path_of("block.png"), "wb");
    jpeg_stdio_dest(&cc, f);
    cc.image_width = W;
    cc.image_height = H;
    cc.input_components = 3;
    cc.in_color_space = JCS_RGB;
    jpeg_set_defaults(&cc);
    jpeg_set_quality(&cc, 100, TRUE);
    jpeg_start_compress(&cc, TRUE);
    while (cc.next_scanline < H) {
        JSAMPROW row = &rgb[cc.next_scanline][0][0];
        jpeg_write_scanlines(&cc, &row, 1);
    }
    jpeg_finish_compress(&cc);
    jpeg_destroy_compress(&cc);
    fclose(f);

    ocr_image img;
    berth_error err;
    CHECK(ocr_image_load(path_of("block.png"), &img, &err) == BERTH_OK);
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

    /* The same file cut short: libjpeg warns and pads; cut to the
     * header alone it has no scan at all, an error. */
    FILE *g = fopen(path_of("block.png"), "rb");
    unsigned char buf[4096];
    size_t n = fread(buf, 1, sizeof buf, g);
    fclose(g);
    CHECK(n > 200);
    write_bytes("cut.jpg", buf, 20);
    CHECK(ocr_image_load(path_of("cut.jpg"), &img, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "cut.jpg: bad JPEG");
    CHECK(img.rgb == NULL);
}

static void test_refusals(void) {
    ocr_image img;
    berth_error err;
    CHECK(ocr_image_load(path_of("nope.png"), &img, &err) == BERTH_ERR_IO);
    CHECK_CONTAINS(err.msg, "nope.png: cannot open");

    write_bytes("text.png", "hello, not an image\n", 20);
    CHECK(ocr_image_load(path_of("text.png"), &img, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "text.png: not a PNG or JPEG image (first bytes 68 65 6c 6c)");

    write_bytes("empty.png", "", 0);
    CHECK(ocr_image_load(path_of("empty.png"), &img, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "an empty file");

    CHECK(ocr_image_load(dir, &img, &err) != BERTH_OK);
    CHECK(img.rgb == NULL);

    /* A PNG signature and IHDR claiming 100000 x 1 pixels (CRC wrong):
     * refused by libpng or by the size check, never allocated. */
    static const unsigned char wide[] = {
        0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R',
        0, 1, 0x86, 0xa0, 0, 0, 0, 1, 8, 2, 0, 0, 0, 0, 0, 0, 0};
    write_bytes("wide.png", wide, sizeof wide);
    CHECK(ocr_image_load(path_of("wide.png"), &img, &err) == BERTH_ERR_INVALID);
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
    CHECK(ocr_image_load(path_of("trunc.png"), &img, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "trunc.png: bad PNG");
    CHECK(img.rgb == NULL);
}

int main(int argc, char **argv) {
    snprintf(dir, sizeof dir, "%s", argc > 1 ? argv[1] : ".");
    test_png_grey_alpha();
    test_png_rgb();
    test_jpeg();
    test_refusals();
    return check_exit();
}
