/* Elementwise ops: broadcasting binary arithmetic (float and integer) and
 * comparisons through generic shaders (dims and per-input strides in push constants),
 * the unary float ops, cast, and views, which emit nothing and share
 * storage. */
#include <math.h>
#include <string.h>

#include "gpu_core.h"

static const char *const bin_names[] = {"add", "sub", "mul", "div", "max", "min", "pow", "prelu"};
static const char *const logic_names[] = {"logicalAnd", "logicalOr", "logicalXor"};
static const char *const cmp_names[] = {"equal", "lesser", "lesserOrEqual", "greater", "greaterOrEqual", "notEqual"};
/* The compare shader's codes: 0 ==, 1 >, 2 >=, 3 <, 4 <=, 5 !=. */
static const uint32_t cmp_codes[] = {0, 3, 4, 1, 2, 5};

static int find_name(const char *const *names, int n, const char *op) {
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], op) == 0) return i;
    return -1;
}

static berth_status emit_binary4(gpu_prep *c, uint32_t code, uint64_t n, int64_t stride_a, int64_t stride_b) {
    gpu_dispatch *d = gpu_emit(c, "binary4");
    if (!d) return BERTH_ERR_NOMEM;
    uint32_t a = c->node->inputs[0], b = c->node->inputs[1];
    d->n_bind = 5;
    d->bind[0] = stride_a ? a : GPU_NONE;
    d->bind[1] = stride_b ? b : GPU_NONE;
    d->bind[2] = stride_a ? GPU_NONE : a;
    d->bind[3] = stride_b ? GPU_NONE : b;
    d->bind[4] = c->node->outputs[0];
    d->pc[0] = (uint32_t)(n / 4);
    d->pc[1] = code;
    d->pc[2] = (stride_a ? 0u : 1u) | (stride_b ? 0u : 2u);
    d->groups[0] = gpu_groups(n / 4, 64);
    return BERTH_OK;
}

/* pc[3] carries `kind` (the compare shader's input dtype; 0 elsewhere). */
static berth_status emit_bcast(gpu_prep *c, const char *shader, uint32_t code, uint32_t kind, uint64_t n) {
    bk_bcast b;
    bk_bcast_of(&c->bk, 2, &b);
    if (n == 0) return BERTH_OK;
    if (strcmp(shader, "binary") == 0 && n % 4 == 0 && b.rank <= 1) {
        /* Each input either shaped like the output (stride 1) or a single
         * value (stride 0): the vec4 shader with no index arithmetic. */
        int fast = 1;
        for (int k = 0; k < 2; k++) fast &= b.rank == 0 || b.strides[k][0] <= 1;
        if (fast) return emit_binary4(c, code, n, b.rank == 1 ? b.strides[0][0] : 1, b.rank == 1 ? b.strides[1][0] : 1);
    }
    gpu_dispatch *d = gpu_emit(c, shader);
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 3;
    d->bind[0] = c->node->inputs[0];
    d->bind[1] = c->node->inputs[1];
    d->bind[2] = c->node->outputs[0];
    d->pc[0] = (uint32_t)n;
    d->pc[1] = code;
    d->pc[2] = b.rank;
    d->pc[3] = kind;
    for (uint32_t i = 0; i < b.rank; i++) {
        d->pc[4 + i] = (uint32_t)b.dims[i];
        d->pc[12 + i] = (uint32_t)b.strides[0][i];
        d->pc[20 + i] = (uint32_t)b.strides[1][i];
    }
    d->groups[0] = gpu_groups(strcmp(shader, "binary") != 0 ? (n + 3) / 4 : n, 256); /* bytes: a word each */
    return BERTH_OK;
}

/* The integer dtypes and float16 through the binary_int shader, whose
 * kinds are: 1 int32, 2 uint32, 4 int64, 5 uint64, 6 int8, 7 uint8,
 * 8 float16. */
static uint32_t int_kind(berth_dtype t) {
    static const uint32_t kinds[] = {[BERTH_DTYPE_I32] = 1, [BERTH_DTYPE_U32] = 2, [BERTH_DTYPE_I64] = 4,
                                     [BERTH_DTYPE_U64] = 5, [BERTH_DTYPE_I8] = 6,  [BERTH_DTYPE_U8] = 7,
                                     [BERTH_DTYPE_F16] = 8};
    return kinds[t];
}

static berth_status prep_binary_int(gpu_prep *c, int code) {
    return emit_bcast(c, "binary_int", (uint32_t)code, int_kind(gpu_in(c, 0)->dtype), gpu_out(c, 0)->numel);
}

berth_status gpu_prep_binary(gpu_prep *c) {
    const uint32_t dts = BK_BIT(BERTH_DTYPE_F32) | BK_BIT(BERTH_DTYPE_F16) | BK_BIT(BERTH_DTYPE_I8) |
                         BK_BIT(BERTH_DTYPE_U8) | BK_BIT(BERTH_DTYPE_I32) | BK_BIT(BERTH_DTYPE_U32) |
                         BK_BIT(BERTH_DTYPE_I64) | BK_BIT(BERTH_DTYPE_U64);
    berth_status st = bk_check_same_dtype(&c->bk, 2, dts);
    if (st) return st;
    int code = find_name(bin_names, 8, c->node->op);
    if (code < 0) return bk_fail(&c->bk, "not a binary arithmetic op");
    if (gpu_in(c, 0)->dtype != BERTH_DTYPE_F32) return prep_binary_int(c, code);
    if (code == 7 && gpu_in(c, 1)->rank > gpu_in(c, 0)->rank) /* prelu's slope broadcasts one way only */
        return bk_fail(&c->bk, "slope rank %u exceeds the input rank %u", gpu_in(c, 1)->rank, gpu_in(c, 0)->rank);
    return emit_bcast(c, "binary", (uint32_t)code, 0, gpu_out(c, 0)->numel);
}

berth_status gpu_prep_compare(gpu_prep *c) {
    int i = find_name(cmp_names, 6, c->node->op);
    if (i < 0) return bk_fail(&c->bk, "not a comparison");
    /* The shader's input kinds. */
    static const uint32_t kinds[] = {[BERTH_DTYPE_F32] = 0, [BERTH_DTYPE_I32] = 1, [BERTH_DTYPE_U32] = 2,
                                     [BERTH_DTYPE_U8] = 3,  [BERTH_DTYPE_I64] = 4, [BERTH_DTYPE_U64] = 5,
                                     [BERTH_DTYPE_I8] = 6,  [BERTH_DTYPE_F16] = 7};
    return emit_bcast(c, "compare", cmp_codes[i], kinds[gpu_in(c, 0)->dtype], gpu_out(c, 0)->numel);
}

berth_status gpu_prep_logical(gpu_prep *c) {
    int code = find_name(logic_names, 3, c->node->op);
    if (code < 0) return bk_fail(&c->bk, "not a logical op");
    return emit_bcast(c, "logical", (uint32_t)code, 0, gpu_out(c, 0)->numel);
}

/* clamp on the integer dtypes and float16, through binary_int (op 7)
 * with the input bound to both operands: integer bounds are the float
 * bounds rounded inward and saturated to the type, as on the cpu. */
static berth_status prep_clamp_other(gpu_prep *c, double lo, double hi) {
    berth_dtype t = gpu_in(c, 0)->dtype;
    uint64_t b[2];
    for (int k = 0; k < 2; k++) {
        double v = k ? floor(hi) : ceil(lo);
        switch (t) {
        case BERTH_DTYPE_F16: b[k] = gpu_f2u((float)(k ? hi : lo)); break;
        case BERTH_DTYPE_I8: b[k] = (uint64_t)(int64_t)(v < -128 ? -128 : v > 127 ? 127 : v); break;
        case BERTH_DTYPE_U8: b[k] = (uint64_t)(v < 0 ? 0 : v > 255 ? 255 : v); break;
        case BERTH_DTYPE_I32: b[k] = (uint64_t)(int64_t)(v < -0x1p31 ? -0x1p31 : v >= 0x1p31 ? 0x1p31 - 1 : v); break;
        case BERTH_DTYPE_U32: b[k] = (uint64_t)(v < 0 ? 0 : v >= 0x1p32 ? 0x1p32 - 1 : v); break;
        case BERTH_DTYPE_I64: b[k] = v < -0x1p63 ? (uint64_t)INT64_MIN : v >= 0x1p63 ? (uint64_t)INT64_MAX
                                                                               : (uint64_t)(int64_t)v; break;
        default: b[k] = v <= 0 ? 0 : v >= 0x1p64 ? UINT64_MAX : (uint64_t)v; break; /* uint64 */
        }
    }
    uint64_t n = gpu_out(c, 0)->numel;
    if (n == 0) return BERTH_OK;
    gpu_dispatch *d = gpu_emit(c, "binary_int");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 3;
    d->bind[0] = d->bind[1] = c->node->inputs[0];
    d->bind[2] = c->node->outputs[0];
    d->pc[0] = (uint32_t)n;
    d->pc[1] = 7; /* clamp */
    d->pc[2] = 1; /* flat: one dim, stride 1 */
    d->pc[3] = int_kind(t);
    d->pc[4] = (uint32_t)n;
    d->pc[12] = d->pc[20] = 1;
    d->pc[28] = (uint32_t)b[0];
    d->pc[29] = (uint32_t)(b[0] >> 32);
    d->pc[30] = (uint32_t)b[1];
    d->pc[31] = (uint32_t)(b[1] >> 32);
    d->groups[0] = gpu_groups((n + 3) / 4, 256);
    return BERTH_OK;
}

static const char *const un_names[] = {
    "relu", "sigmoid", "tanh", "exp", "log", "sqrt", "abs", "neg", "erf", "gelu", "hardSigmoid",
    "hardSwish", "clamp", "leakyRelu", "elu", "softplus", "reciprocal", "floor", "ceil", "sin", "cos", "sign", "softsign",
};
enum { U_HARDSIGMOID = 10, U_CLAMP = 12, U_LEAKYRELU = 13, U_ELU = 14 };

berth_status gpu_prep_unary(gpu_prep *c) {
    berth_status st = BERTH_OK;
    int op = find_name(un_names, (int)(sizeof un_names / sizeof un_names[0]), c->node->op);
    if (op < 0) return bk_fail(&c->bk, "not a unary op");
    const gpu_opnd *y = gpu_out(c, 0);
    double alpha = 0.0, beta = 0.0;
    if (op == U_HARDSIGMOID) {
        st = bk_opt_float(&c->bk, "alpha", 0.2, &alpha);
        if (!st) st = bk_opt_float(&c->bk, "beta", 0.5, &beta);
    } else if (op == U_CLAMP) {
        st = bk_opt_float(&c->bk, "minValue", -INFINITY, &alpha);
        if (!st) st = bk_opt_float(&c->bk, "maxValue", INFINITY, &beta);
        if (!st && alpha > beta) return bk_fail(&c->bk, "minValue %g is greater than maxValue %g", alpha, beta);
    } else if (op == U_LEAKYRELU) {
        st = bk_opt_float(&c->bk, "alpha", 0.01, &alpha);
    } else if (op == U_ELU) {
        st = bk_opt_float(&c->bk, "alpha", 1.0, &alpha);
    }
    if (st) return st;
    berth_dtype t = gpu_in(c, 0)->dtype;
    if (t != BERTH_DTYPE_F32 && (t != BERTH_DTYPE_F16 || op == U_CLAMP)) return prep_clamp_other(c, alpha, beta);
    if (y->numel == 0) return BERTH_OK;
    /* Four elements per invocation where the count allows; float16 two
     * (a word). */
    int half = t == BERTH_DTYPE_F16, four = !half && y->numel % 4 == 0;
    gpu_dispatch *d = gpu_emit(c, four ? "unary4" : "unary");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 2;
    d->bind[0] = c->node->inputs[0];
    d->bind[1] = c->node->outputs[0];
    d->pc[0] = (uint32_t)(four ? y->numel / 4 : y->numel);
    d->pc[1] = (uint32_t)op;
    d->pc[2] = gpu_f2u((float)alpha);
    d->pc[3] = gpu_f2u((float)beta);
    d->pc[4] = (uint32_t)half;
    d->groups[0] = four ? gpu_groups(y->numel / 4, 64) : gpu_groups(half ? (y->numel + 1) / 2 : y->numel, 256);
    return BERTH_OK;
}

/* identity, reshape, squeeze, unsqueeze: same elements, new dims. */
berth_status gpu_prep_view(gpu_prep *c) {
    gpu_alias(c, c->node->outputs[0], c->node->inputs[0]);
    return BERTH_OK;
}

/* cast between float32, int32, uint32, int64, uint8 and int8, and between
 * float32 and float16, with the cpu backend's rules: float to integer
 * saturates (NaN gives 0), integer narrowing wraps, float16 rounds to
 * nearest even. */
berth_status gpu_prep_cast(gpu_prep *c) {
    berth_status st; /* the dtype pair passes check_cast */
    const gpu_opnd *x = gpu_in(c, 0), *y = gpu_out(c, 0);
    const char *type;
    if ((st = bk_opt_string(&c->bk, "type", NULL, &type))) return st;
    static const char *const short_names[] = {[BERTH_DTYPE_F32] = "f32", [BERTH_DTYPE_F16] = "f16", [BERTH_DTYPE_I32] = "i32",
                                              [BERTH_DTYPE_U32] = "u32", [BERTH_DTYPE_I64] = "i64",
                                              [BERTH_DTYPE_I8] = "i8",   [BERTH_DTYPE_U8] = "u8"};
    if (type && strcmp(type, bk_dtype_name(y->dtype)) != 0 && strcmp(type, short_names[y->dtype]) != 0)
        return bk_fail(&c->bk, "type '%s' disagrees with the output dtype %s", type, bk_dtype_name(y->dtype));
    if (y->numel == 0) return BERTH_OK;
    size_t es = bk_dtype_size(y->dtype);
    uint64_t units = es == 1 ? (y->numel + 3) / 4 : es == 2 ? (y->numel + 1) / 2 : y->numel;
    gpu_dispatch *d = gpu_emit(c, "cast");
    if (!d) return BERTH_ERR_NOMEM;
    d->n_bind = 2;
    d->bind[0] = c->node->inputs[0];
    d->bind[1] = c->node->outputs[0];
    d->pc[0] = (uint32_t)y->numel;
    d->pc[1] = (uint32_t)x->dtype;
    d->pc[2] = (uint32_t)y->dtype;
    d->pc[3] = (uint32_t)units;
    d->groups[0] = gpu_groups(units, 256);
    return BERTH_OK;
}
