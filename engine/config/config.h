/* The deployment config: one INI file, read with inih.
 *
 *   [model]          graph = m.webnn        (required)
 *                    weights = m.safetensors (required; or a raw blob ...)
 *                    manifest = m.json      (... which then needs this JSON
 *                                            manifest; refused beside a
 *                                            .safetensors file)
 *                    stage = NAME           (the stage run uses by default)
 *   [model.NAME]     the same keys, and use = (this model's backends,
 *                    replacing [backend] use): one of several models a
 *                    file describes (a pipeline). An open names the one
 *                    it loads; the others are checked (known keys, graph
 *                    and weights present) and set aside. [backend],
 *                    [backend.NAME], [buckets], [inputs.NAME] and
 *                    [limits] are shared by all; stage names are the
 *                    models' way to keep their buckets apart. A file with
 *                    [model.NAME] sections has no lanes; one with no
 *                    [model] must be opened by a model name.
 *   [lane.NAME]      graph = encoder.webnn  (required: another graph on the
 *                                            same weights)
 *                    stage = NAME
 *   [backend]        use = vulkan, cpu      (names or paths, tried in order;
 *                                            default "cpu")
 *                    path = DIR[:DIR...]    (where names are looked up first)
 *                    split = on|off|first   (first: each node to the
 *                                            first backend of use that runs
 *                                            it; on: that, then runs of nodes
 *                                            moved where the cost model says
 *                                            crossings cost more than they
 *                                            save; off, the default: the
 *                                            whole graph to the first that
 *                                            runs every node)
 *                    verify = cpu           (a reference backend, name or
 *                                            path: every run is run on it
 *                                            too and the outputs compared;
 *                                            see berth.h)
 *                    verify_atol = 1e-3     (the comparison's tolerance:
 *                    verify_rtol = 1e-3      |x - ref| <= atol + rtol |ref|)
 *   [backend.NAME]   any keys: handed to that backend, which validates them
 *                    (kept in file order with their lines; NAME need not
 *                    be in use, so options survive switching backends)
 *   [buckets]        STAGE = dim=value dim=value | dim=value dim=value ...
 *   [inputs.NAME]    pad = VALUE            (a finite number; default 0)
 *   [limits]         max_memory_mb = N      (a positive whole number of MiB,
 *                                            at most 2^40: the most memory
 *                                            berth may hold for weights,
 *                                            plans and their host buffers;
 *                                            absent: the executor's default,
 *                                            the machine's physical memory)
 *   [serve]          what `berth serve` does with this model's requests,
 *                    each a positive whole number at most 2^40:
 *                    max_batch      requests merged into one run (default:
 *                                   the largest batch of the stage)
 *                    max_delay_us   how long the first request of a batch
 *                                   waits for company (default 1000)
 *                    max_queue      requests waiting before 503 (default 256)
 *                    timeout_ms     a request's deadline (default 30000)
 *                    workers        run contexts, each a thread (default 1)
 *   [cache]          dir = PATH             (where backends' prepared weights
 *                                            and compiled programs are kept
 *                                            between processes; created if
 *                                            missing; absent: nothing kept)
 *
 * Rules, each broken one an error "FILE:LINE: ..." naming the section and
 * key, what was expected and what was found (for a missing key, the line
 * of its section header):
 *  - Sections and keys are case-sensitive. An unknown section or key, a
 *    key repeated within a section (also in [backend.NAME]), a section
 *    repeated, a key before any section, [lane.main] (main is [model]),
 *    is an error.
 *  - NAME of a lane, a backend and a stage (the keys of [buckets]) is
 *    letters, digits, '_' and '-'; an input NAME is anything without
 *    whitespace or ']'; a dim name may also hold '.'.
 *  - use: items separated by ',', whitespace trimmed, none empty, none
 *    twice. An item with a '/' is a path, anything else a backend name.
 *  - Buckets: binds separated by whitespace, no spaces around '='; buckets
 *    separated by '|'; values positive integers at most 2^40; a dim at
 *    most once per bucket; every bucket of a stage binds the same dims;
 *    no bucket repeated. Bind i names the same dim in every bucket of a
 *    stage (later buckets are reordered to the first one's order).
 *  - A stage named by [model] or a lane exists in [buckets]. A lane
 *    without stage (stage NULL) uses the first stage.
 *  - Paths (graph, weights, manifest, path dirs, use paths) are resolved
 *    against the config file's directory unless absolute: "m.webnn" in
 *    "cfg/a.ini" becomes "cfg/m.webnn", and in "a.ini" "./m.webnn".
 *
 * What inih (Debian's libinih 55) means for the file:
 *  - Lines may be of any length. inih's line buffer is 200 bytes; berth
 *    splits a longer line into key and value itself, the way inih splits
 *    a short one, so a long path or option value reads whole, never split
 *    into two lines.
 *  - Comments are lines starting with ';' or '#', and ';' after
 *    whitespace inside a line ("use = cpu ; fast"), so a value cannot
 *    contain " ;". "key: value" means "key = value"; the first '=' or ':'
 *    ends the key.
 *  - Indentation is ignored: there are no multi-line values (inih would
 *    append an indented line to the key above; berth reads it as a line
 *    of its own, so a stray one is a syntax error).
 *  - A section header may be followed only by a comment. Section names
 *    have no length limit: berth reads headers itself, since inih would
 *    cut them at 49 bytes.
 *  - A UTF-8 byte order mark at the start is skipped; a NUL byte in a
 *    loaded file is an error; files over 16 MiB are refused.
 *
 * Every string is owned by the berth_config and freed by
 * berth_config_free. On any error nothing is left allocated. */
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

/* [backend] verify_atol and verify_rtol when not given. */
#define BERTH_VERIFY_DEFAULT_TOL 1e-3

/* [backend] split's values. */
#define BERTH_SPLIT_OFF 0
#define BERTH_SPLIT_ON 1    /* by the cost model */
#define BERTH_SPLIT_FIRST 2 /* each node to the first backend that runs it */

enum berth_serve_server_key {
    BERTH_SERVE_MAX_INFLIGHT_MB,
    BERTH_SERVE_DRAIN_S,
    BERTH_SERVE_MAX_CONNECTIONS,
    BERTH_SERVE_MAX_CONNECTIONS_PER_IP,
    BERTH_SERVE_HEADER_TIMEOUT_S,
    BERTH_SERVE_IDLE_TIMEOUT_S,
    BERTH_SERVE_MIN_BODY_KBPS,
    BERTH_SERVE_HTTP_THREADS,
    BERTH_SERVE_N_SERVER
};

typedef struct berth_config {
    char *path;     /* the file as given */
    char *model;    /* the [model.NAME] opened; NULL: [model] */
    uint32_t n_models;
    char **models;  /* every [model.NAME] of the file, in order */
    char *dir;      /* its directory */
    char *weights;  /* resolved paths; NULL when absent */
    char *manifest;
    uint32_t n_lanes;
    bc_lane *lanes; /* lanes[0] is [model] */
    uint32_t n_use;
    char **use;     /* backend names or paths, in order; default {"cpu"} */
    uint32_t n_path;
    char **path_dirs; /* [backend] path, resolved, in order */
    int split;           /* [backend] split: a BERTH_SPLIT_* (off by default) */
    char *verify;        /* [backend] verify: the reference backend; NULL: none */
    double verify_atol, verify_rtol; /* its tolerance (defaults set by the loader) */
    uint32_t split_line; /* its line, 0 when not given */
    uint32_t n_backends;
    bc_backend_opts *backends;
    uint32_t n_stages;
    bc_stage *stages;
    uint32_t n_inputs;
    bc_input *inputs;
    uint64_t max_memory_mb;   /* [limits] max_memory_mb; 0: not given */
    uint32_t max_memory_line; /* its line, 0 when not given */
    /* [serve]: each 0 when not given */
    uint64_t serve_max_batch, serve_max_delay_us, serve_max_queue, serve_timeout_ms, serve_workers;
    uint64_t serve_server[BERTH_SERVE_N_SERVER]; /* the server-wide keys below */
    char *cache_dir;          /* [cache] dir, resolved; NULL: no cache */
} berth_config;

/* [serve] keys that set the whole server rather than one model, indexed
 * by enum berth_serve_server_key: berth serve takes each from whichever
 * configs give it, which must agree. */
extern const char *const berth_serve_server_keys[BERTH_SERVE_N_SERVER];

/* Parse a file. On failure NULL and err = "FILE:LINE: what is wrong"
 * (unknown section or key, missing required key, malformed value), or
 * "FILE: ..." when it cannot be read. err may be NULL. */
berth_config *berth_config_load(const char *path, berth_error *err);
/* Parse NUL-terminated text as if read from `path` (for tests and
 * fuzzing); relative paths resolve against path's directory. */
berth_config *berth_config_parse(const char *path, const char *text, berth_error *err);
/* The same for the model called `model` ([model.NAME]); NULL: [model];
 * "": the file's first [model.NAME] (c->models then lists them all). */
berth_config *berth_config_load_model(const char *path, const char *model, berth_error *err);
berth_config *berth_config_parse_model(const char *path, const char *text, const char *model,
                                      berth_error *err);
void berth_config_free(berth_config *c);

/* The options of [backend.NAME], or NULL when the file has none. */
const bc_backend_opts *berth_config_backend(const berth_config *c, const char *name);
/* The stage called name, NULL when there is none; name NULL: the first
 * stage (NULL when the file has no [buckets]). */
const bc_stage *berth_config_stage(const berth_config *c, const char *name);
/* [inputs.NAME] pad, or 0 when the input has no section. */
double berth_config_pad(const berth_config *c, const char *input);

#endif
