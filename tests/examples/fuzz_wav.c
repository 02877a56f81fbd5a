/* libFuzzer target of berth-vad's WAV reader: the input is written to a
 * file (the reader takes a path, and checks it is a regular file), opened,
 * and every sample read. Any outcome but a crash, a leak or an
 * out-of-bounds access is fine: a refusal must only say why. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "wav.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

static void remove_file(void) { remove(path); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!path[0]) {
        snprintf(path, sizeof path, "/tmp/berth_fuzz_wav_%ld.wav", (long)getpid());
        atexit(remove_file);
    }
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    char msg[512];
    vad_wav w;
    if (vad_wav_open(&w, path, msg, sizeof msg) == 0) {
        float buf[512];
        long n;
        while ((n = vad_wav_read(&w, buf, sizeof buf / sizeof buf[0])) > 0) {
        }
        vad_wav_close(&w);
    }
    return 0;
}
