/* libFuzzer target: a vocabulary and a text. The input is a little-endian u16 length L, L bytes
 * of text (cut at the input's end), then a GGUF image whose tokenizer.ggml.* keys are loaded
 * (SentencePiece, byte-level BPE with any pre-tokenizer, or PLaMo's). The text is tokenized with and
 * without special-token parsing, every token is turned back into text, and the text is also
 * read as a chat template (what tokenizer.chat_template would hold): its family detected and its
 * safety scanned. */
#include "engine.h"
#include "gguf.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static volatile size_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tok_error terr;
    if (size < 2)
        return 0;
    size_t len = (size_t)data[0] | (size_t)data[1] << 8;
    if (len > size - 2)
        len = size - 2;
    const char *text = (const char *)data + 2;
    const char *family = tok_chat_detect(text, len);
    sink += family ? 1 : 0;
    tok_template_issue issues[4];
    sink += tok_template_scan(text, len, issues, 4);
    gguf_file *f = NULL;
    gguf_error gerr;
    if (gguf_open_memory(data + 2 + len, size - 2 - len, &f, &gerr) != GGUF_OK)
        return 0;
    tok_vocab *v = NULL;
    if (tok_vocab_load(f, &v, &terr) == TOK_OK) {
        for (int special = 0; special < 2; special++) {
            int32_t *ids = NULL;
            size_t n = 0;
            if (tok_tokenize(v, text, len, special, special, &ids, &n, &terr) != TOK_OK)
                continue;
            char piece[64];
            for (size_t i = 0; i < n; i++) {
                if (ids[i] < 0 || ids[i] >= tok_vocab_size(v))
                    __builtin_trap(); /* every id the tokenizer gives must be a token */
                sink += tok_piece(v, ids[i], piece, sizeof piece);
                gguf_str t = tok_vocab_text(v, ids[i]);
                sink += t.len;
            }
            free(ids);
        }
        tok_vocab_free(v);
    }
    gguf_close(f);
    return 0;
}
