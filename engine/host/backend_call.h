/* What the host does around every backend verb that takes a berth_error.
 * A backend's message is text from someone else's code: before a user
 * reads it, the host makes sure it ends inside its buffer, is not empty,
 * and says which backend, verb and status it came from. */
#ifndef BERTH_BACKEND_CALL_H
#define BERTH_BACKEND_CALL_H

#include "berth/backend.h"

/* "BERTH_OK", "BERTH_ERR_INVALID", ...; NULL for a value no release
 * defines. */
const char *berth_status_name(berth_status st);

/* Before a verb: an empty message with a terminator in its last byte, so
 * that a backend that writes nothing is seen to, and one that fills the
 * buffer without ending it is caught. */
void berth_backend_msg_reset(berth_error *why);

/* After a verb returned `st`, with the backend's message in `why` (reset
 * before the call). BERTH_OK is returned as is and `err` is not touched.
 * Otherwise `err` gets
 *     backend 'NAME' VERB(): STATUS: MESSAGE
 * or, when the backend wrote nothing,
 *     backend 'NAME' VERB() returned STATUS with no message
 * A message the backend did not end within BERTH_ERROR_CAP bytes is cut
 * to its first 200 bytes and said to be. A status no release defines becomes
 * BERTH_ERR_INTERNAL, naming the number the backend returned. `why` and
 * `err` may be the same buffer. Returns the status the host acts on. */
berth_status berth_backend_result(berth_status st, const char *backend, const char *verb,
                                  berth_error *why, berth_error *err);

#endif
