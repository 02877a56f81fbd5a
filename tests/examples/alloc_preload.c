/* Loaded with LD_PRELOAD into a program run as a user runs it: counts
 * every allocator call of the process (the program, libberth and the
 * dlopened backend alike) and writes the count to the file named by
 * BERTH_ALLOC_COUNT at exit. Two runs that differ only in how many
 * chunks they process must give the same count, or a chunk allocates.
 * Not for sanitizer builds, whose runtime owns these symbols. */
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static atomic_size_t count;

void *malloc(size_t n) {
    count++;
    return __libc_malloc(n);
}
void *calloc(size_t a, size_t b) {
    count++;
    return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n) {
    count++;
    return __libc_realloc(p, n);
}
void free(void *p) {
    if (p) count++;
    __libc_free(p);
}
void *memalign(size_t a, size_t n) {
    count++;
    return __libc_memalign(a, n);
}
void *aligned_alloc(size_t a, size_t n) {
    count++;
    return __libc_memalign(a, n);
}
int posix_memalign(void **out, size_t a, size_t n) {
    count++;
    if (a < sizeof(void *) || (a & (a - 1))) return 22; /* EINVAL */
    void *p = __libc_memalign(a, n);
    if (!p) return 12; /* ENOMEM */
    *out = p;
    return 0;
}

__attribute__((destructor)) static void report(void) {
    size_t n = count; /* before fopen's own allocation is counted */
    const char *path = getenv("BERTH_ALLOC_COUNT");
    FILE *f = path ? fopen(path, "w") : NULL;
    if (f) {
        fprintf(f, "%zu\n", n);
        fclose(f);
    }
}
