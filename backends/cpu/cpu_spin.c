/* The machine facts that size the worker pool (cpu_spin.h). Polling
 * between runs buys latency with energy: on a server the next run starts
 * on awake workers; on a battery the polling is paid from what the
 * device holds. */
#include "cpu_spin.h"

#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int cpu_spin_default_us(int battery) { return battery ? 1000 : 20000; }

int cpu_has_battery(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return 0;
    int found = 0;
    struct dirent *e;
    while (!found && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[512], type[32] = "";
        snprintf(path, sizeof path, "%s/%s/type", dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fgets(type, sizeof type, f)) type[strcspn(type, "\n")] = 0;
        fclose(f);
        found = strcmp(type, "Battery") == 0;
    }
    closedir(d);
    return found;
}

int cpu_usable_cpus(void) {
#if defined(__linux__)
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n;
    }
#endif
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (int)online : 1;
}
