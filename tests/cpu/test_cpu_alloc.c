/* run() must not allocate. This binary interposes the allocator (glibc's
 * __libc_* underneath) and counts calls from any thread while a flag is
 * set; under AddressSanitizer, whose runtime owns malloc, it counts with
 * the sanitizer's allocation hooks instead. The counter is proven live
 * before it is trusted. */
#include <stdatomic.h>

#include "cpu_harness.h"

#if defined(__SANITIZE_ADDRESS__)
#define CPU_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CPU_TEST_ASAN 1
#endif
#endif

static atomic_int counting;
static atomic_long allocations;

static void note(void) {
    if (atomic_load_explicit(&counting, memory_order_relaxed)) atomic_fetch_add(&allocations, 1);
}

#ifdef CPU_TEST_ASAN
/* Declared here: gcc does not ship <sanitizer/allocator_interface.h>. */
int __sanitizer_install_malloc_and_free_hooks(void (*on_malloc)(const volatile void *, size_t),
                                              void (*on_free)(const volatile void *));
static void on_malloc(const volatile void *p, size_t n) { (void)p, (void)n, note(); }
static void on_free(const volatile void *p) { (void)p, note(); }
static void install_counter(void) { __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free); }
#else
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

void *malloc(size_t n) { note(); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { note(); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { note(); return __libc_realloc(p, n); }
void free(void *p) { if (p) note(); __libc_free(p); }
void *aligned_alloc(size_t al, size_t n) { note(); return __libc_memalign(al, n); }
int posix_memalign(void **out, size_t al, size_t n) {
    note();
    void *p = __libc_memalign(al, n);
    if (!p) return 12; /* ENOMEM */
    *out = p;
    return 0;
}
static void install_counter(void) {}
#endif

static void start_count(void) { atomic_store(&allocations, 0), atomic_store(&counting, 1); }
static long stop_count(void) { atomic_store(&counting, 0); return atomic_load(&allocations); }

/* A graph that exercises the pool (large elementwise, batched matmul)
 * and OpenBLAS (one big product), intermediates in the arena and
 * outputs written in place. */
static void build(tgraph *g, const float *w, const float *bias) {
    uint32_t x = tg_input(g, "x", BERTH_DTYPE_F32, 3, DIMS(8, 64, 96));
    uint32_t wi = tg_const(g, "w", BERTH_DTYPE_F32, 2, DIMS(96, 96), w, sizeof(float) * 96 * 96);
    uint32_t bi = tg_const(g, "b", BERTH_DTYPE_F32, 1, DIMS(96), bias, sizeof(float) * 96);
    uint32_t mm = tg_value(g, "mm", BERTH_DTYPE_F32, 3, DIMS(8, 64, 96));
    uint32_t ad = tg_value(g, "ad", BERTH_DTYPE_F32, 3, DIMS(8, 64, 96));
    uint32_t r = tg_value(g, "r", BERTH_DTYPE_F32, 3, DIMS(8, 64, 96));
    uint32_t s = tg_value(g, "s", BERTH_DTYPE_F32, 2, DIMS(512, 96));
    uint32_t big = tg_value(g, "big", BERTH_DTYPE_F32, 2, DIMS(512, 96));
    uint32_t y = tg_value(g, "y", BERTH_DTYPE_F32, 2, DIMS(512, 96));
    uint32_t cmp = tg_value(g, "cmp", BERTH_DTYPE_U8, 2, DIMS(512, 96));
    tg_node(g, "matmul", 2, IDX(x, wi), 1, IDX(mm), 0, NULL);
    tg_node(g, "add", 2, IDX(mm, bi), 1, IDX(ad), 0, NULL);
    tg_node(g, "relu", 1, IDX(ad), 1, IDX(r), 0, NULL);
    tg_node(g, "reshape", 1, IDX(r), 1, IDX(s), 0, NULL);
    tg_node(g, "matmul", 2, IDX(s, wi), 1, IDX(big), 0, NULL);
    tg_node(g, "tanh", 1, IDX(big), 1, IDX(y), 0, NULL);
    tg_node(g, "greater", 2, IDX(y, s), 1, IDX(cmp), 0, NULL);
    tg_output(g, y);
    tg_output(g, cmp);
}

/* Every other kernel family: conv (im2col scratch), pooling, norms,
 * softmax, attention (per-task scratch), data movement, reductions. */
/* Attribute lists outlive build_wide: the graph keeps pointers to them. */
static const int64_t pad1[4] = {1, 1, 1, 1}, two2[2] = {2, 2}, perm[4] = {0, 1, 3, 2}, axes23[2] = {2, 3};
#define INTS_OF(k, arr) ((berth_attr){.key = (k), .type = BERTH_ATTR_INTS, .count = sizeof(arr) / sizeof(arr[0]), .ints = (arr)})

static void build_wide(tgraph *g, const float *w) {
    uint32_t x = tg_input(g, "x", BERTH_DTYPE_F32, 4, DIMS(2, 4, 16, 16));
    uint32_t f = tg_const(g, "f", BERTH_DTYPE_F32, 4, DIMS(8, 4, 3, 3), w, sizeof(float) * 8 * 4 * 9);
    uint32_t cv = tg_value(g, "cv", BERTH_DTYPE_F32, 4, DIMS(2, 8, 16, 16));
    uint32_t mp = tg_value(g, "mp", BERTH_DTYPE_F32, 4, DIMS(2, 8, 8, 8));
    uint32_t ln = tg_value(g, "ln", BERTH_DTYPE_F32, 4, DIMS(2, 8, 8, 8));
    uint32_t sm = tg_value(g, "sm", BERTH_DTYPE_F32, 4, DIMS(2, 8, 8, 8));
    uint32_t at = tg_value(g, "at", BERTH_DTYPE_F32, 4, DIMS(2, 8, 8, 8));
    uint32_t tr = tg_value(g, "tr", BERTH_DTYPE_F32, 4, DIMS(2, 8, 8, 8));
    uint32_t ct = tg_value(g, "ct", BERTH_DTYPE_F32, 4, DIMS(2, 16, 8, 8));
    uint32_t rd = tg_value(g, "rd", BERTH_DTYPE_F32, 2, DIMS(2, 16));
    uint32_t idx = tg_input(g, "idx", BERTH_DTYPE_I32, 1, DIMS(3));
    uint32_t ga = tg_value(g, "ga", BERTH_DTYPE_F32, 2, DIMS(2, 3));
    tg_node(g, "conv2d", 2, IDX(x, f), 1, IDX(cv), 1, (berth_attr[]){INTS_OF("padding", pad1)});
    tg_node(g, "maxPool2d", 1, IDX(cv), 1, IDX(mp), 2,
            (berth_attr[]){INTS_OF("windowDimensions", two2), INTS_OF("strides", two2)});
    tg_node(g, "layerNormalization", 1, IDX(mp), 1, IDX(ln), 0, NULL);
    tg_node(g, "softmax", 1, IDX(ln), 1, IDX(sm), 1, (berth_attr[]){A_INT("axis", 1)});
    tg_node(g, "berth.attention", 3, IDX(sm, ln, mp), 1, IDX(at), 0, NULL);
    tg_node(g, "transpose", 1, IDX(at), 1, IDX(tr), 1, (berth_attr[]){INTS_OF("permutation", perm)});
    tg_node(g, "concat", 2, IDX(tr, sm), 1, IDX(ct), 1, (berth_attr[]){A_INT("axis", 1)});
    tg_node(g, "reduceMean", 1, IDX(ct), 1, IDX(rd), 1, (berth_attr[]){INTS_OF("axes", axes23)});
    tg_node(g, "gather", 2, IDX(rd, idx), 1, IDX(ga), 1, (berth_attr[]){A_INT("axis", 1)});
    tg_output(g, ga);
}

static void count_wide(void) {
    float *w = h_randf(8 * 4 * 9), *x = h_randf(2 * 4 * 16 * 16), y[6];
    int32_t idx[3] = {0, 15, -1};
    tgraph *g = calloc(1, sizeof *g);
    build_wide(g, w);
    berth_graph_desc d = tg_desc(g);
    berth_plan *p = NULL;
    berth_error err;
    CHECK(cpu.be->plan(cpu.dev, NULL, &d, &p, &err) == BERTH_OK);
    if (!p) {
        fprintf(stderr, "  %s\n", err.msg);
        free(g), free(w), free(x);
        return;
    }
    berth_tensor ti[2] = {h_tensor(&g->ops[g->ins[0]], x), h_tensor(&g->ops[g->ins[1]], idx)};
    berth_tensor to = h_tensor(&g->ops[g->outs[0]], y);
    for (int i = 0; i < 3; i++) CHECK(cpu.be->run(p, ti, 2, &to, 1, &err) == BERTH_OK);
    int ok = 1;
    start_count();
    for (int i = 0; i < 1000; i++) ok &= cpu.be->run(p, ti, 2, &to, 1, &err) == BERTH_OK;
    long n = stop_count();
    CHECK(ok);
    CHECK(n == 0);
    if (n) fprintf(stderr, "  %ld allocations in 1000 warm runs of the wide graph\n", n);
    CHECK(y[1] == y[2]); /* index -1 wraps to 15 */
    cpu.be->free_plan(p);
    free(g), free(w), free(x);
}

/* A classifier's last layer: [1, 200] x [200, 2], too few rows for the
 * packed kernel. OpenBLAS's small-matrix path allocates on every call for
 * such shapes, so berth computes them itself. */
static void count_tiny(void) {
    float *w = h_randf(200 * 2), *x = h_randf(200), y[2];
    tgraph *g = calloc(1, sizeof *g);
    uint32_t xi = tg_input(g, "x", BERTH_DTYPE_F32, 2, DIMS(1, 200));
    uint32_t wi = tg_const(g, "w", BERTH_DTYPE_F32, 2, DIMS(200, 2), w, sizeof(float) * 400);
    uint32_t yi = tg_value(g, "y", BERTH_DTYPE_F32, 2, DIMS(1, 2));
    tg_node(g, "matmul", 2, IDX(xi, wi), 1, IDX(yi), 0, NULL);
    tg_output(g, yi);
    berth_graph_desc d = tg_desc(g);
    berth_plan *p = NULL;
    berth_error err;
    CHECK(cpu.be->plan(cpu.dev, NULL, &d, &p, &err) == BERTH_OK);
    if (p) {
        berth_tensor ti = h_tensor(&g->ops[xi], x), to = h_tensor(&g->ops[yi], y);
        for (int i = 0; i < 3; i++) CHECK(cpu.be->run(p, &ti, 1, &to, 1, &err) == BERTH_OK);
        start_count();
        int ok = 1;
        for (int i = 0; i < 1000; i++) ok &= cpu.be->run(p, &ti, 1, &to, 1, &err) == BERTH_OK;
        long n = stop_count();
        CHECK(ok && n == 0);
        if (n) fprintf(stderr, "  %ld allocations in 1000 warm runs of a [1, 200] x [200, 2] product\n", n);
        for (int j = 0; j < 2; j++) {
            double s = 0;
            for (int k = 0; k < 200; k++) s += (double)x[k] * w[k * 2 + j];
            CHECK(fabs(s - y[j]) < 1e-4);
        }
        cpu.be->free_plan(p);
    }
    free(g), free(w), free(x);
}

int main(void) {
    install_counter();
    if (!h_open(2)) {
        CHECK(0);
        return check_exit();
    }
    /* the counter must see an allocation made on purpose */
    void *(*volatile do_malloc)(size_t) = malloc;
    void (*volatile do_free)(void *) = free;
    start_count();
    do_free(do_malloc(32));
    CHECK(stop_count() >= 1);

    float *w = h_randf(96 * 96), *bias = h_randf(96), *x = h_randf(8 * 64 * 96);
    float *y = calloc(512 * 96, sizeof(float));
    uint8_t *cmp = calloc(512 * 96, 1);
    tgraph *g = calloc(1, sizeof *g);
    build(g, w, bias);
    berth_graph_desc d = tg_desc(g);
    berth_plan *p = NULL;
    berth_error err;
    CHECK(cpu.be->plan(cpu.dev, NULL, &d, &p, &err) == BERTH_OK);
    if (!p) {
        fprintf(stderr, "  %s\n", err.msg);
        return check_exit();
    }
    berth_tensor ti = h_tensor(&g->ops[g->ins[0]], x);
    berth_tensor to[2] = {h_tensor(&g->ops[g->outs[0]], y), h_tensor(&g->ops[g->outs[1]], cmp)};
    for (int i = 0; i < 5; i++) CHECK(cpu.be->run(p, &ti, 1, to, 2, &err) == BERTH_OK);
    int ok = 1;
    start_count();
    for (int i = 0; i < 1000; i++) ok &= cpu.be->run(p, &ti, 1, to, 2, &err) == BERTH_OK;
    long n = stop_count();
    CHECK(ok);
    CHECK(n == 0);
    if (n) fprintf(stderr, "  %ld allocations in 1000 warm runs\n", n);
    /* the runs computed something: tanh of a product is in [-1, 1] and not all zero */
    int in_range = 1, nonzero = 0;
    for (int i = 0; i < 512 * 96; i++) in_range &= y[i] >= -1.0f && y[i] <= 1.0f, nonzero |= y[i] != 0.0f;
    CHECK(in_range && nonzero);
    cpu.be->free_plan(p);
    count_wide();
    count_tiny();
    h_shutdown();
    free(g), free(w), free(bias), free(x), free(y), free(cmp);
    return check_exit();
}
