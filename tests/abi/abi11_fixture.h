/* What the ABI 1.1 fixture module (abi11_module.c) offers through
 * get_proc, shared by the module and the test that calls it. */
#ifndef BERTH_ABI11_FIXTURE_H
#define BERTH_ABI11_FIXTURE_H

#include <stddef.h>

/* get_proc("abi11_stat"): writes what the module saw into buf and returns
 * a count: "plans" (plan() calls, buf: the ops of the last plan, comma
 * separated), "fused_refused" (fused nodes supports_node refused). -1 for
 * another name. */
typedef int (*abi11_stat_fn)(const char *what, char *buf, size_t cap);
#define ABI11_STAT_PROC "abi11_stat"

/* The module appends "open\n" and "plan\n" to the file this variable
 * names, so a test sees calls made while the module was loaded even
 * after the host has unloaded it. */
#define ABI11_LOG_ENV "BERTH_ABI11_LOG"

#endif
