/* insn_loop N THREADS: the arm64 program bench/check_qemu_insn.sh counts
 * with the qemu_insn plugin. Each of THREADS threads (the main thread and
 * THREADS - 1 more, all running at once) executes a loop of N iterations
 * of exactly 4 instructions (nop, nop, subs, b.ne), so doubling N adds
 * 4 * N * THREADS executed instructions and nothing else changes. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_THREADS 16

static uint64_t iterations;

static void *spin(void *arg) {
    uint64_t n = iterations;
#if defined(__aarch64__)
    __asm__ volatile("cbz %0, 2f\n"
                     "1:\n\t"
                     "nop\n\t"
                     "nop\n\t"
                     "subs %0, %0, #1\n\t"
                     "b.ne 1b\n"
                     "2:\n"
                     : "+r"(n)
                     :
                     : "cc");
#else
#error "insn_loop counts arm64 instructions: build it for aarch64"
#endif
    return arg;
}

int main(int argc, char **argv) {
    char *end1 = NULL, *end2 = NULL;
    if (argc == 3) {
        iterations = strtoull(argv[1], &end1, 10);
        long threads = strtol(argv[2], &end2, 10);
        if (*argv[1] && !*end1 && *argv[2] && !*end2 && threads >= 1 && threads <= MAX_THREADS) {
            pthread_t th[MAX_THREADS];
            for (long i = 1; i < threads; i++) {
                if (pthread_create(&th[i], NULL, spin, NULL) != 0) {
                    fprintf(stderr, "insn_loop: cannot start thread %ld\n", i);
                    return 1;
                }
            }
            spin(NULL);
            for (long i = 1; i < threads; i++) pthread_join(th[i], NULL);
            return 0;
        }
    }
    fprintf(stderr, "usage: insn_loop N THREADS (1..%d)\n", MAX_THREADS);
    return 2;
}
