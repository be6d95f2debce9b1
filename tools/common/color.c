/* Colour for verdict lines (color.h). */
#include "color.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool enabled[2]; /* stdout, stderr */

bool color_parse(const char *s, color_mode *out)
{
    static const struct { const char *name; color_mode mode; } names[] = {
        { "auto", COLOR_AUTO }, { "always", COLOR_ALWAYS }, { "yes", COLOR_ALWAYS }, { "force", COLOR_ALWAYS },
        { "never", COLOR_NEVER }, { "no", COLOR_NEVER }, { "none", COLOR_NEVER },
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(s, names[i].name)) {
            *out = names[i].mode;
            return true;
        }
    return false;
}

void color_setup(color_mode m)
{
    const char *no_color = getenv("NO_COLOR"), *term = getenv("TERM");
    bool allowed = !(no_color && no_color[0]) && !(term && !strcmp(term, "dumb"));
    for (int i = 0; i < 2; i++)
        enabled[i] = m == COLOR_ALWAYS || (m == COLOR_AUTO && allowed && isatty(i ? STDERR_FILENO : STDOUT_FILENO));
}

static void raw(FILE *out, const char *seq)
{
    int i = out == stdout ? 0 : out == stderr ? 1 : -1;
    if (i < 0 || !enabled[i])
        return;
    fflush(out); /* what the filter holds goes first */
    ssize_t w = write(i ? STDERR_FILENO : STDOUT_FILENO, seq, strlen(seq));
    (void)w;
}

void color_on(FILE *out, color c)
{
    static const char *const seq[] = { "\x1b[1;32m", "\x1b[1;31m", "\x1b[1;33m" };
    raw(out, seq[c]);
}

void color_off(FILE *out)
{
    raw(out, "\x1b[0m");
}
