/* The work of one node, for the partitioner's estimates: products and
 * convolutions by their multiply-adds, every other op by the elements it
 * writes, and every op by the bytes it touches. */
#include <string.h>

#include "berth/ops.h"
#include "bk_attr.h"
#include "cost.h"

static double elems(const berth_operand *o) {
    double n = 1;
    for (uint32_t r = 0; r < o->rank; r++) n *= (double)o->dims[r];
    return n;
}

static void add_bytes(double *bytes, const berth_operand *o) {
    *bytes += elems(o) * (o->dtype == BERTH_DTYPE_I8 || o->dtype == BERTH_DTYPE_U8     ? 1
                          : o->dtype == BERTH_DTYPE_F16                               ? 2
                          : o->dtype == BERTH_DTYPE_I64 || o->dtype == BERTH_DTYPE_U64 ? 8
                                                                                       : 4);
}

/* The filter dim that counts output (or, transposed, input) channels:
 * the position of `which` in the layout string. */
static double filter_channels(const berth_node *nd, const berth_operand *f, const char *def, char which) {
    const berth_attr *a = bk_attr_find(bk_node_attrs(nd, sizeof(berth_attr), 0), "filterLayout");
    const char *layout = a && a->type == BERTH_ATTR_STRING && a->s ? a->s : def;
    const char *at = strchr(layout, which);
    uint32_t axis = at ? (uint32_t)(at - layout) : 0;
    return axis < f->rank && f->dims[axis] > 0 ? (double)f->dims[axis] : 1;
}

void berth_node_work(const berth_graph_desc *d, uint32_t i, double *flops, double *bytes) {
    const berth_node *nd = &d->nodes[i];
    *bytes = 0;
    double out = 0;
    for (uint32_t j = 0; j < nd->n_inputs; j++) add_bytes(bytes, &d->operands[nd->inputs[j]]);
    for (uint32_t j = 0; j < nd->n_outputs; j++) {
        add_bytes(bytes, &d->operands[nd->outputs[j]]);
        out += elems(&d->operands[nd->outputs[j]]);
    }
    *flops = out;
    if (!nd->n_inputs || !nd->n_outputs) return;
    const berth_operand *a = &d->operands[nd->inputs[0]], *y = &d->operands[nd->outputs[0]];
    const berth_operand *b = nd->n_inputs > 1 ? &d->operands[nd->inputs[1]] : NULL;
    switch (berth_op_find(nd->op)) {
    case BERTH_OP_MATMUL:
    case BERTH_OP_MATMUL_EPILOGUE:
    case BERTH_OP_MATMUL_QUANTIZED:
        if (a->rank) *flops = 2 * elems(y) * (double)a->dims[a->rank - 1];
        break;
    case BERTH_OP_GEMM:
        if (y->rank == 2 && y->dims[0] > 0) *flops = 2 * elems(y) * elems(a) / (double)y->dims[0];
        break;
    case BERTH_OP_CONV2D:
    case BERTH_OP_CONV2D_EPILOGUE:
        if (b) *flops = 2 * elems(y) * elems(b) / filter_channels(nd, b, "oihw", 'o');
        break;
    case BERTH_OP_CONV_TRANSPOSE2D:
        if (b) *flops = 2 * elems(a) * elems(b) / filter_channels(nd, b, "iohw", 'i');
        break;
    case BERTH_OP_ATTENTION: /* q k^T and p v: 4 q-elements x keys */
        if (nd->n_inputs == 3) {
            const berth_operand *v = &d->operands[nd->inputs[2]];
            if (v->rank >= 2) *flops = 4 * elems(a) * (double)v->dims[v->rank - 2];
        }
        break;
    default:
        break;
    }
}
