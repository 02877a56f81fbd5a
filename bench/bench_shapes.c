/* `shapes`: the matrix products a model does at each bucket, as the
 * GEMMs they amount to, for `sgemm` to time. Read from berth's own
 * specialization of lane 0 at the bucket (before fusion), so every
 * dim is the one the backend plans with; the graph came from the same
 * ONNX file the peer runs, so the shapes are the peer's too.
 * The graph comes from berth_executor_bucket_graph. */
#include <stdlib.h>
#include <string.h>

#include "bench.h"

typedef struct gemm_row {
    int64_t m, n, k, count;
} gemm_row;

static const berth_attr *attr(const berth_node *node, const char *key) {
    for (uint32_t i = 0; i < node->n_attrs; i++)
        if (strcmp(node->attrs[i].key, key) == 0) return &node->attrs[i];
    return NULL;
}

static int64_t prod(const int64_t *d, uint32_t from, uint32_t to) {
    int64_t p = 1;
    for (uint32_t i = from; i < to; i++) p *= d[i];
    return p;
}

/* 1 and *row filled when the node is a matrix product; 0 otherwise. */
static int as_gemm(const berth_graph_desc *g, const berth_node *node, gemm_row *row) {
    if (node->n_inputs < 2 || node->n_outputs < 1) return 0;
    const berth_operand *a = &g->operands[node->inputs[0]], *b = &g->operands[node->inputs[1]];
    const berth_operand *y = &g->operands[node->outputs[0]];
    if (strcmp(node->op, "matmul") == 0 && a->rank >= 2 && b->rank >= 2) {
        row->k = a->dims[a->rank - 1];
        row->n = b->dims[b->rank - 1];
        if (prod(b->dims, 0, b->rank - 2) == 1) {
            /* one weight matrix for every row of a: a single GEMM */
            row->m = prod(a->dims, 0, a->rank - 1);
            row->count = 1;
        } else {
            row->m = a->dims[a->rank - 2];
            row->count = prod(y->dims, 0, y->rank - 2);
        }
        return 1;
    }
    if (strcmp(node->op, "gemm") == 0 && a->rank == 2 && y->rank == 2) {
        const berth_attr *t = attr(node, "aTranspose");
        row->m = y->dims[0];
        row->n = y->dims[1];
        row->k = t && t->i ? a->dims[0] : a->dims[1];
        row->count = 1;
        return 1;
    }
    if (strcmp(node->op, "conv2d") == 0 && a->rank == 4 && b->rank == 4 && y->rank == 4) {
        const berth_attr *il = attr(node, "inputLayout"), *fl = attr(node, "filterLayout");
        const berth_attr *gr = attr(node, "groups");
        int nhwc = il && il->s && strcmp(il->s, "nhwc") == 0;
        const char *f = fl && fl->s ? fl->s : "oihw";
        if (strlen(f) != 4) return 0;
        int64_t groups = gr && gr->i > 0 ? gr->i : 1, out_c = 0, in_c = 0, kh = 0, kw = 0;
        for (int i = 0; i < 4; i++) {
            if (f[i] == 'o') out_c = b->dims[i];
            if (f[i] == 'i') in_c = b->dims[i];
            if (f[i] == 'h') kh = b->dims[i];
            if (f[i] == 'w') kw = b->dims[i];
        }
        row->m = groups > 0 ? out_c / groups : out_c;
        row->n = nhwc ? y->dims[1] * y->dims[2] : y->dims[2] * y->dims[3];
        row->k = in_c * kh * kw; /* the filter's i is already per group */
        row->count = y->dims[0] * groups;
        return 1;
    }
    return 0;
}

static int write_bucket(const berth_graph_desc *g, const char *path) {
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "berth-bench: cannot write %s\n", path);
        return 1;
    }
    /* identical products are merged so each shape is timed once */
    gemm_row *rows = calloc(g->n_nodes ? g->n_nodes : 1, sizeof *rows);
    uint32_t n = 0;
    if (!rows) {
        fclose(f);
        fprintf(stderr, "berth-bench: cannot allocate %u rows\n", g->n_nodes);
        return 1;
    }
    for (uint32_t i = 0; i < g->n_nodes; i++) {
        gemm_row r;
        if (!as_gemm(g, &g->nodes[i], &r) || r.m < 1 || r.n < 1 || r.k < 1 || r.count < 1) continue;
        uint32_t j = 0;
        while (j < n && !(rows[j].m == r.m && rows[j].n == r.n && rows[j].k == r.k)) j++;
        if (j == n) rows[n++] = (gemm_row){r.m, r.n, r.k, 0};
        rows[j].count += r.count;
    }
    for (uint32_t j = 0; j < n; j++)
        fprintf(f, "%lld %lld %lld %lld\n", (long long)rows[j].m, (long long)rows[j].n,
                (long long)rows[j].k, (long long)rows[j].count);
    free(rows);
    return fclose(f) == 0 ? 0 : 1;
}

typedef struct bucket_write {
    const char *path;
    int rc;
} bucket_write;

static void visit_bucket(void *ctx, const berth_graph_desc *g) {
    bucket_write *w = ctx;
    w->rc = write_bucket(g, w->path);
}

int bench_shapes(const char *config, const char *dir) {
    berth_error err;
    berth_executor *ex;
    if (berth_executor_open(config, NULL, &ex, &err) != BERTH_OK) {
        fprintf(stderr, "berth-bench: %s\n", err.msg);
        return 1;
    }
    int rc = 0;
    uint32_t n = berth_executor_bucket_count(ex, 0);
    for (uint32_t b = 0; b < n && rc == 0; b++) {
        char path[1024], desc[256];
        snprintf(path, sizeof path, "%s/shapes-%u.txt", dir, b);
        bucket_write w = {path, 0};
        if (berth_executor_bucket_graph(ex, 0, b, visit_bucket, &w, &err) != BERTH_OK) {
            fprintf(stderr, "berth-bench: %s: %s\n", config, err.msg);
            rc = 1;
            break;
        }
        rc = w.rc;
        berth_executor_bucket_describe(ex, 0, b, desc, sizeof desc);
        if (rc == 0) printf("%u %s\n", b, desc);
    }
    berth_executor_close(ex);
    return rc;
}
