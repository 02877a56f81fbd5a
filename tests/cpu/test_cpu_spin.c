/* The machine facts that size the cpu backend's pool: a battery found
 * among power supplies laid out as Linux's /sys/class/power_supply (a
 * phone's, a server's mains only, none), the spin budget each gives, and
 * the cpus this process may use, which taskset narrows. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cpu_spin.h"

static int failed;

#define EXPECT(cond, ...)                     \
    do {                                      \
        if (!(cond)) {                        \
            printf("FAIL: " __VA_ARGS__);     \
            printf("\n");                     \
            failed = 1;                       \
        }                                     \
    } while (0)

/* A power supply `name` of `type` under dir. */
static void supply(const char *dir, const char *name, const char *type) {
    char path[600];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/type", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        printf("FAIL: cannot write %s\n", path);
        exit(1);
    }
    fprintf(f, "%s\n", type);
    fclose(f);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_cpu_spin WORKDIR\n");
        return 2;
    }
    char phone[512], server[512], empty[512], missing[512];
    snprintf(phone, sizeof phone, "%s/phone", argv[1]);
    snprintf(server, sizeof server, "%s/server", argv[1]);
    snprintf(empty, sizeof empty, "%s/empty", argv[1]);
    snprintf(missing, sizeof missing, "%s/missing", argv[1]);
    mkdir(argv[1], 0755);
    mkdir(phone, 0755);
    mkdir(server, 0755);
    mkdir(empty, 0755);
    supply(phone, "usb", "USB");
    supply(phone, "battery", "Battery");
    supply(server, "AC", "Mains");

    EXPECT(cpu_has_battery(phone) == 1, "a phone's supplies: a battery");
    EXPECT(cpu_has_battery(server) == 0, "mains only: no battery");
    EXPECT(cpu_has_battery(empty) == 0, "no supplies: no battery");
    EXPECT(cpu_has_battery(missing) == 0, "no power_supply folder: no battery");
    EXPECT(cpu_spin_default_us(1) == 1000, "on a battery workers poll 1 ms, found %d us", cpu_spin_default_us(1));
    EXPECT(cpu_spin_default_us(0) == 20000, "on mains workers poll 20 ms, found %d us", cpu_spin_default_us(0));

    cpu_set_t set;
    EXPECT(sched_getaffinity(0, sizeof set, &set) == 0, "sched_getaffinity");
    int allowed = CPU_COUNT(&set);
    EXPECT(cpu_usable_cpus() == allowed, "usable cpus %d, the affinity mask has %d", cpu_usable_cpus(), allowed);
    /* narrowed to its first cpu, as taskset -c would */
    int first = 0;
    while (first < CPU_SETSIZE && !CPU_ISSET(first, &set)) first++;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    EXPECT(sched_setaffinity(0, sizeof one, &one) == 0, "sched_setaffinity to cpu %d", first);
    EXPECT(cpu_usable_cpus() == 1, "pinned to one cpu, found %d usable", cpu_usable_cpus());
    sched_setaffinity(0, sizeof set, &set);
    printf("%s\n", failed ? "FAILED" : "ok: battery, spin budgets and usable cpus");
    return failed;
}
