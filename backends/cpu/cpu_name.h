/* The device name the cpu backend reports, from what Linux says of the
 * processor. Apart from the backend so a test can feed it the texts of
 * machines it does not run on. */
#ifndef BERTH_CPU_NAME_H
#define BERTH_CPU_NAME_H

#include <stddef.h>

/* Names the processor from the text of /proc/cpuinfo and, where the
 * machine has a device tree, its model (NULL or "" otherwise):
 *   x86: the first "model name" ("AMD EPYC 7B13");
 *   arm64, which has no model name: the cores from "CPU implementer" and
 *   "CPU part", counted per kind, big cores first as listed
 *   ("2x Cortex-A76 + 6x Cortex-A55"; an unknown part as
 *   "implementer 0x41 part 0xd99"), after the device tree's model when
 *   there is one ("Raspberry Pi 4 Model B Rev 1.4 (4x Cortex-A72)");
 *   otherwise "unknown". Always NUL-terminates buf (cap >= 1). */
void cpu_name_from(const char *cpuinfo, const char *dt_model, char *buf, size_t cap);

#endif
