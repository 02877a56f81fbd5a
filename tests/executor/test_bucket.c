/* Bucket choice, padding and trimming, on their own. */
#include <stdint.h>
#include <string.h>

#include "bucket.h"
#include "check.h"

/* One input x: [batch, width] (syms 0 and 1). */
static const uint32_t rank1[1] = {2};
static const int64_t dims1[BERTH_MAX_RANK] = {0, 0};
static const int32_t sym1[BERTH_MAX_RANK] = {0, 1};

static void test_choose_smallest(void) {
    /* batch,width: listed out of size order on purpose */
    const int64_t b[] = {8, 320, 1, 320, 1, 160, 8, 160, 1, 640};
    int64_t asked[2] = {1, 100};
    CHECK(berth_bucket_choose(b, 5, 2, asked, 1, rank1, dims1, sym1) == 2);  /* 1x160 */
    asked[1] = 161;
    CHECK(berth_bucket_choose(b, 5, 2, asked, 1, rank1, dims1, sym1) == 1);  /* 1x320 */
    asked[0] = 2;
    CHECK(berth_bucket_choose(b, 5, 2, asked, 1, rank1, dims1, sym1) == 0);  /* 8x320 */
    asked[0] = 1;
    asked[1] = 641;
    CHECK(berth_bucket_choose(b, 5, 2, asked, 1, rank1, dims1, sym1) == -1); /* none */
    asked[0] = 9;
    asked[1] = 10;
    CHECK(berth_bucket_choose(b, 5, 2, asked, 1, rank1, dims1, sym1) == -1);
}

static void test_ties_go_to_first_listed(void) {
    /* 2x8 and 4x4 and 8x2 pad equally: the first listed that holds wins. */
    const int64_t b[] = {4, 4, 2, 8, 8, 2};
    int64_t asked[2] = {2, 2};
    CHECK(berth_bucket_choose(b, 3, 2, asked, 1, rank1, dims1, sym1) == 0);
    const int64_t b2[] = {2, 8, 4, 4};
    CHECK(berth_bucket_choose(b2, 2, 2, asked, 1, rank1, dims1, sym1) == 0);
}

static void test_static_dims_count(void) {
    /* two inputs: a [batch, 1000] and b [batch, width]: the static 1000
     * makes batch padding dearer than width padding. */
    const uint32_t rank[2] = {2, 2};
    int64_t dims[2 * BERTH_MAX_RANK] = {0};
    int32_t sym[2 * BERTH_MAX_RANK];
    memset(sym, -1, sizeof sym);
    sym[0] = 0;
    dims[1] = 1000;
    sym[BERTH_MAX_RANK + 0] = 0;
    sym[BERTH_MAX_RANK + 1] = 1;
    const int64_t b[] = {4, 100, 2, 1000}; /* 4*1000+4*100=4400 vs 2*1000+2*1000=4000 */
    int64_t asked[2] = {2, 50};
    CHECK(berth_bucket_choose(b, 2, 2, asked, 2, rank, dims, sym) == 1);
}

static void test_pad_and_trim(void) {
    float src[2][3] = {{1, 2, 3}, {4, 5, 6}};
    float dst[3][4];
    const int64_t sd[2] = {2, 3}, dd[2] = {3, 4};
    berth_fill(dst, BERTH_DTYPE_F32, 12, -7.5);
    berth_pad_copy(dst, dd, src, sd, 2, sizeof(float));
    const float want[3][4] = {{1, 2, 3, -7.5f}, {4, 5, 6, -7.5f}, {-7.5f, -7.5f, -7.5f, -7.5f}};
    CHECK(memcmp(dst, want, sizeof want) == 0);
    float back[2][3];
    berth_trim_copy(back, sd, dst, dd, 2, sizeof(float));
    CHECK(memcmp(back, src, sizeof src) == 0);

    int64_t big[2][2][3], small[1][2][2];
    for (int i = 0; i < 12; i++) ((int64_t *)big)[i] = i;
    const int64_t bd[3] = {2, 2, 3}, td[3] = {1, 2, 2};
    berth_trim_copy(small, td, big, bd, 3, sizeof(int64_t));
    CHECK(small[0][0][0] == 0 && small[0][0][1] == 1 && small[0][1][0] == 3 && small[0][1][1] == 4);

    uint8_t u[5];
    berth_fill(u, BERTH_DTYPE_U8, 5, 3);
    CHECK(u[0] == 3 && u[4] == 3);
    int32_t s = 0, d = 0;
    berth_pad_copy(&d, NULL, &s, NULL, 0, sizeof d); /* rank 0 */
    CHECK(d == 0);
}

int main(void) {
    test_choose_smallest();
    test_ties_go_to_first_listed();
    test_static_dims_count();
    test_pad_and_trim();
    return check_exit();
}
