/* A bump allocator for data that lives and dies together (a parsed graph,
 * a specialized graph): one free releases everything, so parsers need no
 * per-field cleanup on their error paths. */
#ifndef BERTH_ARENA_H
#define BERTH_ARENA_H

#include <stddef.h>

typedef struct berth_arena berth_arena;

berth_arena *berth_arena_new(void);
void berth_arena_free(berth_arena *a);
/* Zeroed, 16-byte aligned; NULL on exhaustion or size overflow. */
void *berth_arena_alloc(berth_arena *a, size_t bytes);
void *berth_arena_array(berth_arena *a, size_t count, size_t size);
char *berth_arena_strdup(berth_arena *a, const char *s);
char *berth_arena_strndup(berth_arena *a, const char *s, size_t n);
/* Forgets every allocation but keeps the memory, for an arena reused by
 * a repeated job: chunks past the first are merged into one chunk of
 * their total size (one allocation, here), so a job that fits what the
 * arena held before allocates nothing afterwards. */
void berth_arena_reset(berth_arena *a);
/* Total bytes reserved from the system, for memory reports. */
size_t berth_arena_bytes(const berth_arena *a);

#endif
