/*
 * The reference for tests/data/chat_formats.jsonl: what llama.cpp's
 * llama_chat_apply_template (no Jinja: its built-in formats and template
 * detection) makes of one user message for each template given, a family name
 * or a template text, as JSON lines. Not built by the project:
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
    for (int i = 2; i < argc; i++) {
        struct llama_chat_message m = { "user", msg };
        char buf[8192];
        int n = llama_chat_apply_template(argv[i], &m, 1, true, buf, sizeof buf);
        printf("{\"template\": "); js(argv[i]); printf(", \"message\": "); js(msg);
        if (n < 0) printf(", \"formatted\": null}\n");
        else { buf[n] = 0; printf(", \"formatted\": "); js(buf); printf("}\n"); }
    }
}
