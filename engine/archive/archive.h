/* The weights archive: SafeTensors, or a JSON manifest over a raw blob.
 *
 * Everything in the header is validated when the archive is opened, before
 * any payload byte is read (see DESIGN.md, "The weights archive"). Payload
 * is then streamed one tensor at a time into a backend. */
#ifndef BERTH_ARCHIVE_H
#define BERTH_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

#include "berth/backend.h"

/* Storage dtypes an archive may hold. */
typedef enum ba_dtype {
    BA_INVALID = 0,
    BA_F64, BA_F32, BA_F16, BA_BF16,
    BA_I64, BA_I32, BA_I16, BA_I8,
    BA_U64, BA_U32, BA_U16, BA_U8,
    BA_BOOL,
    BA_I4, BA_U4 /* manifest only: packed two per byte, low nibble first */
} ba_dtype;

typedef struct ba_entry {
    const char *name;
    ba_dtype dtype;
    uint32_t rank;
    int64_t dims[BERTH_MAX_RANK];
    uint64_t offset; /* absolute offset of the first byte in the data file */
    uint64_t bytes;
} ba_entry;

typedef struct berth_archive berth_archive;

/* Open `path`. A path ending in ".safetensors" is read as SafeTensors and
 * `manifest` is ignored; otherwise `manifest` (a JSON file) must be given
 * and `path` is its blob. On failure: NULL, and err names the file, the
 * tensor where there is one, and the rule broken. */
berth_archive *berth_archive_open(const char *path, const char *manifest, berth_error *err);
void berth_archive_close(berth_archive *a);

const char *berth_archive_path(const berth_archive *a);
uint32_t berth_archive_count(const berth_archive *a);
const ba_entry *berth_archive_entry(const berth_archive *a, uint32_t i); /* file order */
/* __metadata__ (SafeTensors only): the value of `key`, or NULL. */
const char *berth_archive_meta(const berth_archive *a, const char *key);
uint32_t berth_archive_meta_count(const berth_archive *a);
void berth_archive_meta_at(const berth_archive *a, uint32_t i, const char **key, const char **value);

/* Find the entry for a graph reference: exact name first, then the
 * sanitized form ("::" -> "__", "." -> "_") of every archive name.
 * Returns the entry index, or -1 with err set (missing, or ambiguous
 * naming both candidates). */
int32_t berth_archive_lookup(const berth_archive *a, const char *ref, berth_error *err);

const char *ba_dtype_name(ba_dtype t);
size_t ba_dtype_bits(ba_dtype t);

/* One tensor the graph wants, as the graph declares it. */
typedef struct berth_weight_request {
    const char *ref;   /* the @weights reference */
    const char *value; /* the graph's const name, for messages */
    berth_dtype dtype;
    uint32_t rank;
    int64_t dims[BERTH_MAX_RANK];
    uint32_t id;       /* the id the backend will know it by */
} berth_weight_request;

/* Stream the requested tensors into a backend, in file order: one pread
 * into the backend's offered destination or a reused scratch buffer,
 * conversion (BF16 -> f32, packed 4-bit checks), upload_tensor, next.
 * Checks each request against its entry first (dtype and shape, naming
 * both sides) so a mismatch fails before any upload. On failure frees
 * what was uploaded and names the failing tensor. `peak_scratch`, when
 * non-NULL, receives the largest scratch the engine held. */
berth_status berth_archive_stream(berth_archive *a, const berth_weight_request *req, uint32_t n,
                                  const berth_backend *be, berth_device *dev,
                                  const berth_host_services *host, berth_weights **out,
                                  uint64_t *peak_scratch, berth_error *err);

/* One backend to stream into: its requests (ids 0..n-1 local to it) and,
 * on success, its weights. */
typedef struct berth_stream_target {
    const berth_backend *be;
    berth_device *dev;
    const berth_host_services *host;
    const berth_weight_request *req;
    uint32_t n;
    berth_weights *w; /* out */
} berth_stream_target;

/* Stream into several backends at once (a graph split across them):
 * every tensor any target asks for is read from the file once, in file
 * order, and handed to each target that asked for it; a target asking
 * for the same archive tensor under two ids gets it twice, read twice, as
 * berth_archive_stream does. The read goes into the first such target's
 * offered memory or the scratch; every other target gets a copy (into its
 * offered memory, or a second host buffer given to it) before the first
 * one's upload_tensor, so host memory holds the tensor at most twice.
 * Each target gets its own upload_begin (counting its own requests) and
 * upload_end. Every target's requests are checked before any upload_begin.
 * Targets must be on distinct devices: a backend may offer memory that
 * belongs to its device, and a second target on that device could reuse
 * it before the first is done. On failure every target's weights are
 * freed (t[k].w NULL) and err names the file, the tensor, and the backend
 * whose verb failed. `peak_scratch`, when non-NULL, receives the most
 * host memory the engine held at once. berth_archive_stream is this with
 * one target. */
berth_status berth_archive_stream_to(berth_archive *a, berth_stream_target *t, uint32_t n_targets,
                                     uint64_t *peak_scratch, berth_error *err);

/* A digest (berth_digest) of every tensor's bytes as the last stream
 * read them from the file, in file order; 0 before any stream. */
uint64_t berth_archive_digest(const berth_archive *a);

/* Writer (tests and tools). Writes a SafeTensors file, header padded with
 * spaces to a multiple of 8, to PATH.tmp.XXXXXX then renames it into
 * place; on any failure no file and no temporary is left. 4-bit values
 * are stored packed as BA_U8 (the caller packs, low nibble first) with
 * the metadata pair "rustnn.webnn.packed4", "1". Returns 0 on success,
 * -1 with err set. */
typedef struct berth_st_tensor {
    const char *name;
    ba_dtype dtype;
    uint32_t rank;
    int64_t dims[BERTH_MAX_RANK];
    const void *data;
    uint64_t bytes; /* must equal elements * dtype size */
} berth_st_tensor;

int berth_st_write(const char *path, const berth_st_tensor *t, uint32_t n,
                   const char *const *meta_kv /* key, value, ..., NULL */, berth_error *err);

#endif
