/* What every tool does first and last, so that the README's exit statuses hold on every path: 0 all good,
 * 1 the file has a problem, 2 trouble.
 *   tool_start: standard streams that were closed are held open (a closed stdout becomes /dev/full, so that
 *     writing to it fails as it should, and no file the tool opens can land on descriptor 1); the terminal
 *     filter (term_guard.h) and the SIGBUS guard (sigbus.h) are installed; a library that calls exit() on its
 *     own (libgomp's "Thread creation failed" exits 1, which here would say "the model has a problem") exits 2.
 *   tool_finish: the tool's status, made 2 when its standard output could not be written whole (closed, a full
 *     disk), with a message.
 * SIGPIPE keeps its default: a tool whose reader goes away (| head -1) ends silently by the signal, as cat and
 * grep do (status 141 in a shell; pipefail reports it). */
#ifndef GGUFSCOPE_TOOLS_TOOL_H
#define GGUFSCOPE_TOOLS_TOOL_H

void tool_start(const char *prog);
int tool_finish(int status);
/* Ends the process now with status, as the tool's own answer (--help, --version deep in parsing). */
_Noreturn void tool_exit(int status);

#endif
