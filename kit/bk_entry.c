/* The exported entry's negotiation (see BK_BACKEND in bk.h), caps and
 * plan_memory, which write only what fits the host's struct. */
#include "bk.h"

const berth_backend *bk_entry(const berth_backend *tables, uint32_t host_abi_version,
                              const berth_host_services *host, berth_error *why) {
    const berth_backend *newest = &tables[BERTH_BACKEND_ABI_VERSION - 1];
    if (host_abi_version < BERTH_BACKEND_ABI_V1_0) {
        bk_errf(why, "%s backend speaks ABI version 1 (1.0) to version %u (1.%u); the host offers version %u",
                newest->name, BERTH_BACKEND_ABI_VERSION, BERTH_BACKEND_ABI_VERSION - 1, host_abi_version);
        return NULL;
    }
    if (!host || host->struct_size < BERTH_HOST_SERVICES_V1_MIN_SIZE) {
        bk_errf(why, "%s backend needs host services of at least %zu bytes, found %u", newest->name,
                (size_t)BERTH_HOST_SERVICES_V1_MIN_SIZE, host ? host->struct_size : 0u);
        return NULL;
    }
    return &tables[(host_abi_version < BERTH_BACKEND_ABI_VERSION ? host_abi_version : BERTH_BACKEND_ABI_VERSION) - 1];
}

berth_status bk_caps_fill(berth_caps *caps, const char *device_name, uint64_t memory_bytes, int unified,
                          uint32_t dtype_mask, berth_error *err) {
    if (!caps) {
        bk_errf(err, "caps called with no caps struct");
        return BERTH_ERR_INVALID;
    }
#define FITS(field) (caps->struct_size >= offsetof(berth_caps, field) + sizeof caps->field)
    if (FITS(device_name)) caps->device_name = device_name;
    if (FITS(memory_bytes)) caps->memory_bytes = memory_bytes;
    if (FITS(unified_memory)) caps->unified_memory = unified;
    if (FITS(dtype_mask)) caps->dtype_mask = dtype_mask;
#undef FITS
    return BERTH_OK;
}

void bk_caps_costs(berth_caps *caps, double region_ns, double crossing_ns_per_byte) {
#define FITS(field) (caps->struct_size >= offsetof(berth_caps, field) + sizeof caps->field)
    if (FITS(region_ns)) caps->region_ns = region_ns;
    if (FITS(crossing_ns_per_byte)) caps->crossing_ns_per_byte = crossing_ns_per_byte;
#undef FITS
}

void bk_plan_memory_fill(berth_plan_memory *m, uint64_t intermediates, uint64_t scratch, uint64_t io,
                         uint64_t constants, uint64_t records, uint32_t estimated) {
#define FITS(field) (m->struct_size >= offsetof(berth_plan_memory, field) + sizeof m->field)
    if (FITS(estimated)) m->estimated = estimated;
    if (FITS(intermediates)) m->intermediates = intermediates;
    if (FITS(scratch)) m->scratch = scratch;
    if (FITS(io)) m->io = io;
    if (FITS(constants)) m->constants = constants;
    if (FITS(records)) m->records = records;
    if (FITS(other)) m->other = 0;
#undef FITS
}
