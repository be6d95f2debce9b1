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

/* The template's first code-path issue into *out; false when it has none. */
static bool first_code_issue(const gguf_str *t, tok_template_issue *out)
{
    enum { MAX = 64 };
    tok_template_issue *all = malloc(MAX * sizeof *all);
    if (!all)
        return false;
    const size_t n = tok_template_scan(t->ptr, (size_t)t->len, all, MAX);
    bool found = false;
    for (size_t i = 0; i < n && i < MAX && !found; i++)
        if (all[i].severity == TOK_TEMPLATE_CODE) {
            *out = all[i];
            found = true;
        }
    free(all);
    return found;
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
        /* a template that reaches the renderer's internals is no evidence of a format: its markers may be bait */
        tok_template_issue issue;
        if (first_code_issue(&tmpl, &issue)) {
            fprintf(stderr, "gguf-run: %s: tokenizer.chat_template line %d: %s: the template reaches the "
                            "renderer's internals (%s; gguf-verify lists all): gguf-run renders no template, but "
                            "takes no format from this one; choose one with --chat-template NAME (%s)\n",
                    o->model, issue.line, issue.excerpt, issue.code, tok_chat_families());
            return 1;
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
