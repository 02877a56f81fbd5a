/* The backend kit: arena placement, declared options, attribute readers,
 * the topological-order check, graph desc sizes and op tables. */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk.h"
#include "check.h"

/* ---- placement ---- */
static void test_place(void) {
    /* a chain: each buffer lives from its step to the next */
    enum { N = 10 };
    bk_span s[N];
    for (uint32_t i = 0; i < N; i++) s[i] = (bk_span){.size = 100, .first = i, .last = i + 1, .id = i};
    size_t top = bk_place(s, N, 64);
    CHECK(top == 2 * 128); /* two live at once, sizes rounded up to 128 */
    for (size_t i = 0; i < N; i++) {
        CHECK(s[i].off % 64 == 0);
        for (size_t j = 0; j < N; j++) {
            if (i == j || s[i].last < s[j].first || s[j].last < s[i].first) continue;
            CHECK(s[i].off + s[i].size <= s[j].off || s[j].off + s[j].size <= s[i].off); /* overlap never shared */
        }
    }
    /* all live at once: nothing shared */
    bk_span t[3] = {{.size = 64, .first = 0, .last = 5, .id = 0},
                    {.size = 32, .first = 1, .last = 2, .id = 1},
                    {.size = 16, .first = 2, .last = 3, .id = 2}};
    CHECK(bk_place(t, 3, 16) == 112);
    /* disjoint lifetimes reuse offset 0 */
    bk_span u[2] = {{.size = 64, .first = 0, .last = 1, .id = 0}, {.size = 64, .first = 2, .last = 3, .id = 1}};
    CHECK(bk_place(u, 2, 16) == 64);
    CHECK(u[0].off == 0 && u[1].off == 0);
}

/* ---- options ---- */
static const char *opt_keys[4], *opt_vals[4];
static uint32_t opt_n;
static uint32_t h_count(void *ctx) { return opt_n; }
static berth_status h_at(void *ctx, uint32_t i, const char **k, const char **v) {
    if (i >= opt_n) return BERTH_ERR_INVALID;
    *k = opt_keys[i];
    *v = opt_vals[i];
    return BERTH_OK;
}
static const berth_host_services host = {.abi_version = 2, .struct_size = sizeof host, .option_count = h_count,
                                         .option_at = h_at};

static void test_options(void) {
    const berth_option_decl decl[] = {
        {"threads", BERTH_OPTION_INT, "4", NULL, 1, 64, "threads"},
        {"isa", BERTH_OPTION_STRING, "auto", "auto|avx2|generic", 0, 0, "kernels"},
        {"fast", BERTH_OPTION_BOOL, "false", NULL, 0, 0, "go fast"},
        {"scale", BERTH_OPTION_FLOAT, NULL, NULL, 0.5, 2, "scale"},
    };
    bk_option_value v[4];
    berth_error err;
    opt_n = 0;
    CHECK(bk_options_read(&host, "x", decl, 4, v, &err) == BERTH_OK);
    CHECK(v[0].set && v[0].i == 4 && v[1].set && !strcmp(v[1].s, "auto") && v[2].set && !v[2].b && !v[3].set);
    opt_keys[0] = "threads", opt_vals[0] = "8";
    opt_keys[1] = "isa", opt_vals[1] = "avx2";
    opt_keys[2] = "fast", opt_vals[2] = "on";
    opt_keys[3] = "scale", opt_vals[3] = "1.5";
    opt_n = 4;
    CHECK(bk_options_read(&host, "x", decl, 4, v, &err) == BERTH_OK);
    CHECK(v[0].i == 8 && !strcmp(v[1].s, "avx2") && v[2].b == 1 && v[3].set && v[3].f == 1.5);
    const char *bad[][3] = {
        {"threads", "0", "option 'threads' in [backend.x]: expected an integer in [1, 64], found '0'"},
        {"threads", "4x", "found '4x'"},
        {"isa", "sse9", "expected one of auto|avx2|generic, found 'sse9'"},
        {"fast", "maybe", "expected a boolean (true/false, yes/no, on/off, 1/0), found 'maybe'"},
        {"scale", "nan", "expected a number in [0.5, 2], found 'nan'"},
        {"colour", "red", "unknown option 'colour' in [backend.x] (known: threads, isa, fast, scale)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        opt_keys[0] = bad[i][0], opt_vals[0] = bad[i][1], opt_n = 1;
        CHECK(bk_options_read(&host, "x", decl, 4, v, &err) == BERTH_ERR_INVALID);
        CHECK_CONTAINS(err.msg, bad[i][2]);
    }
}

/* ---- attribute readers ---- */
static void test_attrs(void) {
    int64_t ints[3] = {1, 2, 3};
    double floats[2] = {0.5, 1.5};
    berth_attr at[] = {
        {.key = "i", .type = BERTH_ATTR_INT, .i = 7},
        {.key = "f", .type = BERTH_ATTR_FLOAT, .f = 2.5},
        {.key = "whole", .type = BERTH_ATTR_FLOAT, .f = 3.0},
        {.key = "nan", .type = BERTH_ATTR_FLOAT, .f = NAN},
        {.key = "huge", .type = BERTH_ATTR_FLOAT, .f = 1e300},
        {.key = "b", .type = BERTH_ATTR_BOOL, .i = 1},
        {.key = "s", .type = BERTH_ATTR_STRING, .s = "same"},
        {.key = "is", .type = BERTH_ATTR_INTS, .count = 3, .ints = ints},
        {.key = "fs", .type = BERTH_ATTR_FLOATS, .count = 2, .floats = floats},
        {.key = "op", .type = BERTH_ATTR_OPERAND, .i = 4},
        {.key = "null", .type = BERTH_ATTR_NULL},
    };
    berth_node node = {.op = "x", .name = "n", .n_attrs = sizeof at / sizeof at[0], .attrs = at};
    bk_attrs a = bk_node_attrs(&node, sizeof(berth_attr), 0);
    bk_attrs strict = bk_node_attrs(&node, sizeof(berth_attr), BK_ATTR_EXACT | BK_ATTR_PROSE);
    berth_error err;
    int64_t i;
    double f;
    int b, n;
    const char *s;
    uint32_t op;
    CHECK(bk_attr_int(a, "i", 0, &i, &err) == BERTH_OK && i == 7);
    CHECK(bk_attr_int(a, "absent", 9, &i, &err) == BERTH_OK && i == 9);
    CHECK(bk_attr_int(a, "null", 9, &i, &err) == BERTH_OK && i == 9);
    CHECK(bk_attr_int(a, "whole", 0, &i, &err) == BERTH_OK && i == 3);
    CHECK(bk_attr_int(strict, "whole", 0, &i, &err) == BERTH_ERR_INVALID);
    CHECK_MSG(err.msg, "option 'whole' expected an integer, found a number (3)");
    CHECK(bk_attr_int(a, "f", 0, &i, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "attribute 'f': expected int, found float");
    CHECK(bk_attr_int(a, "nan", 0, &i, &err) == BERTH_ERR_INVALID && i == 0);
    CHECK(bk_attr_int(a, "huge", 0, &i, &err) == BERTH_ERR_INVALID && i == 0);
    CHECK_CONTAINS(err.msg, "'huge'");
    CHECK(bk_double_to_int64(9223372036854775808.0, &i) == 0);
    CHECK(bk_double_to_int64(-9223372036854775808.0, &i) == 1 && i == INT64_MIN);
    CHECK(bk_attr_float(a, "i", 0, &f, &err) == BERTH_OK && f == 7.0);
    CHECK(bk_attr_float(a, "s", 0, &f, &err) == BERTH_ERR_INVALID);
    CHECK_MSG(err.msg, "attribute 's': expected float, found string");
    CHECK(bk_attr_float(strict, "s", 0, &f, &err) == BERTH_ERR_INVALID);
    CHECK_MSG(err.msg, "option 's' expected a number, found a string");
    CHECK(bk_attr_bool(a, "b", 0, &b, &err) == BERTH_OK && b == 1);
    CHECK(bk_attr_bool(a, "i", 0, &b, &err) == BERTH_OK && b == 1);
    CHECK(bk_attr_bool(strict, "i", 0, &b, &err) == BERTH_ERR_INVALID);
    CHECK(bk_attr_string(a, "s", NULL, &s, &err) == BERTH_OK && !strcmp(s, "same"));
    CHECK(bk_attr_string(a, "i", "d", &s, &err) == BERTH_ERR_INVALID);
    int64_t iv[4];
    double fv[4];
    CHECK(bk_attr_ints(a, "is", iv, 4, &n, &err) == BERTH_OK && n == 3 && iv[2] == 3);
    CHECK(bk_attr_ints(a, "is", iv, 2, &n, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "at most 2 values, found 3");
    CHECK(bk_attr_ints(a, "i", iv, 4, &n, &err) == BERTH_OK && n == 1 && iv[0] == 7);
    CHECK(bk_attr_ints(a, "absent", iv, 4, &n, &err) == BERTH_OK && n == -1);
    CHECK(bk_attr_floats(a, "fs", fv, 4, &n, &err) == BERTH_OK && n == 2 && fv[1] == 1.5);
    CHECK(bk_attr_floats(a, "is", fv, 4, &n, &err) == BERTH_OK && n == 3 && fv[0] == 1.0);
    CHECK(bk_attr_operand(a, "op", 5, &op, &err) == BERTH_OK && op == 4);
    CHECK(bk_attr_operand(a, "op", 4, &op, &err) == BERTH_ERR_INVALID);
    CHECK(bk_attr_operand(a, "i", 5, &op, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "expected operand, found int");
    /* indexed by the declared element size: a host with a larger attr */
    struct big {
        berth_attr a;
        char tail[24];
    } wide[2] = {{.a = {.key = "x", .type = BERTH_ATTR_INT, .i = 1}}, {.a = {.key = "y", .type = BERTH_ATTR_INT, .i = 2}}};
    berth_node wn = {.op = "x", .name = "w", .n_attrs = 2, .attrs = &wide[0].a};
    CHECK(bk_attr_int(bk_node_attrs(&wn, sizeof(struct big), 0), "y", 0, &i, &err) == BERTH_OK && i == 2);
}

/* ---- graphs ---- */
static berth_operand opnd(const char *name, berth_operand_kind kind) {
    berth_operand o = {.name = name, .kind = kind, .dtype = BERTH_DTYPE_F32, .rank = 1, .dims = {4}};
    return o;
}

static void test_graph(void) {
    berth_operand ops[3] = {opnd("x", BERTH_OPERAND_INPUT), opnd("a", BERTH_OPERAND_VALUE),
                            opnd("b", BERTH_OPERAND_VALUE)};
    uint32_t in0[] = {0}, a[] = {1}, b[] = {2}, inputs[] = {0}, outputs[] = {2};
    berth_node nodes[2] = {{.op = "relu", .name = "a", .n_inputs = 1, .inputs = in0, .n_outputs = 1, .outputs = a},
                           {.op = "relu", .name = "b", .n_inputs = 1, .inputs = a, .n_outputs = 1, .outputs = b}};
    berth_graph_desc g = {.struct_size = sizeof g, .n_operands = 3, .operands = ops, .n_nodes = 2, .nodes = nodes,
                          .n_inputs = 1, .inputs = inputs, .n_outputs = 1, .outputs = outputs,
                          .operand_size = sizeof(berth_operand), .node_size = sizeof(berth_node),
                          .attr_size = sizeof(berth_attr), .tensor_size = sizeof(berth_tensor)};
    berth_error err;
    bk_graph v;
    CHECK(bk_graph_view(&g, &v, &err) == BERTH_OK && !v.owned);
    CHECK(bk_graph_check_order(&v.g, &err) == BERTH_OK);
    bk_graph_release(&v);
    /* out of order: b is read before it is made */
    berth_node swapped[2] = {nodes[1], nodes[0]};
    g.nodes = swapped;
    CHECK(bk_graph_check_order(&g, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "node 'b' (relu): input 0 reads 'a' before any node produces it");
    g.nodes = nodes;
    /* a value written twice */
    berth_node twice[2] = {nodes[0], nodes[0]};
    twice[1].name = "again";
    g.nodes = twice;
    CHECK(bk_graph_check_order(&g, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "produced once");
    g.nodes = nodes;
    /* sizes */
    g.struct_size = 8;
    CHECK(bk_graph_view(&g, &v, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "expected at least");
    g.struct_size = sizeof g;
    g.node_size = 8;
    CHECK(bk_graph_view(&g, &v, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "node_size");
    g.node_size = sizeof(berth_node);
    /* an index out of range */
    uint32_t far[] = {9};
    nodes[1].inputs = far;
    CHECK(bk_graph_view(&g, &v, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "out of range");
    nodes[1].inputs = a;
    /* larger elements from a newer host are copied into our layout */
    struct big_op {
        berth_operand o;
        double extra;
    } bops[3] = {{ops[0], 1}, {ops[1], 2}, {ops[2], 3}};
    g.operands = &bops[0].o;
    g.operand_size = sizeof(struct big_op);
    CHECK(bk_graph_view(&g, &v, &err) == BERTH_OK && v.owned);
    CHECK(v.g.operand_size == sizeof(berth_operand) && !strcmp(v.g.operands[2].name, "b"));
    CHECK(v.g.nodes[1].inputs[0] == 1 && bk_graph_check_order(&v.g, &err) == BERTH_OK);
    bk_graph_release(&v);
}

/* ---- op tables ---- */
typedef struct test_op {
    int tag;
    bk_op_caps caps;
} test_op;
static berth_status refuse_rank3(const bk_node_ctx *c) {
    return bk_in(c, 0)->rank == 3 ? bk_refuse(c, "rank 3 is not run here") : BERTH_OK;
}
static const test_op table[BERTH_OP_COUNT] = {
    [BERTH_OP_RELU] = {1, {BK_BIT(BERTH_DTYPE_F32), refuse_rank3}},
    [BERTH_OP_ADD] = {2, {BK_BIT(BERTH_DTYPE_F32) | BK_BIT(BERTH_DTYPE_I32), NULL}},
};

static void check_module(const char *path, const char *name) {
    void *mod = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    CHECK(mod != NULL);
    if (!mod) return;
    berth_backend_entry_fn entry = (berth_backend_entry_fn)dlsym(mod, BERTH_BACKEND_ENTRY_SYMBOL);
    berth_host_services h = host;
    berth_error err;
    const berth_backend *t = entry ? entry(2, &h, &err) : NULL;
    CHECK(t && t->abi_version == 2 && t->struct_size >= BERTH_BACKEND_V1_1_MIN_SIZE && !strcmp(t->name, name));
    CHECK(t && t->supports_node && t->options && t->n_options > 0);
    const berth_backend *t3 = entry ? entry(3, &h, &err) : NULL;
    CHECK(t3 && t3->abi_version == 3 && t3->struct_size >= BERTH_BACKEND_V1_2_MIN_SIZE && t3->plan_memory);
    const berth_backend *t4 = entry ? entry(4, &h, &err) : NULL;
    CHECK(t4 && t4->abi_version == 4 && t4->struct_size >= BERTH_BACKEND_V1_3_MIN_SIZE && t4->plan_memory);
    const berth_backend *t5 = entry ? entry(5, &h, &err) : NULL;
    CHECK(t5 && t5->abi_version == 5 && t5->struct_size >= BERTH_BACKEND_V1_4_MIN_SIZE && t5->plan_memory);
    /* a host newer than the module gets the module's newest */
    CHECK(entry && entry(9, &h, &err) == t5);
    const berth_backend *t1 = entry ? entry(1, &h, &err) : NULL;
    CHECK(t1 && t1->abi_version == 1);
    CHECK(entry && entry(0, &h, &err) == NULL);
    if (t) {
        /* an op outside ops.def is refused as such, whatever the dtype */
        CHECK(t->supports_op(NULL, "logicalXor", BERTH_DTYPE_U8, &err) == BERTH_ERR_UNSUPPORTED);
        CHECK_CONTAINS(err.msg, "not a berth op");
        CHECK(t->supports_op(NULL, "relu", BERTH_DTYPE_F32, &err) == BERTH_OK);
    }
    dlclose(mod);
}

static void test_ops(void) {
    bk_op_set set = BK_OP_SET("test", table, test_op);
    berth_error err;
    CHECK(bk_op_caps_of(&set, BERTH_OP_RELU) == &table[BERTH_OP_RELU].caps);
    CHECK(bk_op_caps_of(&set, BERTH_OP_SUB) == NULL);
    CHECK(bk_op_caps_of(&set, BERTH_OP_UNKNOWN) == NULL);
    CHECK(bk_op_caps_of(&set, BERTH_OP_COUNT) == NULL);
    /* every registered entry is a real op: its id names an ops.def row */
    for (int id = 0; id < BERTH_OP_COUNT; id++)
        if (bk_op_caps_of(&set, (berth_op_id)id)) CHECK(berth_op_find(berth_op_table()[id].name) == id);
    CHECK(bk_supports_op(&set, "add", BERTH_DTYPE_I32, &err) == BERTH_OK);
    CHECK(bk_supports_op(&set, "add", BERTH_DTYPE_U8, &err) == BERTH_ERR_UNSUPPORTED);
    CHECK(bk_supports_op(&set, "sub", BERTH_DTYPE_F32, &err) == BERTH_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.msg, "not implemented");
    CHECK(bk_supports_op(&set, "logicalXor", BERTH_DTYPE_U8, &err) == BERTH_ERR_UNSUPPORTED);
    /* supports_node: the check hook refuses early and precisely */
    berth_operand ops[2] = {opnd("x", BERTH_OPERAND_INPUT), opnd("y", BERTH_OPERAND_VALUE)};
    uint32_t in0[] = {0}, out0[] = {1};
    berth_node node = {.op = "relu", .name = "y", .n_inputs = 1, .inputs = in0, .n_outputs = 1, .outputs = out0};
    berth_graph_desc g = {.struct_size = sizeof g, .n_operands = 2, .operands = ops, .n_nodes = 1, .nodes = &node,
                          .n_inputs = 1, .inputs = in0, .n_outputs = 1, .outputs = out0};
    CHECK(bk_supports_node(&set, &g, 0, &err) == BERTH_OK);
    ops[0].rank = ops[1].rank = 3;
    CHECK(bk_supports_node(&set, &g, 0, &err) == BERTH_ERR_UNSUPPORTED);
    CHECK_MSG(err.msg, "node 'y' (relu): rank 3 is not run here");
    ops[0].rank = ops[1].rank = 1;
    ops[1].dtype = BERTH_DTYPE_I32; /* output dtype against the op's rule */
    CHECK(bk_supports_node(&set, &g, 0, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "expected dtype float32");
#ifdef BERTH_CPU_MODULE
    check_module(BERTH_CPU_MODULE, "cpu");
#endif
#ifdef BERTH_VK_MODULE
    check_module(BERTH_VK_MODULE, "vulkan");
#endif
}

/* ---- the vulkan module refuses in supports_node what its shaders cannot
 * run, with the reason plan() would give ---- */
/* The helpers only the vulkan case uses: a build without the vulkan
 * module (arm64, a machine without glslc) would have them unused. */
#ifdef BERTH_VK_MODULE
typedef struct one_node {
    berth_operand ops[4];
    uint32_t in[3], out[1];
    berth_node node;
    berth_graph_desc g;
} one_node;

/* A node `op` reading operands [0, n_in) and writing operand n_in. */
static void one(one_node *t, const char *op, uint32_t n_in, const berth_attr *attrs, uint32_t n_attrs) {
    for (uint32_t i = 0; i < n_in; i++) t->in[i] = i;
    t->out[0] = n_in;
    t->node = (berth_node){.op = op, .name = "n", .n_inputs = n_in, .inputs = t->in, .n_outputs = 1,
                           .outputs = t->out, .n_attrs = n_attrs, .attrs = attrs};
    t->g = (berth_graph_desc){.struct_size = sizeof t->g, .n_operands = n_in + 1, .operands = t->ops,
                              .n_nodes = 1, .nodes = &t->node, .n_inputs = n_in, .inputs = t->in,
                              .n_outputs = 1, .outputs = t->out};
}

static berth_operand shaped(berth_operand_kind kind, berth_dtype t, uint32_t rank, const int64_t *dims) {
    berth_operand o = {.name = kind == BERTH_OPERAND_INPUT ? "in" : "out", .kind = kind, .dtype = t, .rank = rank};
    memcpy(o.dims, dims, sizeof(int64_t) * rank);
    return o;
}

#define IN(t, r, ...) shaped(BERTH_OPERAND_INPUT, t, r, (const int64_t[]){__VA_ARGS__})
#define OUT(t, r, ...) shaped(BERTH_OPERAND_VALUE, t, r, (const int64_t[]){__VA_ARGS__})
#endif

static int vulkan_refusals(void) {
#ifndef BERTH_VK_MODULE
    return 77;
#else
    void *mod = dlopen(BERTH_VK_MODULE, RTLD_NOW | RTLD_LOCAL);
    CHECK(mod != NULL);
    if (!mod) return check_exit();
    berth_backend_entry_fn entry = (berth_backend_entry_fn)dlsym(mod, BERTH_BACKEND_ENTRY_SYMBOL);
    berth_host_services h = host;
    berth_error err;
    const berth_backend *vk = entry ? entry(2, &h, &err) : NULL;
    CHECK(vk != NULL);
    berth_device *dev = NULL;
    if (!vk || vk->open(&h, &dev, &err) != BERTH_OK) {
        if (vk) printf("skipped: no Vulkan device (%s)\n", err.msg);
        dlclose(mod);
        return vk ? 77 : check_exit();
    }
    one_node t;
    /* prelu runs on float32 only */
    t.ops[0] = IN(BERTH_DTYPE_I64, 1, 4), t.ops[1] = IN(BERTH_DTYPE_I64, 1, 4), t.ops[2] = OUT(BERTH_DTYPE_I64, 1, 4);
    one(&t, "prelu", 2, NULL, 0);
    CHECK(vk->supports_node(dev, &t.g, 0, &err) == BERTH_ERR_UNSUPPORTED);
    CHECK_MSG(err.msg, "node 'n' (prelu): dtype int64 is not supported");
    t.node.op = "div"; /* while int64 div runs */
    CHECK(vk->supports_node(dev, &t.g, 0, &err) == BERTH_OK);
    /* cast pairs */
    berth_attr to_i32 = {.key = "type", .type = BERTH_ATTR_STRING, .s = "int32"};
    t.ops[0] = IN(BERTH_DTYPE_F16, 1, 4), t.ops[1] = OUT(BERTH_DTYPE_I32, 1, 4);
    one(&t, "cast", 1, &to_i32, 1);
    CHECK(vk->supports_node(dev, &t.g, 0, &err) == BERTH_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.msg, "cast from float16 to int32 is not supported");
    /* where on 4-bit values */
    t.ops[0] = IN(BERTH_DTYPE_U8, 1, 4), t.ops[1] = IN(BERTH_DTYPE_I4, 1, 4), t.ops[2] = IN(BERTH_DTYPE_I4, 1, 4);
    t.ops[3] = OUT(BERTH_DTYPE_I4, 1, 4);
    one(&t, "where", 3, NULL, 0);
    CHECK(vk->supports_node(dev, &t.g, 0, &err) == BERTH_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.msg, "dtype int4: where runs on 8- to 64-bit elements");
    /* where broadcasting over more dims than its shader walks */
    t.ops[0] = IN(BERTH_DTYPE_U8, 8, 2, 1, 2, 1, 2, 1, 2, 1);
    t.ops[1] = IN(BERTH_DTYPE_F32, 8, 1, 2, 1, 2, 1, 2, 1, 2);
    t.ops[2] = IN(BERTH_DTYPE_F32, 0, 0);
    t.ops[3] = OUT(BERTH_DTYPE_F32, 8, 2, 2, 2, 2, 2, 2, 2, 2);
    CHECK(vk->supports_node(dev, &t.g, 0, &err) == BERTH_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.msg, "broadcasting over 8 distinct dims exceeds the shader's 6");
    /* gather with uint32 indices */
    t.ops[0] = IN(BERTH_DTYPE_F32, 1, 4), t.ops[1] = IN(BERTH_DTYPE_U32, 1, 2), t.ops[2] = OUT(BERTH_DTYPE_F32, 1, 2);
    one(&t, "gather", 2, NULL, 0);
    CHECK(vk->supports_node(dev, &t.g, 0, &err) == BERTH_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.msg, "indices: expected int32 or int64, found uint32");
    /* resample2d over decreasing axes */
    berth_attr axes = {.key = "axes", .type = BERTH_ATTR_INTS, .count = 2, .ints = (const int64_t[]){3, 2}};
    t.ops[0] = IN(BERTH_DTYPE_F32, 4, 1, 1, 2, 2), t.ops[1] = OUT(BERTH_DTYPE_F32, 4, 1, 1, 4, 4);
    one(&t, "resample2d", 1, &axes, 1);
    CHECK(vk->supports_node(dev, &t.g, 0, &err) == BERTH_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.msg, "axes: resamples two increasing axes, found [3, 2]");
    /* a transpose of int64 over 8 dims: 9 distinct copy dims with the word */
    berth_attr perm = {.key = "permutation", .type = BERTH_ATTR_INTS, .count = 8,
                       .ints = (const int64_t[]){1, 0, 3, 2, 5, 4, 7, 6}};
    t.ops[0] = IN(BERTH_DTYPE_I64, 8, 2, 3, 2, 3, 2, 3, 2, 3), t.ops[1] = OUT(BERTH_DTYPE_I64, 8, 3, 2, 3, 2, 3, 2, 3, 2);
    one(&t, "transpose", 1, &perm, 1);
    CHECK(vk->supports_node(dev, &t.g, 0, &err) == BERTH_ERR_UNSUPPORTED);
    CHECK_CONTAINS(err.msg, "a copy over 9 distinct dims exceeds the shader's 8");
    t.ops[0].dtype = t.ops[1].dtype = BERTH_DTYPE_F32; /* one word each: 8 dims run */
    CHECK(vk->supports_node(dev, &t.g, 0, &err) == BERTH_OK);
    vk->close(dev);
    dlclose(mod);
    return check_exit();
#endif
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "vulkan-refusals") == 0) return vulkan_refusals();
    test_place();
    test_options();
    test_attrs();
    test_graph();
    test_ops();
    return check_exit();
}
