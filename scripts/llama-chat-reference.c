/*
 * The reference for tests/data/chat_formats.jsonl: what llama.cpp's
 * llama_chat_apply_template (no Jinja: its built-in formats and template
 * detection) makes of one user message for each template given, a family name
 * or a template text, as JSON lines, with the built-in names whose own format gives the same text (the
 * families its detection may have chosen). Not built by the project:
 * scripts/chat-formats-reference.sh compiles it against a llama.cpp build
 * outside the tree and runs it.
 */
#include "llama.h"
#include <stdio.h>
#include <string.h>
static void js(const char *s) {
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c == '\n') printf("\\n");
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}
int main(int argc, char **argv) {
    const char *msg = argv[1];
    const char *names[128];
    const int n_names = llama_chat_builtin_templates(names, 128);
    for (int i = 2; i < argc; i++) {
        struct llama_chat_message m = { "user", msg };
        char buf[8192], other[8192];
        int n = llama_chat_apply_template(argv[i], &m, 1, true, buf, sizeof buf);
        printf("{\"template\": "); js(argv[i]); printf(", \"message\": "); js(msg);
        if (n < 0) { printf(", \"formatted\": null}\n"); continue; }
        buf[n] = 0; printf(", \"formatted\": "); js(buf);
        /* the built-in names that format this message the same: the families detection may have chosen */
        printf(", \"families\": [");
        for (int k = 0, first = 1; k < n_names && k < 128; k++) {
            int o = llama_chat_apply_template(names[k], &m, 1, true, other, sizeof other);
            if (o == n && memcmp(other, buf, (size_t)n) == 0) { printf("%s", first ? "" : ", "); js(names[k]); first = 0; }
        }
        printf("]}\n");
    }
}
