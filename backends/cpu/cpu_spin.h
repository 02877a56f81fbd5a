/* The machine facts that size the cpu backend's worker pool: the cpus
 * the process may use (the thread count's default and its ceiling) and
 * whether it runs on a battery (how long idle workers poll for work
 * before they sleep, when the `spin_us` option leaves it to the
 * machine). Apart from the backend so a test can feed it machines it
 * does not run on. */
#ifndef BERTH_CPU_SPIN_H
#define BERTH_CPU_SPIN_H

/* Microseconds an idle worker polls after a run: 1000 where the machine
 * has a battery (polling draws the power it holds, and on a phone or a
 * watch the next run seldom comes within a millisecond unless runs go
 * back to back), 20000 otherwise (the next run starts without waking
 * anyone). */
int cpu_spin_default_us(int battery);

/* 1 when a power supply under `dir` (Linux: /sys/class/power_supply)
 * says its type is "Battery", else 0 (also when dir cannot be read). */
int cpu_has_battery(const char *dir);

/* The cpus this process may run on (its affinity mask, which taskset
 * and cgroup cpusets narrow), or the online count where that cannot be
 * read; at least 1. */
int cpu_usable_cpus(void);

#endif
