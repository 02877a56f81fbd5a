/* berth check --models: the real-model zoo on one module (cli_zoo.c). */
#ifndef BERTH_CLI_ZOO_H
#define BERTH_CLI_ZOO_H

#include <stddef.h>
#include <stdio.h>

enum { ZOO_PASSED, ZOO_FAILED, ZOO_UNSUPPORTED, ZOO_REFUSED, ZOO_RESULTS };

/* Runs every model of DIR/manifest.ini on `module` (a name or path as
 * `use` takes it), prints the table (and writes it to md when not NULL)
 * and adds each model's result to counts. Returns the number of models
 * that failed (with `strict`, those the module refused too), or -1 when
 * the manifest cannot be read. begin (may be NULL) is told each model's
 * name before it runs. */
int berth_cli_zoo(const char *module, const char *dir, int strict, int quiet, FILE *md, size_t counts[ZOO_RESULTS],
                  void (*begin)(void *ctx, const char *model), void *ctx);

#endif
