#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int spec_open(spec_case *c, const char *text, const int64_t *syms) {
    memset(c, 0, sizeof *c);
    c->g = berth_graph_parse("m.webnn", text, strlen(text), &c->err);
    if (!c->g) {
        fprintf(stderr, "test graph does not parse: %s\n", c->err.msg);
        return -1;
    }
    c->weight_ids = malloc(sizeof(uint32_t) * (c->g->n_values + 1));
    uint32_t next = 0;
    for (uint32_t v = 0; v < c->g->n_values; v++) {
        const bg_value *gv = &c->g->values[v];
        c->weight_ids[v] = gv->kind == BG_CONST && gv->init == BG_INIT_WEIGHTS ? next++ : UINT32_MAX;
    }
    c->s = berth_specialize(c->g, syms, c->weight_ids, &c->err);
    return c->s ? 0 : -1;
}

void spec_close(spec_case *c) {
    berth_spec_free(c->s);
    berth_graph_free(c->g);
    free(c->weight_ids);
    memset(c, 0, sizeof *c);
}

const berth_operand *spec_operand(const spec_case *c, const char *name) {
    if (!c->s) return NULL;
    int32_t v = berth_graph_find(c->g, name);
    return v < 0 ? NULL : berth_spec_value(c->s, v);
}

static const char *dname(berth_dtype t) {
    switch (t) {
    case BERTH_DTYPE_F32: return "f32";
    case BERTH_DTYPE_F16: return "f16";
    case BERTH_DTYPE_I32: return "i32";
    case BERTH_DTYPE_U32: return "u32";
    case BERTH_DTYPE_I64: return "i64";
    case BERTH_DTYPE_U64: return "u64";
    case BERTH_DTYPE_I8: return "i8";
    case BERTH_DTYPE_U8: return "u8";
    case BERTH_DTYPE_I4: return "i4";
    case BERTH_DTYPE_U4: return "u4";
    default: return "?";
    }
}

const char *spec_shape(const spec_case *c, const char *name) {
    static char buf[256];
    if (!c->s || berth_graph_find(c->g, name) < 0) return "missing";
    const berth_operand *o = spec_operand(c, name);
    if (!o) return "dropped";
    int k = snprintf(buf, sizeof buf, "%s[", dname(o->dtype));
    for (uint32_t i = 0; i < o->rank; i++)
        k += snprintf(buf + k, sizeof buf - (size_t)k, "%s%lld", i ? ", " : "", (long long)o->dims[i]);
    snprintf(buf + k, sizeof buf - (size_t)k, "]");
    return buf;
}

int spec_count_op(const berth_spec *s, const char *op) {
    int n = 0;
    for (uint32_t i = 0; s && i < s->desc.n_nodes; i++) n += !strcmp(s->desc.nodes[i].op, op);
    return n;
}

const char *spec_graph(const char *inputs, const char *consts, const char *nodes, const char *outputs) {
    static char buf[8192];
    snprintf(buf, sizeof buf,
             "webnn_graph \"t\" v2 {\n"
             "  inputs { %s }\n"
             "  consts { %s }\n"
             "  nodes {\n%s\n  }\n"
             "  outputs { %s }\n"
             "}\n",
             inputs, consts, nodes, outputs);
    return buf;
}
