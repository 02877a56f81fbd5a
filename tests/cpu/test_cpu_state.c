/* Prepared weights through the ABI (1.4): prepare_weights packs what a
 * graph's products read and lets the uploaded form go, the plan after it
 * gives the same bits as one that packed for itself; save_state's bytes
 * taken back by load_state on fresh weights give those bits again; and
 * bytes that are not this build's, this machine's kernels' or these
 * weights' are refused whole, leaving the weights as they were. */
#include "cpu_harness.h"

enum { M = 5, K = 64, N = 48 };

static float *wdata, *xdata;

static berth_weights *upload_w(uint32_t rows, uint32_t cols) {
    berth_upload_info info = {.struct_size = sizeof info, .n_tensors = 1, .total_bytes = 4u * rows * cols,
                              .largest_bytes = 4u * rows * cols};
    berth_weights *w = NULL;
    berth_error err;
    int taken = 0;
    CHECK(cpu.be->upload_begin(cpu.dev, &info, &w, &err) == BERTH_OK);
    berth_weight_desc d = {.name = "w", .id = 0, .dtype = BERTH_DTYPE_F32, .rank = 2, .dims = {rows, cols},
                           .bytes = 4u * rows * cols};
    CHECK(cpu.be->upload_tensor(w, &d, wdata, 0, &taken, &err) == BERTH_OK);
    CHECK(cpu.be->upload_end(w, &err) == BERTH_OK);
    return w;
}

/* y[M, N] = x[M, K] @ w[K, N] */
static void product_graph(tgraph *g) {
    tg_init(g);
    uint32_t xi = tg_input(g, "x", BERTH_DTYPE_F32, 2, DIMS(M, K));
    uint32_t wi = tg_weight(g, "w", 0, 2, DIMS(K, N));
    uint32_t yi = tg_value(g, "y", BERTH_DTYPE_F32, 2, DIMS(M, N));
    tg_node(g, "matmul", 2, IDX(xi, wi), 1, IDX(yi), 0, NULL);
    tg_output(g, yi);
}

static void run_into(berth_weights *w, float *y) {
    static tgraph g;
    product_graph(&g);
    berth_error err = {{0}};
    berth_status st = h_run_w(&g, w, (void *[]){xdata}, (void *[]){y}, &err);
    CHECK(st == BERTH_OK);
    if (st) fprintf(stderr, "  run: %s\n", err.msg);
}

static berth_status prepare(berth_weights *w, berth_prepare_info *info) {
    static tgraph g;
    product_graph(&g);
    berth_graph_desc d = tg_desc(&g);
    memset(info, 0, sizeof *info);
    info->struct_size = sizeof *info;
    berth_error err = {{0}};
    return cpu.be->prepare_weights(w, &d, info, &err);
}

/* load_state refuses bytes, names why, and leaves w's bytes and results
 * as they were. */
static void check_refused(const void *bytes, size_t n, const char *why, const float *want) {
    berth_weights *w = upload_w(K, N);
    uint64_t before = cpu.be->weights_bytes(w);
    berth_error err = {{0}};
    CHECK(cpu.be->load_state(cpu.dev, w, BERTH_STATE_WEIGHTS, bytes, n, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, why);
    CHECK(cpu.be->weights_bytes(w) == before);
    float y[M * N];
    run_into(w, y);
    CHECK(memcmp(y, want, sizeof y) == 0);
    cpu.be->free_weights(w);
}

/* With a folder argument, what load_state is fuzzed on: the saved
 * bytes, as weights-ISA.bin (tests/cpu/corpus holds them). */
static void write_seed(const char *dir, const char *isa, const void *bytes, size_t n) {
    char path[512];
    snprintf(path, sizeof path, "%s/weights-%s.bin", dir, isa);
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(bytes, 1, n, f) == n);
    if (f) fclose(f);
}

int main(int argc, char **argv) {
    if (!h_open(2)) return 1;
    CHECK(cpu.be->abi_version == BERTH_BACKEND_ABI_V1_4 && cpu.be->prepare_weights && cpu.be->save_state &&
          cpu.be->load_state);
    wdata = h_randf(K * N);
    xdata = h_randf(M * K);

    /* the plan packs for itself */
    float ref[M * N], got[M * N];
    berth_weights *plain = upload_w(K, N);
    run_into(plain, ref);
    cpu.be->free_weights(plain);

    /* packed at prepare: one copy held, the same bits */
    berth_weights *w = upload_w(K, N);
    berth_prepare_info info;
    CHECK(prepare(w, &info) == BERTH_OK);
    CHECK(info.n_prepared == 1);
    CHECK(info.bytes_prepared >= 4u * K * N);
    CHECK(info.bytes_released == 4u * K * N);
    CHECK(cpu.be->weights_bytes(w) == info.bytes_prepared);
    run_into(w, got);
    CHECK(memcmp(got, ref, sizeof ref) == 0);
    CHECK(cpu.be->weights_bytes(w) == info.bytes_prepared); /* the plan read the packed copy only */

    /* saved, and taken back by fresh weights */
    berth_error err = {{0}};
    size_t n = 0;
    CHECK(cpu.be->save_state(cpu.dev, w, BERTH_STATE_WEIGHTS, NULL, &n, &err) == BERTH_OK);
    CHECK(n > info.bytes_prepared);
    uint8_t *saved = malloc(n + 1);
    size_t cap = n - 1;
    CHECK(cpu.be->save_state(cpu.dev, w, BERTH_STATE_WEIGHTS, saved, &cap, &err) == BERTH_ERR_INVALID);
    cap = n;
    CHECK(cpu.be->save_state(cpu.dev, w, BERTH_STATE_WEIGHTS, saved, &cap, &err) == BERTH_OK && cap == n);
    if (argc > 1) write_seed(argv[1], (const char *)saved + sizeof "berthcpu-weights-1", saved, n);
    CHECK(cpu.be->save_state(cpu.dev, w, BERTH_STATE_PROGRAMS, NULL, &cap, &err) == BERTH_ERR_UNSUPPORTED);
    berth_weights *back = upload_w(K, N);
    CHECK(cpu.be->load_state(cpu.dev, back, BERTH_STATE_WEIGHTS, saved, n, &err) == BERTH_OK);
    CHECK(cpu.be->weights_bytes(back) == info.bytes_prepared);
    memset(got, 0, sizeof got);
    run_into(back, got);
    CHECK(memcmp(got, ref, sizeof ref) == 0);
    cpu.be->free_weights(back);
    cpu.be->free_weights(w);

    /* refused whole */
    check_refused(saved, n - 1, "end early", ref);
    saved[n] = 0;
    check_refused(saved, n + 1, "left over", ref);
    saved[0] ^= 1;
    check_refused(saved, n, "not this build's", ref);
    saved[0] ^= 1;
    char *isa = (char *)saved + sizeof "berthcpu-weights-1";
    char kept[32];
    memcpy(kept, isa, sizeof kept);
    strcpy(isa, "other");
    check_refused(saved, n, "'other' kernels", ref);
    memcpy(isa, kept, sizeof kept);
    /* bytes of other weights: the same count, another size */
    berth_weights *other = upload_w(K / 2, N);
    CHECK(cpu.be->load_state(cpu.dev, other, BERTH_STATE_WEIGHTS, saved, n, &err) == BERTH_ERR_INVALID);
    CHECK_CONTAINS(err.msg, "does not match what was uploaded");
    cpu.be->free_weights(other);
    /* panels a vector kernel set packed are refused by the generic one
     * (where this machine has one: the 32-bit build runs generic only) */
    if (strcmp(kept, "generic") && h_reopen("isa", "generic")) {
        berth_weights *w2 = upload_w(K, N);
        CHECK(cpu.be->load_state(cpu.dev, w2, BERTH_STATE_WEIGHTS, saved, n, &err) == BERTH_ERR_INVALID);
        CHECK_CONTAINS(err.msg, "'generic'");
        if (argc > 1) { /* the generic kernels' own bytes */
            berth_prepare_info gi;
            size_t gn = 0;
            CHECK(prepare(w2, &gi) == BERTH_OK);
            CHECK(cpu.be->save_state(cpu.dev, w2, BERTH_STATE_WEIGHTS, NULL, &gn, &err) == BERTH_OK);
            uint8_t *gb = malloc(gn);
            CHECK(gb && cpu.be->save_state(cpu.dev, w2, BERTH_STATE_WEIGHTS, gb, &gn, &err) == BERTH_OK);
            if (gb) write_seed(argv[1], "generic", gb, gn);
            free(gb);
        }
        cpu.be->free_weights(w2);
    }
    free(saved);
    free(wdata);
    free(xdata);
    h_shutdown();
    return check_exit();
}
