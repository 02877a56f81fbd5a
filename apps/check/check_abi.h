/* The ABI contract a backend module must keep, checked through the ABI
 * alone (`berth check`): negotiation and table sizes, the verbs' rules
 * on who owns which memory (a given buffer is freed once, by the module
 * that took it, also when an upload is abandoned half-way), refusals
 * that carry a message, and a device that opens, answers caps within the
 * size it is given and closes. The op cases (op_cases.h) check the rest:
 * outputs all written, finite where expected, the same on every run. */
#ifndef BERTH_CHECK_ABI_H
#define BERTH_CHECK_ABI_H

#include <stddef.h>

#include "harness.h"

/* One finding: ok or not, the contract item's name, and what was found. */
typedef void (*ck_item_fn)(void *ctx, int ok, const char *item, const char *message);

/* A check about to run (negotiation, open, caps and refusals, the two
 * upload checks, unload), told before the module is called. */
typedef void (*ck_begin_fn)(void *ctx, const char *check);

/* Runs every contract check on the module at `path` with the options of
 * `host` (its own loads; nothing stays loaded); begin (may be NULL) is
 * told each check before it runs. Returns how many failed. */
size_t ck_contract(const char *path, mh_host *host, ck_begin_fn begin, ck_item_fn fn, void *ctx);

#endif
