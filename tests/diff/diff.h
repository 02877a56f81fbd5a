/* The differential check behind fuzz_graph_diff: a graph made from the
 * bytes (graph_gen.h) is parsed and specialized by the engine, then run
 * on the cpu backend module (loaded through the engine's loader) as it
 * is, and again fused the way the engine fuses for that backend, and
 * each run is compared with the reference interpreter
 * (tests/specialize/ref_eval.c) on the unfused graph.
 *
 * The tolerance follows each element's condition: next to every value
 * the check carries a bound on the magnitude of the terms that made it
 * (|a| + |b| for a sum, the matmul of magnitudes for a product, the
 * derivative's bound times the input's for a unary op, ...), and a result
 * may differ from the reference by DIFF_RTOL times that plus DIFF_ATOL.
 * Elements whose bound is infinite, NaN or beyond 1e30 are not compared:
 * a divisor or the argument of a square root or logarithm that rounding
 * could move across zero, an overflow, or a NaN among the element's
 * inputs (whether max(x, NaN) is x or NaN is a convention, not a bug).
 * Everywhere else a NaN or an infinity where the reference has a number
 * is a difference.
 *
 * Any difference, a graph the engine or the backend refuses, outputs
 * that change from one run to the next, or inputs that a run modified
 * print the graph and its inputs and abort(). The module is the one
 * BERTH_CPU_MODULE names: the environment variable, else the build's.
 * BERTH_DIFF_SHOW=1 in the environment prints each graph as it is made. */
#ifndef BERTH_TEST_DIFF_H
#define BERTH_TEST_DIFF_H

#include <stddef.h>
#include <stdint.h>

#define DIFF_RTOL 1e-4
#define DIFF_ATOL 1e-6

typedef struct diff_stats {
    uint64_t graphs, nodes, fused_runs, compared, skipped;
} diff_stats;

/* Checks the graph the bytes make; returns only when cpu and reference agree. */
void diff_check(const uint8_t *data, size_t size);
const diff_stats *diff_totals(void);

#endif
