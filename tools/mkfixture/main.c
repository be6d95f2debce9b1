/* gguf-mkfixture OUT.gguf [--layers N] [--embd N] [--vocab N] [--version 2|3]
 * Writes the small fixture model (our own writer) used by the demo and tests. */
#include "fixture_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    fixture_opts o = fixture_default_opts();
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (i + 1 < argc && strcmp(a, "--layers") == 0)
            o.n_layer = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (i + 1 < argc && strcmp(a, "--embd") == 0)
            o.n_embd = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (i + 1 < argc && strcmp(a, "--vocab") == 0)
            o.n_vocab = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (i + 1 < argc && strcmp(a, "--version") == 0)
            o.version = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (a[0] != '-' && !out)
            out = a;
        else {
            fprintf(stderr, "usage: gguf-mkfixture OUT.gguf [--layers N] [--embd N] [--vocab N] [--version 2|3]\n");
            return 2;
        }
    }
    if (!out) {
        fprintf(stderr, "usage: gguf-mkfixture OUT.gguf [--layers N] [--embd N] [--vocab N] [--version 2|3]\n");
        return 2;
    }
    gguf_error err = { 0 };
    gguf_status s = fixture_write_file(out, &o, &err);
    if (s != GGUF_OK) {
        fprintf(stderr, "gguf-mkfixture: %s: %s\n", out, err.message[0] ? err.message : gguf_status_name(s));
        return 2;
    }
    return 0;
}
