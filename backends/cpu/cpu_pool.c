/* A persistent pool of threads-1 workers created at open. Work is handed
 * out as a generation number under a mutex; chunks are claimed with an
 * atomic counter so uneven chunks balance. A run issues a pool job per
 * node, often well under a millisecond apart, so both sides spin briefly
 * on the atomics before sleeping on a condition variable: a sleeping
 * worker's wake-up would otherwise cost more than a small node. Nothing
 * here allocates after create, which keeps run() allocation-free. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "cpu_internal.h"

struct cpu_pool {
    int threads;
    int n_workers;
    pthread_t *workers;
    pthread_mutex_t mu;
    pthread_cond_t start, done;
    atomic_uint_fast64_t generation;
    atomic_int stop;
    atomic_int busy; /* workers still inside the current generation */
    int ready; /* workers past their start-up */
    /* the current job */
    cpu_task_fn fn;
    void *ctx;
    size_t n, chunk;
    atomic_size_t next;
};

static void pool_work(cpu_pool *p) {
    for (;;) {
        size_t b = atomic_fetch_add(&p->next, p->chunk);
        if (b >= p->n) break;
        size_t e = b + p->chunk < p->n ? b + p->chunk : p->n;
        p->fn(p->ctx, b, e);
    }
}

/* About 20-50 microseconds of polling before a thread sleeps. */
#define SPINS 4000

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void *pool_main(void *arg) {
    cpu_pool *p = arg;
    uint64_t seen = 0;
    /* OpenBLAS allocates its per-thread buffers on a thread's first call:
     * make that call now, at open, not inside some later run() */
    cpu_blas_thread_init();
    pthread_mutex_lock(&p->mu);
    p->ready++;
    pthread_cond_signal(&p->done);
    pthread_mutex_unlock(&p->mu);
    for (;;) {
        for (int i = 0; i < SPINS && atomic_load(&p->generation) == seen && !atomic_load(&p->stop); i++) relax();
        if (atomic_load(&p->generation) == seen && !atomic_load(&p->stop)) {
            pthread_mutex_lock(&p->mu);
            while (!atomic_load(&p->stop) && atomic_load(&p->generation) == seen) pthread_cond_wait(&p->start, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
        if (atomic_load(&p->stop)) break;
        seen = atomic_load(&p->generation);
        pool_work(p);
        if (atomic_fetch_sub(&p->busy, 1) == 1) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
    return NULL;
}

berth_status cpu_pool_create(int threads, cpu_pool **out, berth_error *err) {
    *out = NULL;
    cpu_pool *p = calloc(1, sizeof *p);
    if (!p) {
        cpu_errf(err, "cpu: out of memory creating the worker pool");
        return BERTH_ERR_NOMEM;
    }
    p->threads = threads;
    atomic_init(&p->next, 0);
    atomic_init(&p->generation, 0);
    atomic_init(&p->stop, 0);
    atomic_init(&p->busy, 0);
    if (pthread_mutex_init(&p->mu, NULL)) goto fail_mu;
    if (pthread_cond_init(&p->start, NULL)) goto fail_start;
    if (pthread_cond_init(&p->done, NULL)) goto fail_done;
    if (threads > 1) {
        p->workers = calloc((size_t)threads - 1, sizeof *p->workers);
        if (!p->workers) goto fail_threads;
        for (int i = 0; i < threads - 1; i++) {
            if (pthread_create(&p->workers[i], NULL, pool_main, p)) goto fail_threads;
            p->n_workers++;
        }
        pthread_mutex_lock(&p->mu);
        while (p->ready < p->n_workers) pthread_cond_wait(&p->done, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
    cpu_blas_thread_init();
    *out = p;
    return BERTH_OK;
fail_threads:
    cpu_pool_destroy(p);
    cpu_errf(err, "cpu: could not start %d worker threads", threads - 1);
    return BERTH_ERR_DEVICE;
fail_done:
    pthread_cond_destroy(&p->start);
fail_start:
    pthread_mutex_destroy(&p->mu);
fail_mu:
    free(p);
    cpu_errf(err, "cpu: could not initialise the worker pool's locks");
    return BERTH_ERR_DEVICE;
}

void cpu_pool_destroy(cpu_pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    atomic_store(&p->stop, 1);
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n_workers; i++) pthread_join(p->workers[i], NULL);
    free(p->workers);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->start);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

int cpu_pool_threads(const cpu_pool *p) { return p ? p->threads : 1; }

void cpu_pool_for(cpu_pool *p, size_t n, size_t grain, cpu_task_fn fn, void *ctx) {
    if (n == 0) return;
    if (grain == 0) grain = 1;
    if (!p || p->n_workers == 0 || n <= grain) {
        fn(ctx, 0, n);
        return;
    }
    /* About four chunks per thread, never below the grain. */
    size_t chunk = n / ((size_t)p->threads * 4);
    if (chunk < grain) chunk = grain;
    p->fn = fn;
    p->ctx = ctx;
    p->n = n;
    p->chunk = chunk;
    atomic_store(&p->next, 0);
    atomic_store(&p->busy, p->n_workers);
    pthread_mutex_lock(&p->mu); /* a worker about to sleep checks the generation under it */
    atomic_fetch_add(&p->generation, 1);
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);
    pool_work(p);
    for (int i = 0; i < SPINS && atomic_load(&p->busy) > 0; i++) relax();
    if (atomic_load(&p->busy) > 0) {
        pthread_mutex_lock(&p->mu);
        while (atomic_load(&p->busy) > 0) pthread_cond_wait(&p->done, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
}
