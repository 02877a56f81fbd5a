/* Integer ops on the vulkan backend: int32 and int64 arithmetic with the
 * cpu backend's rules (wrapping, truncating division, division by zero
 * gives 0, MIN / -1 wraps; int64 division by shift and subtract), comparisons of int32, uint8 and int64 into uint8, and where on
 * int64, each against values computed here and the cpu backend where
 * built. */
#include "vk_harness.h"

static const char *const ops[] = {"add", "sub", "mul", "div", "max", "min"};

static int32_t ref_i32(int op, int32_t x, int32_t z) {
    uint32_t ux = (uint32_t)x, uz = (uint32_t)z;
    switch (op) {
    case 0: return (int32_t)(ux + uz);
    case 1: return (int32_t)(ux - uz);
    case 2: return (int32_t)(ux * uz);
    case 3: return z == 0 ? 0 : z == -1 ? (int32_t)(0u - ux) : x / z;
    case 4: return x > z ? x : z;
    default: return x < z ? x : z;
    }
}

static int64_t ref_i64(int op, int64_t x, int64_t z) {
    uint64_t ux = (uint64_t)x, uz = (uint64_t)z;
    switch (op) {
    case 0: return (int64_t)(ux + uz);
    case 1: return (int64_t)(ux - uz);
    case 2: return (int64_t)(ux * uz);
    case 3: return z == 0 ? 0 : z == -1 ? (int64_t)(0u - ux) : x / z;
    case 4: return x > z ? x : z;
    default: return x < z ? x : z;
    }
}

/* x [2, 4] op z [4] (broadcast over rows). */
static void test_int32(void) {
    const int32_t x[8] = {7, -7, INT32_MAX, INT32_MIN, 100000, -3, 0, 12};
    const int32_t z[4] = {2, -1, 3, 0};
    for (int op = 0; op < 6; op++) {
        int32_t got[8] = {0};
        tgraph g = {0};
        uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_I32, 2, DIMS(2, 4)), zi = tg_input(&g, "z", BERTH_DTYPE_I32, 1, DIMS(4));
        uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_I32, 2, DIMS(2, 4));
        tg_node(&g, ops[op], 2, IDX(xi, zi), 1, IDX(yi), 0, NULL);
        tg_output(&g, yi);
        if (!h_ok(&g, (void *const[]){(void *)x, (void *)z}, (void *const[]){got})) continue;
        int bad = 0;
        for (int i = 0; i < 8; i++) bad += got[i] != ref_i32(op, x[i], z[i % 4]);
        CHECK(bad == 0);
        if (bad) fprintf(stderr, "  int32 %s: %d wrong\n", ops[op], bad);
        h_same_as_cpu(ops[op], &g, NULL, (void *const[]){(void *)x, (void *)z}, (void *const[]){got});
    }
}

static void test_int64(void) {
    const int64_t x[6] = {INT64_C(5000000000), -1, INT64_MAX, INT64_MIN, INT64_C(0x00000000ffffffff), -INT64_C(70000000000)};
    const int64_t z[6] = {3, 0, -7, -1, 1, INT64_C(123456789)}; /* x / 0, MIN / -1 */
    for (int op = 0; op < 6; op++) {
        int64_t got[6] = {0};
        tgraph g = {0};
        uint32_t xi = tg_input(&g, "x", BERTH_DTYPE_I64, 1, DIMS(6)), zi = tg_input(&g, "z", BERTH_DTYPE_I64, 1, DIMS(6));
        uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_I64, 1, DIMS(6));
        tg_node(&g, ops[op], 2, IDX(xi, zi), 1, IDX(yi), 0, NULL);
        tg_output(&g, yi);
        if (!h_ok(&g, (void *const[]){(void *)x, (void *)z}, (void *const[]){got})) continue;
        int bad = 0;
        for (int i = 0; i < 6; i++) bad += got[i] != ref_i64(op, x[i], z[i]);
        CHECK(bad == 0);
        if (bad) fprintf(stderr, "  int64 %s: %d wrong\n", ops[op], bad);
        h_same_as_cpu(ops[op], &g, NULL, (void *const[]){(void *)x, (void *)z}, (void *const[]){got});
    }
}

/* Six comparisons of a [5] against b [5] for one dtype; want[k][i] is the
 * expected 0/1 of comparison k (equal, lesser, lesserOrEqual, greater,
 * greaterOrEqual, notEqual). */
static void check_compare(berth_dtype t, const void *a, const void *b, int (*order)(int i)) {
    static const char *const cmps[] = {"equal", "lesser", "lesserOrEqual", "greater", "greaterOrEqual", "notEqual"};
    for (int k = 0; k < 6; k++) {
        uint8_t got[5] = {9, 9, 9, 9, 9};
        tgraph g = {0};
        uint32_t ai = tg_input(&g, "a", t, 1, DIMS(5)), bi = tg_input(&g, "b", t, 1, DIMS(5));
        uint32_t yi = tg_value(&g, "y", BERTH_DTYPE_U8, 1, DIMS(5));
        tg_node(&g, cmps[k], 2, IDX(ai, bi), 1, IDX(yi), 0, NULL);
        tg_output(&g, yi);
        if (!h_ok(&g, (void *const[]){(void *)a, (void *)b}, (void *const[]){got})) continue;
        int bad = 0;
        for (int i = 0; i < 5; i++) {
            int o = order(i);
            int want = k == 0 ? o == 0 : k == 1 ? o < 0 : k == 2 ? o <= 0 : k == 3 ? o > 0 : k == 4 ? o >= 0 : o != 0;
            bad += got[i] != want;
        }
        CHECK(bad == 0);
        if (bad) fprintf(stderr, "  %s on %s: %d wrong\n", cmps[k], t == BERTH_DTYPE_I32 ? "int32" : t == BERTH_DTYPE_U8 ? "uint8" : "int64", bad);
        h_same_as_cpu(cmps[k], &g, NULL, (void *const[]){(void *)a, (void *)b}, (void *const[]){got});
    }
}

static const int32_t ci_a[5] = {1, -5, 7, INT32_MIN, 0}, ci_b[5] = {1, 3, -7, INT32_MAX, 0};
static int order_i32(int i) { return ci_a[i] < ci_b[i] ? -1 : ci_a[i] > ci_b[i]; }
static const uint8_t cu_a[5] = {0, 200, 7, 255, 1}, cu_b[5] = {0, 100, 9, 255, 254};
static int order_u8(int i) { return cu_a[i] < cu_b[i] ? -1 : cu_a[i] > cu_b[i]; }
static const int64_t cl_a[5] = {INT64_C(4294967296), -1, INT64_C(-4294967296), 5, INT64_MIN};
static const int64_t cl_b[5] = {INT64_C(4294967295), 0, INT64_C(-4294967295), 5, INT64_MAX};
static int order_i64(int i) { return cl_a[i] < cl_b[i] ? -1 : cl_a[i] > cl_b[i]; }

static void test_compares(void) {
    check_compare(BERTH_DTYPE_I32, ci_a, ci_b, order_i32);
    check_compare(BERTH_DTYPE_U8, cu_a, cu_b, order_u8);
    check_compare(BERTH_DTYPE_I64, cl_a, cl_b, order_i64);
}

static void test_where_int64(void) {
    const uint8_t cond[3] = {1, 0, 1};
    const int64_t a[2][3] = {{INT64_C(1) << 40, -2, 3}, {4, 5, -(INT64_C(1) << 35)}}, b[1] = {-INT64_C(9000000000)};
    int64_t got[6] = {0};
    tgraph g = {0};
    uint32_t ci = tg_input(&g, "c", BERTH_DTYPE_U8, 1, DIMS(3)), ai = tg_input(&g, "a", BERTH_DTYPE_I64, 2, DIMS(2, 3));
    uint32_t bi = tg_input(&g, "b", BERTH_DTYPE_I64, 1, DIMS(1)), yi = tg_value(&g, "y", BERTH_DTYPE_I64, 2, DIMS(2, 3));
    tg_node(&g, "where", 3, IDX(ci, ai, bi), 1, IDX(yi), 0, NULL);
    tg_output(&g, yi);
    if (!h_ok(&g, (void *const[]){(void *)cond, (void *)a, (void *)b}, (void *const[]){got})) return;
    int bad = 0;
    for (int i = 0; i < 6; i++) bad += got[i] != (cond[i % 3] ? a[i / 3][i % 3] : b[0]);
    CHECK(bad == 0);
    h_same_as_cpu("where int64", &g, NULL, (void *const[]){(void *)cond, (void *)a, (void *)b}, (void *const[]){got});
}

int main(void) {
    h_start();
    test_int32();
    test_int64();
    test_compares();
    test_where_int64();
    h_stop();
    return check_exit();
}
