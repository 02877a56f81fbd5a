/* Fuzz target: the cpu backend against the reference interpreter on a
 * random valid graph made from the bytes (diff.h says what counts as a
 * difference). Run: fuzz_graph_diff -max_total_time=120 COPY_OF_tests/diff/corpus */
#include <stddef.h>
#include <stdint.h>

#include "diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    diff_check(data, size);
    return 0;
}
