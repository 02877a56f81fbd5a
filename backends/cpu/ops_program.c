/* berth.elementwise, and the programs berth.conv2dEpilogue runs on its
 * result: elementwise steps run block by block, so each block of the
 * output is computed in L1 from one read of each input and written once,
 * instead of one pass over memory per step.
 *
 * At plan time every step's result gets a register (a block-sized
 * buffer) by linear scan over the steps: a register is reused once the
 * last step reading it has run, never by the step that reads it (the
 * unary kernels do not allow their input and output to alias). Inputs of
 * the output's shape are read in place; a broadcast input is expanded
 * into a buffer of its own once per block. */
#include <math.h>
#include <string.h>

#include "cpu_internal.h"

#define BLOCK CPU_PROGRAM_BLOCK
#define MAX_REGS CPU_PROGRAM_REGS

/* Where a step reads an operand: a register, an input, or a constant. */
enum { SRC_REG, SRC_IN, SRC_CONST };

/* One operand for n elements from `at`: a pointer and whether it is one
 * value for all of them. */
typedef struct view {
    const float *p;
    int scalar;
} view;

static view operand(const cpu_program *pp, const cpu_program_step *s, int r, float (*regs)[BLOCK],
                    float (*bufs)[BLOCK], size_t at) {
    view v = {NULL, 0};
    uint32_t i = s->idx[r];
    if (s->kind[r] == SRC_REG) {
        v.p = regs[i];
    } else if (s->kind[r] == SRC_CONST) {
        v.p = &pp->prog.constants[i];
        v.scalar = 1;
    } else if (pp->prog.count[i] == 1) {
        v.p = pp->in[i];
        v.scalar = 1;
    } else if (pp->bcast_slot[i] == UINT32_MAX) {
        v.p = pp->in[i] + at;
    } else {
        v.p = bufs[pp->bcast_slot[i]];
    }
    return v;
}

#define BIN(EXPR)                                                                  \
    do {                                                                           \
        if (a.scalar && b.scalar) {                                                \
            float x = a.p[0], w = b.p[0], r = (EXPR);                              \
            for (size_t j = 0; j < n; j++) y[j] = r;                               \
        } else if (a.scalar) {                                                     \
            const float x = a.p[0];                                                \
            for (size_t j = 0; j < n; j++) { float w = b.p[j]; y[j] = (EXPR); }    \
        } else if (b.scalar) {                                                     \
            const float w = b.p[0];                                                \
            for (size_t j = 0; j < n; j++) { float x = a.p[j]; y[j] = (EXPR); }    \
        } else {                                                                   \
            for (size_t j = 0; j < n; j++) { float x = a.p[j], w = b.p[j]; y[j] = (EXPR); } \
        }                                                                          \
    } while (0)

CPU_CLONES static void binary(berth_op_id op, view a, view b, float *restrict y, size_t n) {
    switch (op) {
    case BERTH_OP_ADD: BIN(x + w); break;
    case BERTH_OP_SUB: BIN(x - w); break;
    case BERTH_OP_MUL: BIN(x * w); break;
    case BERTH_OP_DIV: BIN(x / w); break;
    case BERTH_OP_MAX: BIN(cpu_fmax_nan(x, w)); break;
    case BERTH_OP_MIN: BIN(cpu_fmin_nan(x, w)); break;
    case BERTH_OP_POW: BIN(powf(x, w)); break;
    default: break;
    }
}

/* Output elements [at, at + n): each broadcast input expanded, then the
 * steps in order, the last one written to the output. */
static void run_block(const cpu_program *pp, size_t at, size_t n) {
    float regs[MAX_REGS][BLOCK], bufs[BK_EW_MAX_INPUTS][BLOCK];
    const bk_ew_program *g = &pp->prog;
    for (uint32_t k = 0; k < g->n_in; k++) {
        if (pp->bcast_slot[k] == UINT32_MAX) continue;
        float *b = bufs[pp->bcast_slot[k]];
        size_t inner = g->inner[k], count = g->count[k];
        size_t q = (at / inner) % count, r = at % inner;
        const float *x = pp->in[k];
        for (size_t j = 0; j < n; j++) {
            b[j] = x[q];
            if (++r == inner) {
                r = 0;
                if (++q == count) q = 0;
            }
        }
    }
    for (uint32_t i = 0; i < g->n_steps; i++) {
        const cpu_program_step *s = &pp->steps[i];
        /* the last step writes the output, unless the output is also
         * input 0 (a convolution's result): then a register first, so no
         * kernel writes what it reads */
        int last = i + 1 == g->n_steps;
        float *y = last && !pp->in_place ? pp->out + at : regs[s->dst];
        view a = operand(pp, s, 0, regs, bufs, at);
        if (bk_ew_arity(s->op) == 2) {
            binary(s->op, a, operand(pp, s, 1, regs, bufs, at), y, n);
            continue;
        }
        const float *x = a.p;
        if (a.scalar) { /* one value for the whole block: spread it first */
            float v = a.p[0];
            for (size_t j = 0; j < n; j++) y[j] = v;
            x = y;
        }
        if (s->op == BERTH_OP_IDENTITY) {
            if (x != y) memcpy(y, x, sizeof *y * n);
        } else if (x == y) { /* the kernels do not take aliased arrays */
            float t[BLOCK];
            memcpy(t, x, sizeof *t * n);
            cpu_unary_f32(s->unary, s->p0, s->p1, t, y, n);
        } else {
            cpu_unary_f32(s->unary, s->p0, s->p1, x, y, n);
        }
    }
    if (pp->in_place) memcpy(pp->out + at, regs[pp->steps[g->n_steps - 1].dst], sizeof(float) * n);
}

void cpu_program_range(const cpu_program *pp, size_t at, size_t n) {
    for (size_t end = at + n; at < end; at += BLOCK) run_block(pp, at, end - at < BLOCK ? end - at : BLOCK);
}

/* cpu_pool_for hands out whole blocks, so only the last one is short. */
static void block_task(void *ctx, size_t b, size_t e) {
    const cpu_program *pp = ctx;
    for (size_t k = b; k < e; k++) {
        size_t at = k * BLOCK;
        run_block(pp, at, pp->prog.numel - at < BLOCK ? pp->prog.numel - at : BLOCK);
    }
}

void cpu_program_run(cpu_pool *pool, const cpu_program *pp) {
    cpu_pool_for(pool, (pp->prog.numel + BLOCK - 1) / BLOCK, 8, block_task, (void *)pp);
}

static void prog_exec(const cpu_node *n, berth_plan *p) {
    cpu_program *pp = n->params;
    for (uint32_t k = 0; k < pp->prog.n_in; k++) pp->in[k] = cpu_ptr(p, n->in[k]);
    pp->out = cpu_ptr(p, n->out[0]);
    cpu_program_run(p->dev->pool, pp);
}

berth_status cpu_prep_elementwise_program(cpu_prep *c) {
    cpu_program *pp = cpu_params(c, sizeof *pp);
    if (!pp) return BERTH_ERR_NOMEM;
    berth_status st = bk_param_elementwise(&c->bk, &pp->prog);
    if (!st) st = cpu_program_prep(c, pp);
    if (!st) c->cn->exec = prog_exec;
    return st;
}

berth_status cpu_program_prep(cpu_prep *c, cpu_program *pp) {
    const bk_ew_program *g = &pp->prog;
    for (uint32_t k = 0; k < g->n_in; k++) {
        int in_place = g->inner[k] == 1 && g->count[k] == g->numel;
        pp->bcast_slot[k] = in_place || g->count[k] == 1 ? UINT32_MAX : pp->n_bcast++;
    }
    /* The last step reading each step's result. */
    int32_t last_use[BK_EW_MAX_STEPS];
    for (uint32_t i = 0; i < g->n_steps; i++) last_use[i] = -1;
    for (uint32_t i = 0; i < g->n_steps; i++)
        for (int r = 0; r < bk_ew_arity(g->steps[i].op); r++) {
            int32_t ref = r ? g->steps[i].b : g->steps[i].a;
            if (ref >= (int32_t)g->n_in) last_use[ref - (int32_t)g->n_in] = (int32_t)i;
        }
    int32_t held_by[MAX_REGS]; /* the step whose result a register holds, or -1 */
    for (int r = 0; r < MAX_REGS; r++) held_by[r] = -1;
    for (uint32_t i = 0; i < g->n_steps; i++) {
        const bk_ew_step *e = &g->steps[i];
        cpu_program_step *s = &pp->steps[i];
        s->op = e->op;
        s->p0 = e->p0;
        s->p1 = e->p1;
        s->unary = cpu_unary_code(berth_op_table()[e->op].name);
        for (int r = 0; r < 2; r++) {
            int32_t ref = r ? e->b : e->a;
            if (r == 1 && bk_ew_arity(e->op) == 1) break;
            if (ref < 0) s->kind[r] = SRC_CONST, s->idx[r] = (uint32_t)(-ref - 1);
            else if (ref < (int32_t)g->n_in) s->kind[r] = SRC_IN, s->idx[r] = (uint32_t)ref;
            else s->kind[r] = SRC_REG, s->idx[r] = pp->steps[ref - g->n_in].dst;
        }
        if (bk_ew_arity(e->op) == 1 && e->op != BERTH_OP_IDENTITY && s->unary < 0)
            return bk_refuse(&c->bk, "step %u: cpu has no kernel for %s", i, berth_op_table()[e->op].name);
        /* a free register: none whose step's result is still to be read */
        uint32_t reg = MAX_REGS;
        for (uint32_t r = 0; r < MAX_REGS && reg == MAX_REGS; r++)
            if (held_by[r] < 0 || last_use[held_by[r]] < (int32_t)i) reg = r;
        if (reg == MAX_REGS)
            return bk_refuse(&c->bk, "more than %d intermediate results live at once", MAX_REGS);
        held_by[reg] = (int32_t)i;
        s->dst = reg;
        if (reg + 1 > pp->n_regs) pp->n_regs = reg + 1;
    }
    return BERTH_OK;
}
