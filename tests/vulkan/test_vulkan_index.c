/* Index ops on the vulkan backend: argMax/argMin (first extreme wins,
 * int32 and int64 results), cumulativeSum (exclusive, reversed),
 * triangular and gatherElements, against reference loops here and the
 * cpu backend where built. */
#include "vk_harness.h"

static void one_op(tgraph *g, const char *op, berth_dtype tin, uint32_t xr, const int64_t *xd, berth_dtype tout,
                   uint32_t yr, const int64_t *yd, uint32_t na, const berth_attr *attrs) {
    memset(g, 0, sizeof *g);
    uint32_t x = tg_input(g, "x", tin, xr, xd), y = tg_value(g, "y", tout, yr, yd);
    tg_node(g, op, 1, IDX(x), 1, IDX(y), na, attrs);
    tg_output(g, y);
}

static void test_arg(void) {
    /* [3, 4] with ties: the first index of the extreme wins. */
    float x[12] = {1, 5, 5, 0, -2, -2, 3, -7, 9, 1, 9, 9};
    tgraph g;
    int64_t got64[4];
    one_op(&g, "argMax", BERTH_DTYPE_F32, 2, DIMS(3, 4), BERTH_DTYPE_I64, 2, DIMS(1, 4), 2,
           (berth_attr[]){A_INT("axis", 0), A_BOOL("keepDimensions", 1)});
    if (h_ok(&g, (void *const[]){x}, (void *const[]){got64})) {
        int64_t want[4] = {2, 0, 2, 2};
        CHECK(memcmp(got64, want, sizeof want) == 0);
        h_same_as_cpu("argMax", &g, NULL, (void *const[]){x}, (void *const[]){got64});
    }
    int32_t got32[3];
    one_op(&g, "argMin", BERTH_DTYPE_F32, 2, DIMS(3, 4), BERTH_DTYPE_I32, 1, DIMS(3), 1, (berth_attr[]){A_INT("axis", -1)});
    if (h_ok(&g, (void *const[]){x}, (void *const[]){got32})) {
        int32_t want[3] = {3, 3, 1};
        CHECK(memcmp(got32, want, sizeof want) == 0);
    }
}

static void test_cumsum(void) {
    float *x = h_randf(2 * 5 * 3), got[30];
    double ref[30];
    for (int variant = 0; variant < 4; variant++) {
        int exclusive = variant & 1, reversed = variant >> 1;
        tgraph g;
        one_op(&g, "cumulativeSum", BERTH_DTYPE_F32, 3, DIMS(2, 5, 3), BERTH_DTYPE_F32, 3, DIMS(2, 5, 3), 3,
               (berth_attr[]){A_INT("axis", 1), A_BOOL("exclusive", exclusive), A_BOOL("reversed", reversed)});
        for (int o = 0; o < 2; o++)
            for (int i = 0; i < 3; i++) {
                double acc = 0;
                for (int s = 0; s < 5; s++) {
                    int k = reversed ? 4 - s : s;
                    double v = x[(o * 5 + k) * 3 + i];
                    if (!exclusive) acc += v;
                    ref[(o * 5 + k) * 3 + i] = acc;
                    if (exclusive) acc += v;
                }
            }
        if (h_ok(&g, (void *const[]){x}, (void *const[]){got})) h_close("cumulativeSum", got, ref, 30);
    }
    free(x);
}

static void test_triangular(void) {
    float *x = h_randf(2 * 3 * 4), got[24];
    double ref[24];
    for (int upper = 0; upper < 2; upper++) {
        tgraph g;
        one_op(&g, "triangular", BERTH_DTYPE_F32, 3, DIMS(2, 3, 4), BERTH_DTYPE_F32, 3, DIMS(2, 3, 4), 2,
               (berth_attr[]){A_BOOL("upper", upper), A_INT("diagonal", upper ? 1 : -1)});
        for (int e = 0; e < 24; e++) {
            int j = e % 4, i = (e / 4) % 3;
            int keep = upper ? j - i >= 1 : j - i <= -1;
            ref[e] = keep ? x[e] : 0;
        }
        if (h_ok(&g, (void *const[]){x}, (void *const[]){got})) {
            h_close(upper ? "triangular upper" : "triangular lower", got, ref, 24);
            h_same_as_cpu("triangular", &g, NULL, (void *const[]){x}, (void *const[]){got});
        }
    }
    free(x);
}

static void test_gather_elements(void) {
    tgraph g = {0};
    uint32_t x = tg_input(&g, "x", BERTH_DTYPE_I64, 2, DIMS(3, 4)), ix = tg_input(&g, "ix", BERTH_DTYPE_I32, 2, DIMS(2, 4));
    uint32_t y = tg_value(&g, "y", BERTH_DTYPE_I64, 2, DIMS(2, 4));
    tg_node(&g, "gatherElements", 2, IDX(x, ix), 1, IDX(y), 1, (berth_attr[]){A_INT("axis", 0)});
    tg_output(&g, y);
    int64_t xv[12];
    for (int i = 0; i < 12; i++) xv[i] = 10000000000LL * (i + 1) - i;
    int32_t iv[8] = {2, 0, 1, -1, 0, 0, 2, 1};
    int64_t got[8];
    if (h_ok(&g, (void *const[]){xv, iv}, (void *const[]){got})) {
        int same = 1;
        for (int e = 0; e < 8; e++) {
            int k = iv[e] < 0 ? iv[e] + 3 : iv[e];
            same &= got[e] == xv[k * 4 + e % 4];
        }
        CHECK(same);
        h_same_as_cpu("gatherElements", &g, NULL, (void *const[]){xv, iv}, (void *const[]){got});
    }
}

int main(void) {
    h_start();
    test_arg();
    test_cumsum();
    test_triangular();
    test_gather_elements();
    h_stop();
    return check_exit();
}
