/* Naming the processor (cpu_name.h). arm64 Linux lists, per core, the
 * implementer and part numbers the Main ID register holds; the names
 * below are the ones Arm and the licensees publish for them. */
#include "cpu_name.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    unsigned implementer, part;
    const char *name;
} parts[] = {
    {0x41, 0xd03, "Cortex-A53"},  {0x41, 0xd04, "Cortex-A35"},  {0x41, 0xd05, "Cortex-A55"},
    {0x41, 0xd07, "Cortex-A57"},  {0x41, 0xd08, "Cortex-A72"},  {0x41, 0xd09, "Cortex-A73"},
    {0x41, 0xd0a, "Cortex-A75"},  {0x41, 0xd0b, "Cortex-A76"},  {0x41, 0xd0c, "Neoverse-N1"},
    {0x41, 0xd0d, "Cortex-A77"},  {0x41, 0xd40, "Neoverse-V1"}, {0x41, 0xd41, "Cortex-A78"},
    {0x41, 0xd44, "Cortex-X1"},   {0x41, 0xd46, "Cortex-A510"}, {0x41, 0xd47, "Cortex-A710"},
    {0x41, 0xd48, "Cortex-X2"},   {0x41, 0xd49, "Neoverse-N2"}, {0x41, 0xd4d, "Cortex-A715"},
    {0x41, 0xd4e, "Cortex-X3"},   {0x41, 0xd4f, "Neoverse-V2"}, {0x41, 0xd80, "Cortex-A520"},
    {0x41, 0xd81, "Cortex-A720"}, {0x41, 0xd82, "Cortex-X4"},   {0x48, 0xd01, "Kunpeng-920"},
    {0x51, 0x804, "Kryo-4xx Gold"}, {0x51, 0x805, "Kryo-4xx Silver"}, {0xc0, 0xac3, "Ampere-1"},
};

/* The value after "KEY<spaces>:" on a line that starts with KEY, or NULL. */
static const char *field(const char *line, const char *key) {
    size_t n = strlen(key);
    if (strncmp(line, key, n) != 0) return NULL;
    line += n;
    while (*line == ' ' || *line == '\t') line++;
    if (*line != ':') return NULL;
    line++;
    while (*line == ' ' || *line == '\t') line++;
    return line;
}

#define MAX_KINDS 8

void cpu_name_from(const char *cpuinfo, const char *dt_model, char *buf, size_t cap) {
    snprintf(buf, cap, "unknown");
    struct {
        unsigned implementer, part, count;
    } kinds[MAX_KINDS];
    int n_kinds = 0;
    unsigned implementer = 0;
    int have_impl = 0;
    for (const char *line = cpuinfo ? cpuinfo : ""; *line;) {
        size_t len = strcspn(line, "\n");
        const char *v;
        if ((v = field(line, "model name")) != NULL) {
            const char *end = line + len;
            while (end > v && (end[-1] == '\r' || end[-1] == ' ')) end--;
            if (end > v) {
                snprintf(buf, cap, "%.*s", (int)(end - v), v);
                return;
            }
        }
        if ((v = field(line, "CPU implementer")) != NULL) {
            implementer = (unsigned)strtoul(v, NULL, 0);
            have_impl = 1;
        } else if ((v = field(line, "CPU part")) != NULL && have_impl) {
            unsigned part = (unsigned)strtoul(v, NULL, 0);
            int k = 0;
            while (k < n_kinds && (kinds[k].implementer != implementer || kinds[k].part != part)) k++;
            if (k == n_kinds && n_kinds < MAX_KINDS) kinds[n_kinds++].count = 0;
            if (k < n_kinds) {
                kinds[k].implementer = implementer;
                kinds[k].part = part;
                kinds[k].count++;
            }
        }
        line += len + (line[len] == '\n');
    }
    char cores[256] = "";
    size_t at = 0;
    /* Linux lists the little cores first; the big ones are named first. */
    for (int k = n_kinds; k-- > 0 && at < sizeof cores;) {
        const char *name = NULL;
        for (size_t p = 0; p < sizeof parts / sizeof parts[0]; p++)
            if (parts[p].implementer == kinds[k].implementer && parts[p].part == kinds[k].part) name = parts[p].name;
        int w = name ? snprintf(cores + at, sizeof cores - at, "%s%ux %s", at ? " + " : "", kinds[k].count, name)
                     : snprintf(cores + at, sizeof cores - at, "%s%ux implementer 0x%x part 0x%x", at ? " + " : "",
                                kinds[k].count, kinds[k].implementer, kinds[k].part);
        if (w > 0) at += (size_t)w;
    }
    int have_model = dt_model && dt_model[0];
    if (have_model && cores[0])
        snprintf(buf, cap, "%s (%s)", dt_model, cores);
    else if (have_model)
        snprintf(buf, cap, "%s", dt_model);
    else if (cores[0])
        snprintf(buf, cap, "%s", cores);
}
