/* Writes the seed corpus of fuzz_image (tests/ocr/corpus): a few tiny PNG
 * and JPEG files, one per decoding path the loader takes (colour types,
 * bit depths, palette with transparency, interlacing; baseline, grey and
 * progressive JPEG). The seeds are committed; this program is how they
 * were made and is built with the fuzz targets (make_image_seeds DIR).
 * Any libpng or libjpeg error ends it: it has no untrusted input. */
#include <stdint.h>
#include <stdio.h> /* before jpeglib.h, which uses FILE */
#include <stdlib.h>
#include <string.h>

#include <jpeglib.h>
#include <png.h>

static const char *out_dir;

static FILE *create(const char *name) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", out_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        exit(1);
    }
    return f;
}

/* A w x h PNG of colour type `type` and `depth` bits whose samples run
 * through a small pattern; palette images get four entries, the last two
 * partly transparent. */
static void png_seed(const char *name, int w, int h, int type, int depth, int interlace) {
    FILE *f = create(name);
    png_structp ps = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(ps);
    png_init_io(ps, f);
    png_set_compression_level(ps, 9);
    png_set_IHDR(ps, info, (png_uint_32)w, (png_uint_32)h, depth, type,
                 interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    if (type == PNG_COLOR_TYPE_PALETTE) {
        png_color pal[4] = {{255, 255, 255}, {0, 0, 0}, {200, 30, 30}, {30, 30, 200}};
        png_byte alpha[4] = {255, 255, 128, 0};
        png_set_PLTE(ps, info, pal, 4);
        png_set_tRNS(ps, info, alpha, 4, NULL);
    }
    png_write_info(ps, info);
    int channels = type == PNG_COLOR_TYPE_GRAY ? 1
                   : type == PNG_COLOR_TYPE_GRAY_ALPHA ? 2
                   : type == PNG_COLOR_TYPE_RGB ? 3
                   : type == PNG_COLOR_TYPE_RGB_ALPHA ? 4
                                                      : 1;
    size_t row_bytes = ((size_t)w * (size_t)channels * (size_t)depth + 7) / 8;
    png_bytep rows = calloc((size_t)h, row_bytes);
    png_bytepp ptrs = malloc((size_t)h * sizeof *ptrs);
    int max = type == PNG_COLOR_TYPE_PALETTE ? 3 : (1 << depth) - 1;
    for (int y = 0; y < h; y++) {
        ptrs[y] = rows + (size_t)y * row_bytes;
        for (int i = 0; i < w * channels; i++) {
            int v = (i * 7 + y * 3) % (max + 1);
            if (depth == 16) {
                ptrs[y][2 * i] = (png_byte)(v >> 8);
                ptrs[y][2 * i + 1] = (png_byte)v;
            } else if (depth == 8) {
                ptrs[y][i] = (png_byte)v;
            } else {
                int bit = i * depth;
                ptrs[y][bit / 8] |= (png_byte)(v << (8 - depth - bit % 8));
            }
        }
    }
    png_write_image(ps, ptrs);
    png_write_end(ps, NULL);
    png_destroy_write_struct(&ps, &info);
    free(ptrs);
    free(rows);
    fclose(f);
}

/* A w x h JPEG of `components` (1 grey, 3 RGB), progressive or baseline. */
static void jpeg_seed(const char *name, int w, int h, int components, int progressive) {
    FILE *f = create(name);
    struct jpeg_compress_struct cc;
    struct jpeg_error_mgr em;
    cc.err = jpeg_std_error(&em);
    jpeg_create_compress(&cc);
    jpeg_stdio_dest(&cc, f);
    cc.image_width = (JDIMENSION)w;
    cc.image_height = (JDIMENSION)h;
    cc.input_components = components;
    cc.in_color_space = components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&cc);
    jpeg_set_quality(&cc, 50, TRUE);
    if (progressive) jpeg_simple_progression(&cc);
    jpeg_start_compress(&cc, TRUE);
    JSAMPLE *row = malloc((size_t)w * (size_t)components);
    while (cc.next_scanline < cc.image_height) {
        for (int i = 0; i < w * components; i++)
            row[i] = (JSAMPLE)((i * 40 + (int)cc.next_scanline * 25) & 0xff);
        jpeg_write_scanlines(&cc, &row, 1);
    }
    jpeg_finish_compress(&cc);
    jpeg_destroy_compress(&cc);
    free(row);
    fclose(f);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: make_image_seeds DIR\n");
        return 2;
    }
    out_dir = argv[1];
    png_seed("rgb8.png", 3, 2, PNG_COLOR_TYPE_RGB, 8, 0);
    png_seed("grey_alpha8.png", 4, 1, PNG_COLOR_TYPE_GRAY_ALPHA, 8, 0);
    png_seed("grey1.png", 9, 2, PNG_COLOR_TYPE_GRAY, 1, 0);
    png_seed("grey16.png", 2, 2, PNG_COLOR_TYPE_GRAY, 16, 0);
    png_seed("palette_trns.png", 3, 3, PNG_COLOR_TYPE_PALETTE, 2, 0);
    png_seed("rgba16_adam7.png", 5, 3, PNG_COLOR_TYPE_RGB_ALPHA, 16, 1);
    jpeg_seed("rgb_baseline.jpg", 16, 8, 3, 0);
    jpeg_seed("grey.jpg", 8, 8, 1, 0);
    jpeg_seed("rgb_progressive.jpg", 16, 16, 3, 1);
    return 0;
}
