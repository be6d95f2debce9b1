/* Verdict lines in colour on a terminal: green when all is well, red for a problem, yellow when nothing
 * could be checked. Never in a pipe, a file or JSON; NO_COLOR (no-color.org) and --color=never turn it off,
 * --color=always on. */
#ifndef GGUFSCOPE_TOOLS_COLOR_H
#define GGUFSCOPE_TOOLS_COLOR_H

#include <stdbool.h>
#include <stdio.h>

typedef enum color_mode { COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER } color_mode;
typedef enum color { COLOR_GOOD, COLOR_BAD, COLOR_UNSURE } color;

/* "auto", "always", "never" (also "yes"/"no" as GNU tools take them). */
bool color_parse(const char *s, color_mode *out);
/* Decides once, from the mode, whether stdout and stderr are terminals, and the environment. */
void color_setup(color_mode m);
/* Starts and ends a coloured stretch of stdout or stderr (nothing when colour is off for it). The
 * escape sequences are ours, so they go around the terminal filter. */
void color_on(FILE *out, color c);
void color_off(FILE *out);

#endif
