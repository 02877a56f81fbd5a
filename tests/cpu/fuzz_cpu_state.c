/* libFuzzer target for the cpu backend's saved prepared weights: the
 * bytes a [cache] file hands load_state. Each input is taken by fresh
 * weights (a 64 x 48 product operand and a bias, as test_cpu_state
 * saves them); whatever is taken must then plan and run the product, so
 * a panel of the wrong size is read by the kernels, where the sanitizers
 * see it. It loads the cpu module built with coverage and the
 * sanitizers (berth-cpu-fuzz), as tests/diff's fuzzer does.
 *   Run: fuzz_cpu_state -max_total_time=60 COPY_OF_tests/cpu/corpus */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "berth/backend.h"

enum { M = 5, K = 64, N = 48 };

static void h_log(void *ctx, berth_log_level level, const char *msg) { (void)ctx, (void)level, (void)msg; }
static uint32_t h_count(void *ctx) { return (void)ctx, 1; }
static berth_status h_option(void *ctx, uint32_t i, const char **key, const char **value) {
    (void)ctx;
    if (i) return BERTH_ERR_INVALID;
    *key = "threads", *value = "1";
    return BERTH_OK;
}
static void *h_alloc(void *ctx, size_t bytes, size_t align) {
    void *p = NULL;
    (void)ctx;
    return posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, bytes ? bytes : 1) ? NULL : p;
}
static void h_free(void *ctx, void *p) { (void)ctx, free(p); }
static const berth_host_services host = {BERTH_BACKEND_ABI_VERSION, sizeof host, NULL, h_log, h_count, h_option,
                                         h_alloc, h_free};

static const berth_backend *be;
static berth_device *dev;
static float w[K * N], x[M * K], y[M * N];

static berth_weights *upload(void) {
    berth_upload_info info = {.struct_size = sizeof info, .n_tensors = 1, .total_bytes = sizeof w,
                              .largest_bytes = sizeof w};
    berth_weights *out = NULL;
    berth_error err;
    int taken = 0;
    berth_weight_desc d = {.name = "w", .id = 0, .dtype = BERTH_DTYPE_F32, .rank = 2, .dims = {K, N}, .bytes = sizeof w};
    if (be->upload_begin(dev, &info, &out, &err) || be->upload_tensor(out, &d, w, 0, &taken, &err) ||
        be->upload_end(out, &err))
        abort();
    return out;
}

static void run_product(berth_weights *wt) {
    berth_operand ops[3] = {
        {.name = "x", .kind = BERTH_OPERAND_INPUT, .dtype = BERTH_DTYPE_F32, .rank = 2, .dims = {M, K}},
        {.name = "w", .kind = BERTH_OPERAND_WEIGHT, .dtype = BERTH_DTYPE_F32, .rank = 2, .dims = {K, N}},
        {.name = "y", .kind = BERTH_OPERAND_VALUE, .dtype = BERTH_DTYPE_F32, .rank = 2, .dims = {M, N}}};
    static const uint32_t in[2] = {0, 1}, out[1] = {2}, gin[1] = {0};
    berth_node node = {.op = "matmul", .name = "y", .n_inputs = 2, .inputs = in, .n_outputs = 1, .outputs = out};
    berth_graph_desc g = {.struct_size = sizeof g, .n_operands = 3, .operands = ops, .n_nodes = 1, .nodes = &node,
                          .n_inputs = 1, .inputs = gin, .n_outputs = 1, .outputs = out,
                          .operand_size = sizeof(berth_operand), .node_size = sizeof(berth_node),
                          .attr_size = sizeof(berth_attr), .tensor_size = sizeof(berth_tensor)};
    berth_plan *p = NULL;
    berth_error err;
    if (be->plan(dev, wt, &g, &p, &err)) abort(); /* taken bytes must leave the weights usable */
    berth_tensor ti = {.data = x, .dtype = BERTH_DTYPE_F32, .rank = 2, .dims = {M, K}, .bytes = sizeof x};
    berth_tensor to = {.data = y, .dtype = BERTH_DTYPE_F32, .rank = 2, .dims = {M, N}, .bytes = sizeof y};
    if (be->run(p, &ti, 1, &to, 1, &err)) abort();
    be->free_plan(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!be) {
        berth_error err;
        void *mod = dlopen(BERTH_CPU_MODULE, RTLD_NOW | RTLD_LOCAL);
        union {
            void *obj;
            berth_backend_entry_fn fn;
        } entry = {mod ? dlsym(mod, BERTH_BACKEND_ENTRY_SYMBOL) : NULL};
        be = entry.obj ? entry.fn(BERTH_BACKEND_ABI_VERSION, &host, &err) : NULL;
        if (!be || be->open(&host, &dev, &err)) abort();
        for (size_t i = 0; i < K * N; i++) w[i] = (float)(i % 7) - 3.0f;
        for (size_t i = 0; i < M * K; i++) x[i] = (float)(i % 5) * 0.5f;
    }
    berth_weights *wt = upload();
    berth_error err;
    if (be->load_state(dev, wt, BERTH_STATE_WEIGHTS, data, size, &err) == BERTH_OK) run_product(wt);
    be->free_weights(wt);
    return 0;
}
