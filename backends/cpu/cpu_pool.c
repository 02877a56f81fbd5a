/* A persistent pool of threads-1 workers created at open. Work is handed
 * out as a generation number; chunks are claimed with a compare-and-swap
 * on one ticket so uneven chunks balance, and the caller waits only for
 * chunks a worker has claimed, never for an idle worker to wake (on a
 * busy machine a wake-up may take a whole time slice). A run issues a pool job per
 * node, often well under a millisecond apart, so while a run is in
 * progress (cpu_pool_begin .. cpu_pool_end) workers spin on the atomics
 * between jobs instead of sleeping, and the run's start wakes them: on a
 * virtual machine an idle core's wake-up costs tens to hundreds of
 * microseconds, and the recognizer at batch 1 on 2 threads, run after
 * 20 ms idle, took 11.5 to 23 ms with workers that slept between jobs
 * against 10.4 to 12.7 ms with workers that stayed awake. Outside a run
 * a worker spins briefly, then sleeps on a condition variable. Nothing
 * here allocates after create, which keeps run() allocation-free. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "cpu_internal.h"

struct cpu_pool {
    int threads;
    int n_workers;
    pthread_t *workers;
    atomic_int *slots; /* per thread: 1 while a task holds that scratch slot */
    pthread_mutex_t mu;
    pthread_cond_t start, done;
    atomic_int stop;
    atomic_int active; /* runs in progress: workers spin between jobs */
    uint64_t spin_ns;  /* outside a run, how long a worker spins before it sleeps */
    int ready;         /* workers past their start-up */
    /* The current job. `ticket` holds the job's generation (high 32 bits)
     * and the next unclaimed item (low 32): a claim is a compare-and-swap
     * on it, so a worker that wakes late for a finished job fails its
     * claim instead of touching the next job. fn and ctx are read only
     * after a successful claim, when the job cannot end under the reader;
     * n and chunk may be read before it, so they are atomics. */
    atomic_uint_fast64_t ticket;
    atomic_size_t n, chunk;
    atomic_size_t finished; /* items of the current job done */
    cpu_task_fn fn;
    void *ctx;
};

/* Polling before the caller sleeps waiting for claimed chunks. */
#define SPINS 4000

/* The spin-wait hint: it lets a sibling hardware thread run, and on arm
 * cores lowers the power a polling worker draws. */
static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ __volatile__("yield");
#endif
}

/* Claims and runs chunks of generation gen until none are left. */
static void pool_work(cpu_pool *p, uint64_t gen) {
    for (;;) {
        uint_fast64_t t = atomic_load(&p->ticket);
        if ((t >> 32) != gen || (gen & 1)) return;
        size_t b = (size_t)(t & 0xffffffffu), n = atomic_load(&p->n), chunk = atomic_load(&p->chunk);
        if (b >= n) return;
        size_t e = b + chunk < n ? b + chunk : n;
        if (!atomic_compare_exchange_weak(&p->ticket, &t, (gen << 32) | e)) continue;
        p->fn(p->ctx, b, e);
        if (atomic_fetch_add(&p->finished, e - b) + (e - b) == n) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
}

/* A job newer than `seen` is open: its generation is even. An odd one
 * marks a job being written, whose ticket no claim can match. */
static int open_job(cpu_pool *p, uint64_t seen) {
    uint64_t g = atomic_load(&p->ticket) >> 32;
    return g != seen && (g & 1) == 0;
}

/* Scratch slots: at most `threads` tasks of the pool run at once, so a
 * task that claims a free slot for its duration always finds one. (A
 * thread-local index would do, but thread-local storage in a module
 * loaded with dlopen crashes LeakSanitizer's tracer at exit.) */
int cpu_pool_slot_claim(cpu_pool *p) {
    for (;;) {
        for (int i = 0; i < p->threads; i++) {
            int free_ = 0;
            if (atomic_compare_exchange_strong(&p->slots[i], &free_, 1)) return i;
        }
        relax();
    }
}

void cpu_pool_slot_release(cpu_pool *p, int slot) { atomic_store(&p->slots[slot], 0); }

static void *pool_main(void *arg) {
    cpu_pool *p = arg;
    uint64_t seen = 0;
#if defined(__APPLE__)
    pthread_setname_np("berth-cpu"); /* as top and debuggers show it */
#else
    pthread_setname_np(pthread_self(), "berth-cpu");
#endif
    /* OpenBLAS allocates its per-thread buffers on a thread's first call:
     * make that call now, at open, not inside some later run() */
    cpu_blas_thread_init();
    pthread_mutex_lock(&p->mu);
    p->ready++;
    pthread_cond_signal(&p->done);
    pthread_mutex_unlock(&p->mu);
    for (;;) {
        uint64_t idle_since = cpu_now_ns();
        for (unsigned i = 1; !open_job(p, seen) && !atomic_load(&p->stop); i++) {
            if (i % 64 == 0 && !atomic_load(&p->active) && cpu_now_ns() - idle_since >= p->spin_ns) break;
            relax();
        }
        if (!open_job(p, seen) && !atomic_load(&p->stop)) {
            pthread_mutex_lock(&p->mu);
            while (!atomic_load(&p->stop) && !open_job(p, seen) && !atomic_load(&p->active))
                pthread_cond_wait(&p->start, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
        if (atomic_load(&p->stop)) break;
        uint64_t g = atomic_load(&p->ticket) >> 32;
        if (g & 1) continue; /* closed again already: wait for the next one */
        seen = g;
        pool_work(p, seen);
    }
    return NULL;
}

berth_status cpu_pool_create(int threads, int spin_us, cpu_pool **out, berth_error *err) {
    *out = NULL;
    cpu_pool *p = calloc(1, sizeof *p);
    if (!p) {
        bk_errf(err, "cpu: out of memory creating the worker pool");
        return BERTH_ERR_NOMEM;
    }
    p->threads = threads;
    p->spin_ns = (uint64_t)spin_us * 1000u;
    atomic_init(&p->ticket, 0);
    atomic_init(&p->n, 0);
    atomic_init(&p->chunk, 1);
    atomic_init(&p->finished, 0);
    atomic_init(&p->stop, 0);
    atomic_init(&p->active, 0);
    p->slots = calloc((size_t)threads, sizeof *p->slots);
    if (!p->slots) {
        free(p);
        bk_errf(err, "cpu: out of memory creating the worker pool");
        return BERTH_ERR_NOMEM;
    }
    for (int i = 0; i < threads; i++) atomic_init(&p->slots[i], 0);
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
    bk_errf(err, "cpu: could not start %d worker threads", threads - 1);
    return BERTH_ERR_DEVICE;
fail_done:
    pthread_cond_destroy(&p->start);
fail_start:
    pthread_mutex_destroy(&p->mu);
fail_mu:
    free(p);
    bk_errf(err, "cpu: could not initialise the worker pool's locks");
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
    free(p->slots);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->start);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

int cpu_pool_threads(const cpu_pool *p) { return p ? p->threads : 1; }

void cpu_pool_begin(cpu_pool *p) {
    if (!p || p->n_workers == 0) return;
    pthread_mutex_lock(&p->mu); /* a worker about to sleep checks `active` under it */
    atomic_fetch_add(&p->active, 1);
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);
}

void cpu_pool_end(cpu_pool *p) {
    if (p && p->n_workers > 0) atomic_fetch_sub(&p->active, 1);
}

void cpu_pool_for(cpu_pool *p, size_t n, size_t grain, cpu_task_fn fn, void *ctx) {
    if (n == 0) return;
    if (grain == 0) grain = 1;
    if (!p || p->n_workers == 0 || n <= grain || n > 0xffffffffu) {
        fn(ctx, 0, n);
        return;
    }
    /* About four chunks per thread, never below the grain. */
    size_t chunk = n / ((size_t)p->threads * 4);
    if (chunk < grain) chunk = grain;
    /* The previous job is finished: every item ran, so no worker is inside
     * its fn. The ticket first moves to an odd (closed) generation, so a
     * late worker that read the old ticket fails its claim while n and fn
     * change; then to the next even one, which opens the job. */
    uint64_t old = atomic_load(&p->ticket) >> 32, gen = (old + 2) & 0xffffffffu;
    atomic_store(&p->ticket, (((old + 1) & 0xffffffffu) << 32) | 0xffffffffu);
    p->fn = fn;
    p->ctx = ctx;
    atomic_store(&p->n, n);
    atomic_store(&p->chunk, chunk);
    atomic_store(&p->finished, 0);
    pthread_mutex_lock(&p->mu); /* a worker about to sleep checks the ticket under it */
    atomic_store(&p->ticket, (uint_fast64_t)gen << 32);
    pthread_cond_broadcast(&p->start);
    pthread_mutex_unlock(&p->mu);
    pool_work(p, gen);
    /* Only items a worker has claimed can be outstanding now: wait for
     * those, never for an idle worker to wake. */
    for (int i = 0; i < SPINS && atomic_load(&p->finished) < n; i++) relax();
    if (atomic_load(&p->finished) < n) {
        pthread_mutex_lock(&p->mu);
        while (atomic_load(&p->finished) < n) pthread_cond_wait(&p->done, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
}
