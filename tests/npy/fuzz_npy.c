/* libFuzzer target for the .npy reader: any bytes must be either refused
 * with a one-line message naming the input, leaving the tensor empty, or
 * read into a tensor whose bytes are exactly its shape times its dtype
 * and equal the bytes at the end of the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "npy.h"

static void require(int cond) {
    if (!cond) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    berth_tensor t;
    berth_error err;
    memset(&err, 0, sizeof err);
    if (berth_npy_parse("fuzz.npy", data, size, &t, &err) != BERTH_OK) {
        require(!strncmp(err.msg, "fuzz.npy: ", 10));
        require(strchr(err.msg, '\n') == NULL);
        require(t.data == NULL && t.bytes == 0 && t.rank == 0);
        return 0;
    }
    require(t.rank <= BERTH_MAX_RANK && t.data != NULL && t.capacity == t.bytes);
    size_t count = 1;
    for (uint32_t d = 0; d < t.rank; d++) {
        require(t.dims[d] >= 0);
        count *= (size_t)t.dims[d];
    }
    int ok = 1;
    require(berth_dtype_bytes(t.dtype, count, &ok) == t.bytes && ok);
    require(t.bytes <= size && memcmp(t.data, data + size - t.bytes, t.bytes) == 0);
    free(t.data);
    return 0;
}
