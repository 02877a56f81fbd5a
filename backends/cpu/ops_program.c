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

/* The binary steps' element functions, for the block path and chains. */
#define ADD(a, b) ((a) + (b))
#define SUB(a, b) ((a) - (b))
#define MUL(a, b) ((a) * (b))
#define DIV(a, b) ((a) / (b))

CPU_CLONES static void binary(berth_op_id op, view a, view b, float *restrict y, size_t n) {
    switch (op) {
    case BERTH_OP_ADD: BIN(ADD(x, w)); break;
    case BERTH_OP_SUB: BIN(SUB(x, w)); break;
    case BERTH_OP_MUL: BIN(MUL(x, w)); break;
    case BERTH_OP_DIV: BIN(DIV(x, w)); break;
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

/* A chain (see cpu_program.chain) over n elements of src into y (which
 * may be src): each step one pass, the first from src, the rest in place,
 * with no registers, copies or per-block calls, which cost more than the
 * work on the short runs a convolution's epilogue hands over (a
 * channel's pixels of a few tiles). The element functions are the unary
 * kernels' and binary's. y[l] = f(src[l]) vectorizes with src == y. */
#define LANES(EXPR)                                                         \
    do {                                                                    \
        for (size_t l = 0; l < n; l++) { float v = src[l]; y[l] = (EXPR); } \
    } while (0)
/* A binary step's operands, in order: the chain's value v and the
 * scalar k on the sides the step has them. */
#define BIN2(F)                                    \
    do {                                           \
        if (side == CHAIN_BOTH) LANES(F(v, v));    \
        else if (side == CHAIN_LEFT) LANES(F(v, k)); \
        else LANES(F(k, v));                       \
    } while (0)
enum { CHAIN_LEFT, CHAIN_RIGHT, CHAIN_BOTH };

/* The reference step i reads the chain's value through: the input for
 * the first step, the step before for the others. */
static int32_t chain_ref(const cpu_program *pp, uint32_t i) {
    return i ? (int32_t)(pp->prog.n_in + i - 1) : (int32_t)pp->chain_in;
}

CPU_CLONES void cpu_chain_apply(const cpu_program *pp, const float *src, float *y, size_t n) {
    const bk_ew_program *g = &pp->prog;
    for (uint32_t i = 0; i < g->n_steps; i++, src = y) {
        const cpu_program_step *s = &pp->steps[i];
        const bk_ew_step *e = &g->steps[i];
        const float al = s->p0, be = s->p1;
        if (bk_ew_arity(e->op) == 2) {
            int32_t chain = chain_ref(pp, i);
            int side = e->a == chain && e->b == chain ? CHAIN_BOTH : e->a == chain ? CHAIN_LEFT : CHAIN_RIGHT;
            /* the scalar: operand b when the chain is a, else a */
            const float k = side == CHAIN_BOTH ? 0.0f : operand(pp, s, side == CHAIN_LEFT, NULL, NULL, 0).p[0];
            switch (e->op) {
            case BERTH_OP_ADD: BIN2(ADD); break;
            case BERTH_OP_SUB: BIN2(SUB); break;
            case BERTH_OP_MUL: BIN2(MUL); break;
            case BERTH_OP_DIV: BIN2(DIV); break;
            case BERTH_OP_MAX: BIN2(cpu_fmax_nan); break;
            case BERTH_OP_MIN: BIN2(cpu_fmin_nan); break;
            default: break;
            }
            continue;
        }
        switch (e->op == BERTH_OP_IDENTITY ? -1 : s->unary) {
        case -1: LANES(v); break;
        case U_RELU: LANES(cpu_relu1(v)); break;
        case U_LEAKYRELU: LANES(cpu_leaky1(v, al)); break;
        case U_CLAMP: LANES(cpu_clamp1(v, al, be)); break;
        case U_HARDSIGMOID: LANES(cpu_hardsigmoid1(v, al, be)); break;
        case U_HARDSWISH: LANES(cpu_hardswish1(v)); break;
        case U_NEG: LANES(-v); break;
        case U_ABS: LANES(fabsf(v)); break;
        default: break;
        }
    }
}

/* Whether step i can be a link of a chain: an op cpu_chain_apply has, the
 * chain's value as an operand, and a scalar or that value again as the
 * other. */
static int chain_link(const cpu_program *pp, uint32_t i) {
    const bk_ew_program *g = &pp->prog;
    const bk_ew_step *e = &g->steps[i];
    int32_t chain = chain_ref(pp, i);
    int arity = bk_ew_arity(e->op);
    if (arity == 1) {
        int u = pp->steps[i].unary;
        return e->a == chain && (e->op == BERTH_OP_IDENTITY || u == U_RELU || u == U_LEAKYRELU || u == U_CLAMP ||
                                 u == U_HARDSIGMOID || u == U_HARDSWISH || u == U_NEG || u == U_ABS);
    }
    if (e->op != BERTH_OP_ADD && e->op != BERTH_OP_SUB && e->op != BERTH_OP_MUL && e->op != BERTH_OP_DIV &&
        e->op != BERTH_OP_MAX && e->op != BERTH_OP_MIN)
        return 0;
    for (int r = 0; r < 2; r++) {
        int32_t ref = r ? e->b : e->a, other = r ? e->a : e->b;
        int scalar = other < 0 || (other < (int32_t)g->n_in && g->count[other] == 1);
        if (ref == chain && (scalar || other == chain)) return 1;
    }
    return 0;
}

static void chain_find(cpu_program *pp) {
    const bk_ew_program *g = &pp->prog;
    int32_t a = g->steps[0].a;
    pp->chain = 0;
    if (!g->n_steps || pp->n_bcast || a < 0 || a >= (int32_t)g->n_in || g->count[a] != g->numel) return;
    pp->chain_in = (uint32_t)a;
    if (bk_ew_arity(g->steps[0].op) == 2 && !chain_link(pp, 0)) { /* the input may be operand b */
        int32_t b = g->steps[0].b;
        if (b < 0 || b >= (int32_t)g->n_in || g->count[b] != g->numel) return;
        pp->chain_in = (uint32_t)b;
    }
    for (uint32_t i = 0; i < g->n_steps; i++)
        if (!chain_link(pp, i)) return;
    pp->chain = 1;
}

void cpu_program_range(const cpu_program *pp, size_t at, size_t n) {
    if (pp->chain) {
        cpu_chain_apply(pp, pp->in[pp->chain_in] + at, pp->out + at, n);
        return;
    }
    for (size_t end = at + n; at < end; at += BLOCK) run_block(pp, at, end - at < BLOCK ? end - at : BLOCK);
}

/* cpu_pool_for hands out whole blocks, so only the last one is short. */
static void block_task(void *ctx, size_t b, size_t e) {
    const cpu_program *pp = ctx;
    size_t at = b * BLOCK, end = e * BLOCK < pp->prog.numel ? e * BLOCK : pp->prog.numel;
    cpu_program_range(pp, at, end - at);
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
    chain_find(pp);
    return BERTH_OK;
}
