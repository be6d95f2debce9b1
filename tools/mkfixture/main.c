/* gguf-mkfixture OUT.gguf [--arch NAME] [--layers N] [--embd N] [--ff N] [--vocab N] [--version 2|3] [--f16-output]
 * Writes the small fixture model (our own writer) used by the demo and tests, in the shape of any
 * architecture model/arch.c describes (llama by default); --f16-output writes output.weight in F16 rather
 * than Q8_0 (a source a quantizer takes). */
#include "fixture_model.h"
#include "model.h"

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
        else if (i + 1 < argc && strcmp(a, "--ff") == 0)
            o.n_ff = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (strcmp(a, "--f16-output") == 0)
            o.f16_output = true;
        else if (i + 1 < argc && strcmp(a, "--arch") == 0)
            o.arch = argv[++i];
        else if (i + 1 < argc && strcmp(a, "--vocab") == 0)
            o.n_vocab = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (i + 1 < argc && strcmp(a, "--version") == 0)
            o.version = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (a[0] != '-' && !out)
            out = a;
        else {
            fprintf(stderr, "usage: gguf-mkfixture OUT.gguf [--arch NAME] [--layers N] [--embd N] [--ff N] [--vocab N] "
                            "[--version 2|3] [--f16-output]\n");
            return 2;
        }
    }
    if (!out) {
        fprintf(stderr, "usage: gguf-mkfixture OUT.gguf [--arch NAME] [--layers N] [--embd N] [--ff N] [--vocab N] "
                        "[--version 2|3] [--f16-output]\n");
        return 2;
    }
    if (o.arch && !model_arch_find(o.arch, strlen(o.arch))) {
        fprintf(stderr, "gguf-mkfixture: architecture '%s' is not one model/arch.c describes (%s)\n", o.arch,
                model_arch_names());
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
