/* The cpu backend's device name from the texts Linux gives on machines
 * these tests do not run on: an x86 server, an arm64 phone's big.LITTLE
 * cores, a board with a device tree, a part berth has no name for. */
#include <stdio.h>
#include <string.h>

#include "cpu_name.h"

static int failed;

static void expect(const char *what, const char *cpuinfo, const char *model, const char *want) {
    char got[200];
    cpu_name_from(cpuinfo, model, got, sizeof got);
    if (strcmp(got, want) != 0) {
        printf("FAIL: %s: got '%s', want '%s'\n", what, got, want);
        failed = 1;
    } else {
        printf("ok: %s: %s\n", what, got);
    }
}

/* /proc/cpuinfo of an arm64 phone: processor blocks, no model name. */
static const char phone[] =
    "processor\t: 0\nBogoMIPS\t: 38.40\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics asimddp\n"
    "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd05\nCPU revision\t: 0\n\n"
    "processor\t: 1\nCPU implementer\t: 0x41\nCPU part\t: 0xd05\n\n"
    "processor\t: 2\nCPU implementer\t: 0x41\nCPU part\t: 0xd05\n\n"
    "processor\t: 3\nCPU implementer\t: 0x41\nCPU part\t: 0xd05\n\n"
    "processor\t: 4\nCPU implementer\t: 0x41\nCPU part\t: 0xd0b\n\n"
    "processor\t: 5\nCPU implementer\t: 0x41\nCPU part\t: 0xd0b\n\n";

int main(void) {
    expect("x86", "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13 64-Core Processor\r\n"
           "processor\t: 1\nmodel name\t: AMD EPYC 7B13 64-Core Processor\n", NULL,
           "AMD EPYC 7B13 64-Core Processor");
    expect("arm64 phone", phone, NULL, "2x Cortex-A76 + 4x Cortex-A55");
    expect("arm64 board with a device tree",
           "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd08\n\nprocessor\t: 1\nCPU implementer\t: 0x41\n"
           "CPU part\t: 0xd08\n", "Raspberry Pi 4 Model B Rev 1.4", "Raspberry Pi 4 Model B Rev 1.4 (2x Cortex-A72)");
    expect("an unknown part", "processor\t: 0\nCPU implementer\t: 0x61\nCPU part\t: 0x22\n", NULL,
           "1x implementer 0x61 part 0x22");
    expect("only a device tree", "processor\t: 0\n", "Some Watch", "Some Watch");
    expect("nothing", NULL, NULL, "unknown");
    expect("an empty model name", "model name\t: \n", NULL, "unknown");
    char tiny[8];
    cpu_name_from(phone, NULL, tiny, sizeof tiny);
    if (strlen(tiny) != 7) {
        printf("FAIL: a small buffer is filled and terminated: '%s'\n", tiny);
        failed = 1;
    }
    return failed;
}
