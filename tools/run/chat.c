/* gguf-run --chat: the prompt as one user message in the model's own chat format. */
#include "format.h"
#include "run.h"

#include <stdlib.h>
#include <string.h>

/* Prints the first bytes of the template escaped, for an error that must quote it. */
static void quote_start(const gguf_str *t)
{
    fputs(" (it starts: \"", stderr);
    fmt_escaped(stderr, t->ptr, t->len < 80 ? t->len : 80);
    fputs(t->len > 80 ? "\"...)" : "\")", stderr);
}

int run_chat_prompt(const run_opts *o, const gguf_file *f, char **text, const char **family)
{
    *text = NULL;
    *family = o->chat_template;
    gguf_str tmpl = { 0 };
    gguf_error ge;
    gguf_status s = gguf_get_str(f, "tokenizer.chat_template", &tmpl, &ge);
    if (!*family) {
        if (s == GGUF_E_KEY_NOT_FOUND) {
            fprintf(stderr, "gguf-run: %s: the file has no tokenizer.chat_template: choose a format with "
                            "--chat-template NAME (%s)\n", o->model, tok_chat_families());
            return 2;
        }
        if (s != GGUF_OK) {
            fprintf(stderr, "gguf-run: %s: byte %llu: %s\n", o->model, (unsigned long long)ge.offset, ge.message);
            return 2;
        }
        *family = tok_chat_detect(tmpl.ptr, tmpl.len);
        if (!*family) {
            fprintf(stderr, "gguf-run: %s: tokenizer.chat_template is not a format gguf-run recognizes", o->model);
            quote_start(&tmpl);
            fprintf(stderr, ": choose one with --chat-template NAME (%s)\n", tok_chat_families());
            return 2;
        }
    }
    tok_error e;
    if (tok_chat_format(*family, o->prompt, strlen(o->prompt), text, &e)) {
        fprintf(stderr, "gguf-run: %s: %s\n", o->model, e.message);
        return 2;
    }
    return 0;
}
