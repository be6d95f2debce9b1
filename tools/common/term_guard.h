/* The last line of defence between strings read from a file and the user's terminal.
 *
 * Every tool writes through stdout and stderr, and much of what it writes quotes the file it
 * reads (names, keys, token text, generated text, error messages). term_guard_install replaces
 * both streams by filters that pass printable text, newlines and tabs through and write any
 * other control character (C0, DEL, C1: ESC, BEL, CR, CSI 0x9b...) as the six characters
 * \u00XX, and any byte that is not part of valid UTF-8 as \xNN. Neither reaches a terminal as
 * a command, and JSON stays valid (\u00XX is JSON's own escape; JSON writers never emit
 * invalid UTF-8). Callers still escape strings where they print them (fmt_escaped) so that
 * tables read well; the filter guarantees the rest. */
#ifndef GGUFSCOPE_TOOLS_TERM_GUARD_H
#define GGUFSCOPE_TOOLS_TERM_GUARD_H

#include <stdio.h>

/* Wraps stdout and stderr (once; later calls do nothing). */
void term_guard_install(void);

/* The unfiltered stderr, for the tool's own control sequences (a progress bar's \r). */
FILE *term_guard_raw_stderr(void);

/* Escapes len bytes of s into out (as the filter does) and returns the bytes it wrote;
 * out needs room for 6 * len. Shared with the tests. */
size_t term_guard_escape(const unsigned char *s, size_t len, char *out);

#endif
