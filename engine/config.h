/* The deployment config: one INI file, read with inih.
 *
 *   [model]          graph = m.webnn   weights = m.safetensors
 *                    manifest = m.json (with a raw blob as weights)
 *                    stage = NAME      (the stage run uses by default)
 *   [lane.NAME]      graph = encoder.webnn   (another graph on the same weights)
 *                    stage = NAME
 *   [backend]        use = vulkan, cpu       path = DIR[:DIR...]
 *   [backend.NAME]   any keys: handed to that backend, which validates them
 *   [buckets]        STAGE = dim=value dim=value | dim=value ...
 *   [inputs.NAME]    pad = VALUE             (default 0)
 *
 * Paths are relative to the directory of the config file. */
#ifndef BERTH_CONFIG_H
#define BERTH_CONFIG_H

#include <stdint.h>

#include "berth/backend.h"

typedef struct bc_kv {
    char *key;
    char *value;
    uint32_t line;
} bc_kv;

typedef struct bc_backend_opts {
    char *name; /* "cpu" for [backend.cpu] */
    uint32_t n;
    bc_kv *kv;  /* file order */
    uint32_t line;
} bc_backend_opts;

typedef struct bc_bind {
    char *dim;
    int64_t value;
} bc_bind;

typedef struct bc_bucket {
    uint32_t n;
    bc_bind *binds;
} bc_bucket;

typedef struct bc_stage {
    char *name;
    uint32_t n;
    bc_bucket *buckets; /* file order */
    uint32_t line;
} bc_stage;

typedef struct bc_input {
    char *name;
    double pad;
    uint32_t line;
} bc_input;

typedef struct bc_lane {
    char *name;   /* "main" for [model] */
    char *graph;  /* resolved path */
    char *stage;  /* NULL: the first stage */
    uint32_t line;
} bc_lane;

typedef struct berth_config {
    char *path;     /* the file as given */
    char *dir;      /* its directory */
    char *weights;  /* resolved paths; NULL when absent */
    char *manifest;
    uint32_t n_lanes;
    bc_lane *lanes; /* lanes[0] is [model] */
    uint32_t n_use;
    char **use;     /* backend names or paths, in order; default {"cpu"} */
    uint32_t n_path;
    char **path_dirs; /* [backend] path, resolved, in order */
    uint32_t n_backends;
    bc_backend_opts *backends;
    uint32_t n_stages;
    bc_stage *stages;
    uint32_t n_inputs;
    bc_input *inputs;
} berth_config;

/* Parse a file. On failure NULL and err = "FILE:LINE: what is wrong"
 * (unknown section or key, missing required key, malformed value). */
berth_config *berth_config_load(const char *path, berth_error *err);
/* Parse text as if read from `path` (for tests and fuzzing). */
berth_config *berth_config_parse(const char *path, const char *text, berth_error *err);
void berth_config_free(berth_config *c);

const bc_backend_opts *berth_config_backend(const berth_config *c, const char *name);
const bc_stage *berth_config_stage(const berth_config *c, const char *name);
double berth_config_pad(const berth_config *c, const char *input);

#endif
