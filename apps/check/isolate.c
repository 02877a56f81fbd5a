/* The child processes of isolate.h. The pipe carries lines: "C name"
 * (a case begins), "R record" (a record, '\\' and newlines escaped) and
 * "D" (the function returned). */
#include "isolate.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

struct iso_chan {
    int fd;
};

static void put(iso_chan *c, const char *p, size_t n) {
    while (n) {
        ssize_t w = write(c->fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) _exit(125); /* the parent is gone */
        p += w, n -= (size_t)w;
    }
}

/* One line: the tag, then s escaped. */
static void line(iso_chan *c, char tag, const char *s) {
    size_t len = strlen(s), n = 0;
    char *buf = malloc(2 * len + 3);
    if (!buf) _exit(124);
    buf[n++] = tag;
    buf[n++] = ' ';
    for (; *s; s++) {
        if (*s == '\\' || *s == '\n') buf[n++] = '\\', buf[n++] = *s == '\n' ? 'n' : '\\';
        else buf[n++] = *s;
    }
    buf[n++] = '\n';
    put(c, buf, n);
    free(buf);
}

void iso_case(iso_chan *c, const char *name) { line(c, 'C', name); }
void iso_send(iso_chan *c, const char *record) { line(c, 'R', record); }

void iso_sendf(iso_chan *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0) _exit(124);
    va_end(ap);
    iso_send(c, s);
    free(s);
}

static const char *signal_name(int sig, char *buf, size_t cap) {
    static const struct {
        int sig;
        const char *name;
    } names[] = {{SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"},   {SIGILL, "SIGILL"},   {SIGFPE, "SIGFPE"},
                 {SIGABRT, "SIGABRT"}, {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"}, {SIGPIPE, "SIGPIPE"},
                 {SIGTRAP, "SIGTRAP"}, {SIGSYS, "SIGSYS"},   {SIGINT, "SIGINT"},   {SIGQUIT, "SIGQUIT"},
                 {SIGHUP, "SIGHUP"},   {SIGALRM, "SIGALRM"}, {SIGUSR1, "SIGUSR1"}, {SIGUSR2, "SIGUSR2"},
                 {SIGXCPU, "SIGXCPU"}, {SIGXFSZ, "SIGXFSZ"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].sig == sig) return names[i].name;
    snprintf(buf, cap, "signal %d", sig);
    return buf;
}

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Handles one complete line from the child (without its newline). */
static void take(char *l, iso_record_fn on_record, void *rctx, iso_result *res, int *done) {
    if (l[0] == 'D') {
        *done = 1;
        return;
    }
    if (!l[0] || l[1] != ' ') return;
    char *o = l + 2;
    for (const char *s = l + 2; *s; s++) {
        if (*s == '\\' && s[1]) s++, *o++ = *s == 'n' ? '\n' : *s;
        else *o++ = *s;
    }
    *o = 0;
    if (l[0] == 'C') snprintf(res->last_case, sizeof res->last_case, "%s", l + 2);
    else if (l[0] == 'R' && on_record) on_record(rctx, l + 2);
}

/* The child's side: runs the part, then says "D" so that the parent can
 * tell a part that returned from one that called exit(). Never returns. */
static void run_child(int fds[2], iso_fn fn, void *ctx) {
    close(fds[0]);
    setpgid(0, 0);
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* berth check interrupted: the part goes too */
#endif
    iso_chan c = {fds[1]};
    fn(&c, ctx);
    fflush(NULL);
    put(&c, "D\n", 2);
    exit(0); /* not _exit: a sanitizer's leak check runs in the child too */
}

/* Starts the child on a new pipe; the parent keeps fds[0] and the child's
 * pid. On failure, nothing is left open and res says why, as iso_run
 * reports it. */
static int start_child(const char *part, iso_fn fn, void *ctx, iso_result *res, int fds[2], pid_t *pid_out) {
    fflush(NULL);
    if (pipe(fds) != 0) {
        res->end = ISO_ERROR;
        snprintf(res->message, sizeof res->message, "%s could not run: no pipe: %s", part, strerror(errno));
        return -1;
    }
    /* close-on-exec, so that nothing the module starts holds the pipe
     * (set apart: macOS has no pipe2) */
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]), close(fds[1]);
        res->end = ISO_ERROR;
        snprintf(res->message, sizeof res->message, "%s could not run: fork: %s", part, strerror(errno));
        return -1;
    }
    if (pid == 0) run_child(fds, fn, ctx);
    setpgid(pid, pid); /* either of the two calls wins; both mean the same */
    close(fds[1]);
    *pid_out = pid;
    return 0;
}

/* Reads the child's lines from fd until the pipe ends (returns 1), the
 * deadline passes (*timed_out set, returns 0) or reading fails (returns
 * 0). With per_case, each new case gets the whole timeout, so that a long
 * suite of quick cases is not cut off. Leaves fd open for the caller. */
static int read_child(int fd, iso_record_fn on_record, void *rctx, int timeout_s, int per_case, iso_result *res,
                      int *done, int *timed_out) {
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    int eof = 0;
    double deadline = now_s() + timeout_s;
    while (buf && !eof) {
        int wait_ms = -1;
        if (timeout_s > 0) {
            double left = deadline - now_s();
            if (left <= 0) {
                *timed_out = 1;
                break;
            }
            wait_ms = (int)(left * 1000) + 1;
        }
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, wait_ms);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) break;
        if (r == 0) continue; /* the deadline, seen at the top */
        if (len + 1024 > cap) {
            char *more = realloc(buf, cap * 2);
            if (!more) break;
            buf = more, cap *= 2;
        }
        ssize_t n = read(fd, buf + len, cap - len - 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            eof = 1;
            break;
        }
        len += (size_t)n;
        char *start = buf, *nl;
        while ((nl = memchr(start, '\n', len - (size_t)(start - buf)))) {
            *nl = 0;
            if (per_case && start[0] == 'C') deadline = now_s() + timeout_s;
            take(start, on_record, rctx, res, done);
            start = nl + 1;
        }
        len -= (size_t)(start - buf);
        memmove(buf, start, len);
    }
    free(buf);
    return eof;
}

/* Sets res->end, and res->message for the user, from how the child
 * ended: the timeout first, then lost records, a signal, an early exit()
 * and a bad exit status, in that order, naming the case it was in. */
static void judge_end(const char *part, int timeout_s, int per_case, int timed_out, int eof, int done, int status,
                      iso_result *res) {
    char in_case[300] = "";
    if (res->last_case[0]) snprintf(in_case, sizeof in_case, ", in case '%s'", res->last_case);
    char sigbuf[32];
    if (timed_out) {
        res->end = ISO_TIMEOUT;
        snprintf(res->message, sizeof res->message, "timed out after %d s%s and was killed during %s%s", timeout_s,
                 per_case && res->last_case[0] ? " on one case" : "", part, in_case);
    } else if (!eof) {
        res->end = ISO_ERROR;
        snprintf(res->message, sizeof res->message, "%s: lost the child's records (killed)", part);
    } else if (WIFSIGNALED(status)) {
        res->end = ISO_SIGNAL;
        res->sig = WTERMSIG(status);
        snprintf(res->message, sizeof res->message, "killed by %s during %s%s",
                 signal_name(res->sig, sigbuf, sizeof sigbuf), part, in_case);
    } else if (!done) {
        res->end = ISO_EXIT;
        res->code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        snprintf(res->message, sizeof res->message, "the module called exit(%d) during %s%s", res->code, part,
                 in_case);
    } else if (WIFEXITED(status) && WEXITSTATUS(status)) {
        res->end = ISO_EXIT;
        res->code = WEXITSTATUS(status);
        snprintf(res->message, sizeof res->message, "%s finished, but its process ended with status %d", part,
                 res->code);
    } else {
        res->end = ISO_DONE;
        res->code = WEXITSTATUS(status);
    }
}

int iso_run(const char *part, iso_fn fn, void *ctx, iso_record_fn on_record, void *rctx, int timeout_s,
            int per_case, iso_result *res) {
    memset(res, 0, sizeof *res);
    int fds[2];
    pid_t pid;
    if (start_child(part, fn, ctx, res, fds, &pid) != 0) return -1;

    int done = 0, timed_out = 0;
    int eof = read_child(fds[0], on_record, rctx, timeout_s, per_case, res, &done, &timed_out);
    close(fds[0]);
    if (!eof) kill(-pid, SIGKILL), kill(pid, SIGKILL); /* timed out, or the parent cannot read on */
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }

    judge_end(part, timeout_s, per_case, timed_out, eof, done, status, res);
    return res->end == ISO_DONE ? 0 : -1;
}
