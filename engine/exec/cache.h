/* [cache] dir: backends' saved state between processes (cache.c), and
 * the prepare step it stands in for (prepare.c). */
#ifndef BERTH_EXEC_CACHE_H
#define BERTH_EXEC_CACHE_H

#include <stdint.h>

#include "executor_internal.h"

/* The key of backend k's state of `kind`: for programs, of lane ln's
 * bucket; for weights (ln NULL), of the whole executor. */
uint64_t berth_cache_key(const berth_executor *ex, uint32_t k, uint32_t kind, const lane *ln, uint32_t bucket);
/* 1 when backend k took the state saved under key; 0 when there is no
 * cache, no file, or the file was stale, corrupt or refused (logged). */
int berth_cache_load(berth_executor *ex, uint32_t k, uint32_t kind, uint64_t key);
/* Backend k's state of `kind` written under key; a failure is logged. */
void berth_cache_save(berth_executor *ex, uint32_t k, uint32_t kind, uint64_t key);

/* After the upload: every backend with prepare_weights is handed each
 * lane's first bucket as it will be planned (taking its prepared weights
 * from the cache instead where it can, and keeping them there after). */
berth_status berth_prepare_weights(berth_executor *ex, berth_error *err);
/* Before slot s of (ln, b) is planned, each of its backends takes the
 * programs a cache keeps for it; after, what it built is kept. */
void berth_cache_programs_in(berth_executor *ex, const lane *ln, uint32_t b, plan_slot *s);
void berth_cache_programs_out(berth_executor *ex, const lane *ln, uint32_t b, const plan_slot *s);

#endif
