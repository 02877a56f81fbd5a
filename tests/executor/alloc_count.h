/* Counting host allocations made by this process (engine and dlopened
 * backends alike) between alloc_count_start() and alloc_count_stop(). */
#ifndef BERTH_TEST_ALLOC_COUNT_H
#define BERTH_TEST_ALLOC_COUNT_H

#include <stddef.h>

void alloc_count_start(void);
/* Returns the number of malloc, calloc, realloc, posix_memalign,
 * aligned_alloc, memalign and free calls since start. */
size_t alloc_count_stop(void);

#endif
