/* Runs one part of `berth check` in a child process, so that a module
 * that crashes, hangs or calls exit() cannot take the check down with
 * it: the child streams records to the parent over a pipe, the parent
 * hands each to a callback as it arrives, kills the child (its whole
 * process group) when the time limit passes, reaps it, and says how the
 * part ended.
 *
 * The child announces each case before running it (iso_case), so the
 * last case received is the one that was running when the part ended;
 * it sends what it found as records (iso_send); its normal end sends a
 * final "done" record, and an exit without one is an exit by the code
 * under test. */
#ifndef BERTH_CHECK_ISOLATE_H
#define BERTH_CHECK_ISOLATE_H

#include <stddef.h>

typedef struct iso_chan iso_chan;

/* In the child: the case about to run. */
void iso_case(iso_chan *c, const char *name);
/* In the child: one record, a line of text (a newline in it arrives as
 * a newline). */
void iso_send(iso_chan *c, const char *record);
__attribute__((format(printf, 2, 3))) void iso_sendf(iso_chan *c, const char *fmt, ...);

/* How a part ended. */
typedef enum iso_end {
    ISO_DONE,    /* the function returned                                     */
    ISO_SIGNAL,  /* the child was killed by a signal (sig)                    */
    ISO_TIMEOUT, /* the time limit passed; the child was killed               */
    ISO_EXIT,    /* the child ended, status code, without the "done" record   *
                  * (or with it, but with a status other than 0)              */
    ISO_ERROR    /* no child: fork or pipe failed                             */
} iso_end;

typedef struct iso_result {
    iso_end end;
    int sig, code;
    char last_case[256]; /* the last case announced, "" if none */
    /* Unless ISO_DONE: one line saying how the part ended, naming the
     * part and the last case, e.g. "killed by SIGSEGV during the op
     * cases on the module, in case 'sigmoid'". */
    char message[512];
} iso_result;

typedef void (*iso_fn)(iso_chan *c, void *ctx);
typedef void (*iso_record_fn)(void *ctx, const char *record);

/* Runs fn(chan, ctx) in a child (its own process group) with a limit of
 * timeout_s seconds (0: none) on the whole part, or with per_case on each
 * case (the clock starts again at each iso_case); every record the child sends goes to
 * on_record(rctx, record) in the parent as it arrives. `part` names the
 * part in the message ("the op cases on the module"). stdio buffers are
 * flushed before the fork. Returns 0 when the part ended normally
 * (ISO_DONE), else -1; res says how, in either case. */
int iso_run(const char *part, iso_fn fn, void *ctx, iso_record_fn on_record, void *rctx, int timeout_s,
            int per_case, iso_result *res);

#endif
