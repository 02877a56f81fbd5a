/* `berth inspect FILE [--manifest M]`: validate a weights archive and
 * print what it holds. The CLI dispatches here; argv[0] is "inspect". */
#ifndef BERTH_INSPECT_H
#define BERTH_INSPECT_H

/* Returns 0 when the archive is valid (the table goes to stdout), 1 with
 * "berth inspect: <the broken rule>" on stderr when it is not, and 2 for
 * a usage error. */
int berth_inspect_main(int argc, char **argv);

#endif
