/* Forced into every source of test_config_oom (-include): the engine's
 * allocations go through wrappers that can be told to fail. */
#ifndef BERTH_TEST_OOM_REDIRECT_H
#define BERTH_TEST_OOM_REDIRECT_H

#include <stddef.h>

void *oom_malloc(size_t n);
void *oom_calloc(size_t n, size_t size);
void *oom_realloc(void *p, size_t n);
char *oom_strdup(const char *s);

#define malloc oom_malloc
#define calloc oom_calloc
#define realloc oom_realloc
#define strdup oom_strdup

#endif
