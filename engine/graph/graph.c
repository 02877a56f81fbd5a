/* The parsed graph: loading a file, looking things up, and the checker that
 * makes every graph the parser returns well formed (each name defined once,
 * every use defined by an earlier node, every op known). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "berth/ops.h"
#include "util.h"
#include "webnn.h"

/* An op is known iff berth/ops.def lists it as a WebNN op; berth's fused
 * ops are listed there too, but are made by passes over a specialized
 * graph and never written in a .webnn file. */
int berth_graph_op_known(const char *op) {
    berth_op_id id = berth_op_find(op);
    return id != BERTH_OP_UNKNOWN && berth_op_table()[id].kind == BERTH_OP_KIND_WEBNN;
}

/* ---- name index used by the checker -------------------------------------- */

/* Open addressing over value indices; sized to at most half full. */
typedef struct name_index {
    int32_t *slots;
    size_t mask;
} name_index;

static size_t hash_name(const char *s) {
    /* 64-bit arithmetic on every build: the constants overflow a 32-bit
     * size_t; only the low bits are used (the index masks them). */
    uint64_t h = 1469598103934665603u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
    return (size_t)h;
}

static int32_t *index_slot(const name_index *ix, const berth_graph *g, const char *name) {
    size_t h = hash_name(name) & ix->mask;
    while (ix->slots[h] >= 0 && strcmp(g->values[ix->slots[h]].name, name)) h = (h + 1) & ix->mask;
    return &ix->slots[h];
}

/* The value a reference names is usable only if it is an input, a const, or
 * the output of a node that comes before the user. */
static int resolve(const berth_graph *g, const name_index *ix, bg_ref *r, berth_error *err) {
    int32_t v = *index_slot(ix, g, r->name);
    if (v < 0) {
        if (r->kind == BG_REF_OUTPUT)
            berth_errorf(err, "%s:%u:%u: output '%s' is undefined: no input, const or node defines it", g->path,
                         r->line, r->col, r->name);
        else
            berth_errorf(err, "%s:%u:%u: '%s' used by node '%s' (%s) is undefined", g->path, r->line, r->col,
                         r->name, g->values[g->nodes[r->node].outputs[0]].name, g->nodes[r->node].op);
        return -1;
    }
    const bg_value *val = &g->values[v];
    if (r->kind != BG_REF_OUTPUT && val->kind == BG_NODE_OUTPUT && (uint32_t)val->node >= r->node) {
        berth_errorf(err, "%s:%u:%u: '%s' is used before it is defined: node '%s' (%s) uses it, line %u defines it",
                     g->path, r->line, r->col, r->name, g->values[g->nodes[r->node].outputs[0]].name,
                     g->nodes[r->node].op, val->line);
        return -1;
    }
    *r->slot = v;
    return 0;
}

int bg_check(berth_graph *g, bg_ref *refs, size_t n_refs, berth_error *err) {
    size_t cap = 16;
    while (cap < (size_t)g->n_values * 2) cap *= 2;
    name_index ix = {malloc(cap * sizeof(int32_t)), cap - 1};
    if (!ix.slots) {
        berth_errorf(err, "%s: out of memory checking the graph", g->path);
        return -1;
    }
    memset(ix.slots, 0xff, cap * sizeof(int32_t));
    int rc = 0;
    for (uint32_t k = 0; k < g->n_values && !rc; k++) {
        const bg_value *v = &g->values[k];
        int32_t *slot = index_slot(&ix, g, v->name);
        if (*slot >= 0) {
            const bg_value *first = &g->values[*slot];
            berth_errorf(err, "%s:%u:%u: '%s' is defined twice: first at line %u, again at line %u", g->path,
                         v->line, v->col, v->name, first->line, v->line);
            rc = -1;
        } else {
            *slot = (int32_t)k;
        }
    }
    /* Node order first so the first error reported is the earliest node's. */
    size_t r = 0;
    for (uint32_t n = 0; n < g->n_nodes && !rc; n++) {
        const bg_node *node = &g->nodes[n];
        if (!berth_graph_op_known(node->op)) {
            if (berth_op_find(node->op) != BERTH_OP_UNKNOWN)
                berth_errorf(err, "%s:%u:%u: op '%s' is made by the engine's fusion passes and cannot be written in a graph file",
                             g->path, node->line, node->col, node->op);
            else
                berth_errorf(err, "%s:%u:%u: unknown op '%s'", g->path, node->line, node->col, node->op);
            rc = -1;
        }
        for (; !rc && r < n_refs; r++) {
            if (refs[r].kind == BG_REF_OUTPUT) continue;
            if (refs[r].node != n) break;
            rc = resolve(g, &ix, &refs[r], err);
        }
    }
    for (size_t k = 0; k < n_refs && !rc; k++)
        if (refs[k].kind == BG_REF_OUTPUT) rc = resolve(g, &ix, &refs[k], err);
    free(ix.slots);
    return rc;
}

/* ---- loading and lookups ---------------------------------------------------- */

berth_graph *berth_graph_load(const char *path, berth_error *err) {
    struct stat st;
    int fd = berth_open_regular(path, "graph", &st, err);
    if (fd < 0) return NULL;
    if ((uint64_t)st.st_size > BG_MAX_FILE_BYTES) {
        berth_errorf(err, "%s: graph file is %lld bytes, more than the 256 MiB allowed", path,
                     (long long)st.st_size);
        close(fd);
        return NULL;
    }
    size_t size = (size_t)st.st_size, got = 0;
    char *buf = malloc(size ? size : 1);
    if (!buf) {
        berth_errorf(err, "%s: out of memory reading %zu bytes", path, size);
        close(fd);
        return NULL;
    }
    while (got < size) {
        ssize_t n = read(fd, buf + got, size - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            if (n < 0)
                berth_errorf(err, "%s: read failed: %s", path, strerror(errno));
            else
                berth_errorf(err, "%s: file shrank while reading: expected %zu bytes, found %zu", path, size, got);
            free(buf);
            close(fd);
            return NULL;
        }
        got += (size_t)n;
    }
    close(fd);
    berth_graph *g = berth_graph_parse(path, buf, size, err);
    free(buf);
    return g;
}

void berth_graph_free(berth_graph *g) {
    if (g) berth_arena_free(g->arena);
}

/* Linear: callers look up a handful of names (inputs, outputs); the checker
 * keeps its own index for the bulk of resolution. */
int32_t berth_graph_find(const berth_graph *g, const char *name) {
    if (!g || !name) return -1;
    for (uint32_t k = 0; k < g->n_values; k++)
        if (!strcmp(g->values[k].name, name)) return (int32_t)k;
    return -1;
}

const bg_attr *berth_graph_attr(const bg_node *n, const char *key) {
    if (!n || !key) return NULL;
    for (uint32_t k = 0; k < n->n_attrs; k++)
        if (n->attrs[k].key && !strcmp(n->attrs[k].key, key)) return &n->attrs[k];
    return NULL;
}
