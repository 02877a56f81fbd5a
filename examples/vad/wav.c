#include "wav.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

static uint16_t le16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        snprintf(msg, cap, __VA_ARGS__);                                                           \
        goto fail;                                                                                 \
    } while (0)

static const char *convert_hint = "berth-vad reads 16-bit PCM WAV, mono, 16000 Hz (convert with "
                                  "`sox IN -r 16000 -c 1 -b 16 OUT.wav` or "
                                  "`ffmpeg -i IN -ar 16000 -ac 1 -c:a pcm_s16le OUT.wav`)";

int vad_wav_open(vad_wav *w, const char *path, char *msg, size_t cap) {
    memset(w, 0, sizeof *w);
    /* Checked before opening, so a FIFO or a directory is refused rather
     * than blocked on or read as garbage. */
    struct stat st;
    if (stat(path, &st) != 0) {
        snprintf(msg, cap, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(msg, cap, "%s: not a regular file", path);
        return -1;
    }
    w->f = fopen(path, "rb");
    if (!w->f) {
        snprintf(msg, cap, "%s: %s", path, strerror(errno));
        return -1;
    }
    unsigned char riff[12];
    if (fread(riff, 1, sizeof riff, w->f) != sizeof riff || memcmp(riff, "RIFF", 4) != 0 ||
        memcmp(riff + 8, "WAVE", 4) != 0)
        FAIL("%s: not a WAV file (no RIFF/WAVE header); %s", path, convert_hint);

    /* Chunks follow, each an id, a u32 size and the body padded to an
     * even length; "fmt " must come before "data", others are skipped. */
    int have_fmt = 0;
    uint64_t at = sizeof riff; /* where the next chunk's header starts */
    for (;;) {
        unsigned char head[8];
        if (fseeko(w->f, (off_t)at, SEEK_SET) != 0 || fread(head, 1, sizeof head, w->f) != sizeof head)
            FAIL("%s: WAV file ends before its data chunk", path);
        uint32_t size = le32(head + 4);
        uint64_t body = at + sizeof head;
        uint64_t avail = (uint64_t)st.st_size > body ? (uint64_t)st.st_size - body : 0;
        if (memcmp(head, "fmt ", 4) == 0) {
            /* 16 bytes of PCM format, 40 with the extensible header. */
            unsigned char fmt[40] = {0};
            size_t n = size < sizeof fmt ? size : sizeof fmt;
            if (size < 16 || size > avail || fread(fmt, 1, n, w->f) != n)
                FAIL("%s: WAV fmt chunk of %u bytes is malformed", path, (unsigned)size);
            unsigned format = le16(fmt), channels = le16(fmt + 2), bits = le16(fmt + 14);
            uint32_t rate = le32(fmt + 4);
            /* WAVE_FORMAT_EXTENSIBLE names the real format in the first
             * two bytes of its sub-format GUID. */
            if (format == 0xFFFE && size >= 40) format = le16(fmt + 24);
            if (format != 1)
                FAIL("%s: WAV sample format %u is not integer PCM (1); %s", path, format, convert_hint);
            if (channels != 1 || rate != VAD_WAV_RATE || bits != 16)
                FAIL("%s: WAV is %u channel(s), %u Hz, %u-bit; %s", path, channels, (unsigned)rate, bits,
                     convert_hint);
            have_fmt = 1;
        } else if (memcmp(head, "data", 4) == 0) {
            if (!have_fmt) FAIL("%s: WAV data chunk comes before its fmt chunk", path);
            /* A writer that could not seek back (a pipe) leaves the size
             * at its placeholder 0xFFFFFFFF: the data is the rest of the
             * file. */
            uint64_t bytes = size == 0xFFFFFFFFu ? avail : size;
            if (bytes > avail)
                FAIL("%s: WAV data chunk says %llu bytes of samples, the file holds %llu (truncated?)", path,
                     (unsigned long long)bytes, (unsigned long long)avail);
            if (bytes % 2)
                FAIL("%s: WAV data chunk of %llu bytes is not a whole number of 16-bit samples", path,
                     (unsigned long long)bytes);
            if (bytes == 0) FAIL("%s: WAV file holds no samples", path);
            w->samples = w->left = bytes / 2;
            return 0; /* the stream is at the first sample */
        }
        at = body + size + (size & 1);
    }
fail:
    fclose(w->f);
    w->f = NULL;
    return -1;
}

long vad_wav_read(vad_wav *w, float *out, size_t n) {
    /* Read in small pieces through a fixed buffer: no allocation, and the
     * host's byte order does not matter. */
    unsigned char buf[1024];
    size_t done = 0;
    if (n > w->left) n = (size_t)w->left;
    while (done < n) {
        size_t want = n - done < sizeof buf / 2 ? n - done : sizeof buf / 2;
        if (fread(buf, 2, want, w->f) != want) return -1;
        for (size_t i = 0; i < want; i++) out[done + i] = (float)(int16_t)le16(buf + 2 * i) / 32768.0f;
        done += want;
    }
    w->left -= done;
    return (long)done;
}

void vad_wav_close(vad_wav *w) {
    if (w->f) fclose(w->f);
    w->f = NULL;
}
