/*
 * The reference for tests/data/llama_vocab_rules.jsonl: what llama.cpp's vocabulary loader makes of each file
 * given (vocabulary only), as one JSON line a file: its name, the ids that end generation (llama_vocab_is_eog),
 * and the attribute llama.cpp gives each token as runs of one letter and a count ("N256C3": 256 normal tokens, then
 * 3 control ones; C control, U user-defined, K unknown, B byte, X unused, N normal, ? none; control first, as
 * llama.cpp's printing and tokenizing test it first). Not built by
 * the project: scripts/llama-vocab-reference.sh compiles it against a llama.cpp build outside the tree.
 */
#include "llama.h"
#include <stdio.h>
#include <string.h>

static char letter(enum llama_token_attr a)
{
    if (a & LLAMA_TOKEN_ATTR_CONTROL) return 'C';
    if (a & LLAMA_TOKEN_ATTR_USER_DEFINED) return 'U';
    if (a & LLAMA_TOKEN_ATTR_UNKNOWN) return 'K';
    if (a & LLAMA_TOKEN_ATTR_BYTE) return 'B';
    if (a & LLAMA_TOKEN_ATTR_UNUSED) return 'X';
    if (a & LLAMA_TOKEN_ATTR_NORMAL) return 'N';
    return '?';
}

int main(int argc, char **argv)
{
    llama_backend_init();
    for (int i = 1; i < argc; i++) {
        struct llama_model_params p = llama_model_default_params();
        p.vocab_only = true;
        struct llama_model *m = llama_model_load_from_file(argv[i], p);
        if (!m) { fprintf(stderr, "%s: not loaded\n", argv[i]); continue; }
        const struct llama_vocab *v = llama_model_get_vocab(m);
        const int n = llama_vocab_n_tokens(v);
        const char *base = strrchr(argv[i], '/');
        printf("{\"file\": \"%s\", \"eog\": [", base ? base + 1 : argv[i]);
        for (int t = 0, first = 1; t < n; t++)
            if (llama_vocab_is_eog(v, t)) { printf("%s%d", first ? "" : ", ", t); first = 0; }
        printf("], \"attr\": \"");
        for (int t = 0; t < n;) {
            const char c = letter(llama_vocab_get_attr(v, t));
            int run = 1;
            while (t + run < n && letter(llama_vocab_get_attr(v, t + run)) == c) run++;
            printf("%c%d", c, run);
            t += run;
        }
        printf("\"}\n");
        llama_model_free(m);
    }
    llama_backend_free();
    return 0;
}
