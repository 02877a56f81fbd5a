/* The largest single allocation the process asks for between
 * largest_alloc_start() and largest_alloc_stop(), libraries included
 * (libpng, libjpeg, zlib): a test of "refused before allocating" asserts
 * it stays far below what accepting the input would have taken.
 *
 * Include from exactly one source of a test program. Plain builds define
 * malloc, calloc and realloc here, forwarding to glibc's __libc_*
 * functions (the executable's definitions win for the whole process);
 * under AddressSanitizer, which owns those symbols, its malloc hook is
 * installed instead. */
#ifndef BERTH_TEST_LARGEST_ALLOC_H
#define BERTH_TEST_LARGEST_ALLOC_H

#include <stdatomic.h>
#include <stddef.h>

static atomic_int largest_alloc_on;
static atomic_size_t largest_alloc_seen;

static inline void largest_alloc_note(size_t n) {
    if (!atomic_load_explicit(&largest_alloc_on, memory_order_relaxed)) return;
    size_t was = atomic_load_explicit(&largest_alloc_seen, memory_order_relaxed);
    while (n > was && !atomic_compare_exchange_weak(&largest_alloc_seen, &was, n)) {
    }
}

#if defined(__SANITIZE_ADDRESS__)
#define LARGEST_ALLOC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LARGEST_ALLOC_ASAN 1
#endif
#endif

#ifdef LARGEST_ALLOC_ASAN
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                              void (*free_hook)(const volatile void *));
static void largest_alloc_on_malloc(const volatile void *p, size_t n) {
    (void)p;
    largest_alloc_note(n);
}
static void largest_alloc_on_free(const volatile void *p) { (void)p; }
static inline void largest_alloc_install(void) {
    static int installed;
    if (!installed)
        installed = __sanitizer_install_malloc_and_free_hooks(largest_alloc_on_malloc,
                                                              largest_alloc_on_free);
}
#else
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

void *malloc(size_t n) {
    largest_alloc_note(n);
    return __libc_malloc(n);
}
void *calloc(size_t a, size_t b) {
    size_t n;
    largest_alloc_note(__builtin_mul_overflow(a, b, &n) ? (size_t)-1 : n);
    return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n) {
    largest_alloc_note(n);
    return __libc_realloc(p, n);
}
static inline void largest_alloc_install(void) {}
#endif

static inline void largest_alloc_start(void) {
    largest_alloc_install();
    atomic_store(&largest_alloc_seen, 0);
    atomic_store(&largest_alloc_on, 1);
}

/* Bytes of the largest request since start. */
static inline size_t largest_alloc_stop(void) {
    atomic_store(&largest_alloc_on, 0);
    return atomic_load(&largest_alloc_seen);
}

#endif
