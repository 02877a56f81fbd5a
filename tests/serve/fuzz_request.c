/* libFuzzer target: the infer request reader of `berth serve`, on a model
 * with a batched float input and an int64 input sharing a dyn dim. The
 * first byte picks how the body is framed: JSON only, or JSON followed by
 * binary tensor data with the JSON's length taken from the next byte.
 * Whatever the bytes, the reader returns a request or a 400 naming why,
 * never reads past the body, and frees everything. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

static berth_io_info in[2] = {
    {"x", BERTH_DTYPE_F32, 2, {8, 4}, {"batch", NULL}},
    {"ids", BERTH_DTYPE_I64, 2, {8, 16}, {"batch", "len"}},
};
static berth_io_info out[2] = {
    {"y", BERTH_DTYPE_F32, 2, {8, 3}, {"batch", NULL}},
    {"mask", BERTH_DTYPE_U8, 1, {8}, {"batch"}},
};
static const serve_sig sig = {2, 2, in, out, "batch"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    size_t header_len = data[0] & 1 ? (size_t)data[1] * 4 : SIZE_MAX;
    /* a copy of exactly the body, so reading one byte past it is caught */
    size_t len = size - 2;
    char *body = malloc(len ? len : 1);
    if (!body) return 0;
    memcpy(body, data + 2, len);
    serve_infer r;
    serve_error e;
    if (serve_infer_parse(&sig, body, len, header_len, &r, &e) == 0) {
        if (!r.in[0].data || !r.in[1].data || r.rows != r.in[0].dims[0] || r.in[1].dims[0] != r.rows) abort();
        if (r.in[0].bytes != (size_t)r.in[0].dims[0] * 16) abort();
        serve_infer_free(&sig, &r);
    } else if (e.status != 400 || !e.msg[0]) {
        abort();
    }
    free(body);
    return 0;
}
