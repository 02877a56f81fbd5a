/* Reading the one audio format berth-vad takes: a PCM WAV file, 16-bit
 * signed little-endian samples, one channel, 16000 Hz. What phone
 * recorders, `sox` and `ffmpeg` write; anything else is refused with a
 * message that says what the file holds and how to convert it. */
#ifndef VAD_WAV_H
#define VAD_WAV_H

#include <stdint.h>
#include <stdio.h>

#define VAD_WAV_RATE 16000

typedef struct vad_wav {
    FILE *f;           /* positioned at the first sample */
    uint64_t samples;  /* how many samples the data chunk holds */
    uint64_t left;     /* samples not yet read */
} vad_wav;

/* Opens path and reads its header up to the data. On failure writes a
 * message naming the file into msg and returns -1 (nothing left open). */
int vad_wav_open(vad_wav *w, const char *path, char *msg, size_t cap);
/* Reads up to n samples as floats in [-1, 1) (s / 32768, exact in
 * float32); returns how many it read, 0 at the end, -1 on a read error
 * or a file shorter than its header says. */
long vad_wav_read(vad_wav *w, float *out, size_t n);
void vad_wav_close(vad_wav *w);

#endif
