/* Two ways to see every allocation:
 *  - plain builds define the allocator entry points here, forwarding to
 *    glibc's __libc_* functions; the executable's definitions win over
 *    libc's for the whole process, dlopened modules included;
 *  - under AddressSanitizer, which owns those symbols, the sanitizer's
 *    own malloc/free hooks are installed instead. */
#include "alloc_count.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

static atomic_int counting;
static atomic_size_t count;

static inline void note(void) {
    if (atomic_load_explicit(&counting, memory_order_relaxed))
        atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
}

#if defined(__SANITIZE_ADDRESS__)
#define BERTH_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define BERTH_ASAN 1
#endif
#endif

#ifdef BERTH_ASAN
/* Declared here rather than from <sanitizer/allocator_interface.h>,
 * which gcc does not install; both gcc's and clang's runtimes export it. */
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                              void (*free_hook)(const volatile void *));

static void on_malloc(const volatile void *p, size_t n) {
    (void)p;
    (void)n;
    note();
}
static void on_free(const volatile void *p) {
    if (p) note();
}

void alloc_count_start(void) {
    static int installed;
    if (!installed) installed = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
    atomic_store(&count, 0);
    atomic_store(&counting, 1);
}
#else
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

void *malloc(size_t n) {
    note();
    return __libc_malloc(n);
}
void *calloc(size_t a, size_t b) {
    note();
    return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n) {
    note();
    return __libc_realloc(p, n);
}
void free(void *p) {
    if (p) note();
    __libc_free(p);
}
void *memalign(size_t a, size_t n) {
    note();
    return __libc_memalign(a, n);
}
void *aligned_alloc(size_t a, size_t n) {
    note();
    return __libc_memalign(a, n);
}
int posix_memalign(void **out, size_t a, size_t n) {
    note();
    if (a < sizeof(void *) || (a & (a - 1))) return 22; /* EINVAL */
    void *p = __libc_memalign(a, n);
    if (!p) return 12; /* ENOMEM */
    *out = p;
    return 0;
}

void alloc_count_start(void) {
    atomic_store(&count, 0);
    atomic_store(&counting, 1);
}
#endif

size_t alloc_count_stop(void) {
    atomic_store(&counting, 0);
    return atomic_load(&count);
}
