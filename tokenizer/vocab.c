/*
 * The vocabulary from tokenizer.ggml.* metadata, with llama.cpp's defaults
 * (src/llama-vocab.cpp, llama_vocab::impl::load): SentencePiece ("llama")
 * has BOS 1, EOS 2, UNK 0, adds BOS and a leading space; byte-level BPE
 * ("gpt2") adds no BOS unless the file or its pre-tokenizer says so.
 */
#include "internal.h"
#include "vocab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool key_bool(const gguf_file *f, const char *key, bool dflt)
{
    bool b;
    return gguf_get_bool(f, key, &b, NULL) == GGUF_OK ? b : dflt;
}

/* A special token's id, or the default when the key is absent; -1 ("none") for an id that is not a token
 * of this vocabulary, the default included (SentencePiece's EOS 2 in a vocabulary of two tokens). */
/* The ids llama.cpp starts from before it reads a special-token key (llama_vocab::impl::load): SentencePiece
 * bos 1, eos 2, unk 0; byte-level BPE bos and eos 11; the rest, and all of gemma4's, none. A key whose id is past the vocabulary
 * leaves that default in place ("bad special token ... using default id"), and a default past the vocabulary
 * is none. */
typedef struct special_default {
    const char *key;
    int32_t spm, bpe;
} special_default;

static const special_default special_defaults[] = {
    { "tokenizer.ggml.bos_token_id", 1, 11 },      { "tokenizer.ggml.eos_token_id", 2, 11 },
    { "tokenizer.ggml.unknown_token_id", 0, -1 },  { "tokenizer.ggml.eot_token_id", -1, -1 },
    { "tokenizer.ggml.eom_token_id", -1, -1 },     { "tokenizer.ggml.seperator_token_id", -1, -1 },
    { "tokenizer.ggml.padding_token_id", -1, -1 },
};

int32_t tok_special_default(const char *tokenizer_model, const char *key, int32_t n_vocab)
{
    for (size_t i = 0; i < sizeof special_defaults / sizeof *special_defaults; i++)
        if (!strcmp(special_defaults[i].key, key)) {
            const int32_t id = strcmp(tokenizer_model, "llama") == 0  ? special_defaults[i].spm
                               : strcmp(tokenizer_model, "gpt2") == 0 ? special_defaults[i].bpe
                                                                       : -1; /* gemma4: none */
            return id < n_vocab ? id : -1;
        }
    return -1;
}

/* A special token's id: the key's when it names a token; llama.cpp's default past the vocabulary; dflt when
 * absent (for byte-level BPE we keep "none" where llama.cpp would pick 11, a token a BPE file's own keys
 * never name). Negative values mean none. */
static int32_t key_id(const gguf_file *f, const char *model, const char *key, int32_t dflt, int32_t n)
{
    int64_t v;
    if (gguf_get_int(f, key, INT64_MIN, INT64_MAX, &v, NULL) != GGUF_OK)
        v = dflt;
    else if (v >= n)
        v = tok_special_default(model, key, n);
    return v >= 0 && v < n ? (int32_t)v : -1;
}

/* An array of n (n < 0: any number of) strings or numbers, or absent (*out NULL); the file's fault otherwise. */
static tok_status load_array(const gguf_file *f, const char *key, int32_t n, bool strings,
                                const gguf_value **out, tok_error *err)
{
    const gguf_kv *kv = gguf_find_kv(f, key);
    *out = NULL;
    if (!kv)
        return TOK_OK;
    const gguf_value *a = &kv->value;
    bool ok = a->type == GGUF_VT_ARRAY && (strings ? a->elem_type == GGUF_VT_STRING : a->elem_type != GGUF_VT_STRING &&
                                                                                      a->elem_type != GGUF_VT_ARRAY);
    if (!ok) {
        char found[48];
        if (a->type == GGUF_VT_ARRAY)
            snprintf(found, sizeof found, "an array of %s", gguf_value_type_name(a->elem_type));
        else
            snprintf(found, sizeof found, "a single %s", gguf_value_type_name(a->type));
        return tok_fail(err, TOK_E_MALFORMED, kv->offset, key, "key '%s' should be an array of %s, found %s",
                           key, strings ? "strings" : "numbers", found);
    }
    if (n >= 0 && a->count != (uint64_t)n)
        return tok_fail(err, TOK_E_MALFORMED, kv->offset, key,
                           "key '%s' has %llu elements where tokenizer.ggml.tokens has %d: one per token expected",
                           key, (unsigned long long)a->count, n);
    *out = a;
    return TOK_OK;
}

void tok_vocab_free(tok_vocab *v)
{
    if (!v)
        return;
    strmap_free(&v->by_text);
    strmap_free(&v->merge_rank);
    pretok_free(v->pretok);
    free(v->score);
    free(v->type);
    free(v->eog);
    free(v->special);
    free(v->plamo_entries);
    free(v->plamo_rev);
    free(v);
}

/* The texts llama.cpp makes end-of-generation tokens whatever their type (llama_vocab::impl::load, "maintain a
 * list of tokens that cause end-of-generation", as vendored by llama-cpp-python 0.3.36). */
bool tok_is_eog_text(const char *text, size_t len)
{
    static const char *const names[] = {
        "<|eot_id|>", "<|im_end|>", "<|end|>", "<|return|>", "<|call|>", "<|flush|>", "<|calls|>",
        "<end_of_turn>", "<|endoftext|>", "</s>", "<|eom_id|>", "<EOT>", "_<EOT>", "[EOT]", "[EOS]",
        "<|end_of_text|>", "<end_of_utterance>", "<eos>", "<turn|>", "<|tool_response>",
        "<\uff5cend\u2581of\u2581sentence\uff5c>" /* DeepSeek */, "[e~[",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (len == strlen(names[i]) && !memcmp(text, names[i], len))
            return true;
    return false;
}

tok_status tok_vocab_load(const gguf_file *f, tok_vocab **out, tok_error *err)
{
    *out = NULL;
    gguf_str model;
    gguf_error ge;
    if (gguf_get_str(f, "tokenizer.ggml.model", &model, &ge) != GGUF_OK)
        return tok_fail(err, TOK_E_MALFORMED, ge.offset, "tokenizer.ggml.model",
                           "%s: the file has no vocabulary to tokenize with", ge.message);
    tok_vocab *v = calloc(1, sizeof *v);
    if (!v)
        return tok_fail(err, TOK_E_NOMEM, 0, "", "out of memory");
    tok_status s = TOK_OK;
    static const struct {
        const char *name;
        vocab_kind kind;
    } models[] = { { "llama", VOCAB_SPM }, { "gpt2", VOCAB_BPE }, { "gemma4", VOCAB_BPE },
                   { "plamo2", VOCAB_PLAMO2 } };
    size_t mi = 0;
    while (mi < sizeof models / sizeof models[0] &&
           !(model.len == strlen(models[mi].name) && !memcmp(model.ptr, models[mi].name, model.len)))
        mi++;
    if (mi < sizeof models / sizeof models[0]) {
        v->kind = models[mi].kind;
        v->model = models[mi].name;
    } else {
        uint64_t at = gguf_find_kv(f, "tokenizer.ggml.model")->offset;
        s = gguf_is_identifier(model.ptr, model.len)
                ? tok_fail(err, TOK_E_UNSUPPORTED, at, "tokenizer.ggml.model",
                              "tokenizer '%.*s' is not supported (llama = SentencePiece, gpt2 = byte-level BPE, "
                              "gemma4 = SentencePiece-style BPE, plamo2 = PLaMo's are)",
                              (int)model.len, model.ptr)
                : tok_fail(err, TOK_E_MALFORMED, at, "tokenizer.ggml.model",
                              "tokenizer.ggml.model '%.*s' is not a tokenizer's name (llama = SentencePiece, gpt2 = "
                              "byte-level BPE, gemma4 = SentencePiece-style BPE, plamo2 = PLaMo's are)",
                              (int)(model.len < 64 ? model.len : 64),
                              model.ptr);
        goto fail;
    }
    const gguf_value *tokens, *scores, *types, *merges;
    if ((s = load_array(f, "tokenizer.ggml.tokens", -1, true, &tokens, err)))
        goto fail;
    if (!tokens) {
        s = tok_fail(err, TOK_E_MALFORMED, 0, "tokenizer.ggml.tokens",
                        "key 'tokenizer.ggml.tokens' is not in the file: the vocabulary has no tokens");
        goto fail;
    }
    if (tokens->count == 0 || tokens->count > INT32_MAX) {
        s = tok_fail(err, TOK_E_MALFORMED, gguf_find_kv(f, "tokenizer.ggml.tokens")->offset,
                        "tokenizer.ggml.tokens", "key 'tokenizer.ggml.tokens' holds %llu tokens (1 to %d expected)",
                        (unsigned long long)tokens->count, INT32_MAX);
        goto fail;
    }
    v->n = (int32_t)tokens->count;
    v->text = tokens->v.strs;
    if ((s = load_array(f, "tokenizer.ggml.scores", v->n, false, &scores, err)) ||
        (s = load_array(f, "tokenizer.ggml.token_type", v->n, false, &types, err)) ||
        (s = load_array(f, "tokenizer.ggml.merges", -1, true, &merges, err)))
        goto fail;
    v->score = calloc((size_t)v->n, sizeof *v->score);
    v->type = malloc((size_t)v->n);
    v->eog = calloc((size_t)v->n, 1);
    if (!v->score || !v->type || !v->eog || !strmap_init(&v->by_text, (size_t)v->n) ||
        (merges && !strmap_init(&v->merge_rank, merges->count))) {
        s = tok_fail(err, TOK_E_NOMEM, 0, "", "out of memory");
        goto fail;
    }
    for (int32_t i = 0; i < v->n; i++) {
        gguf_value x;
        v->score[i] = scores && gguf_array_scalar(scores, (uint64_t)i, &x) == GGUF_OK
                          ? (float)(x.type == GGUF_VT_FLOAT32 || x.type == GGUF_VT_FLOAT64 ? x.v.f64 : (double)x.v.i64)
                          : 0.0f;
        int64_t t = TOK_TYPE_NORMAL;
        if (types && gguf_array_scalar(types, (uint64_t)i, &x) == GGUF_OK)
            t = x.v.i64;
        v->type[i] = t >= 0 && t <= TOK_TYPE_BYTE ? (uint8_t)t : TOK_TYPE_UNDEFINED;
        const int32_t twice = strmap_get(&v->by_text, v->text[i].ptr, v->text[i].len);
        if (twice >= 0) { /* llama.cpp's loader asserts one id per text (id_to_token and token_to_id the same size) */
            s = tok_fail(err, TOK_E_MALFORMED, gguf_find_kv(f, "tokenizer.ggml.tokens")->offset,
                         "tokenizer.ggml.tokens",
                         "tokens %d and %d are both '%.*s': llama.cpp's loader stops on an assertion (one id per "
                         "text) and loads no model with this vocabulary", twice, i,
                         (int)(v->text[i].len < 48 ? v->text[i].len : 48), v->text[i].ptr);
            goto fail;
        }
        strmap_put(&v->by_text, v->text[i].ptr, v->text[i].len, i);
    }
    for (uint64_t i = 0; merges && i < merges->count; i++)
        strmap_put(&v->merge_rank, merges->v.strs[i].ptr, merges->v.strs[i].len, (int32_t)i);

    bool spm = v->kind == VOCAB_SPM, plamo = v->kind == VOCAB_PLAMO2;
    const char *tm = tok_vocab_model(v);
    /* llama.cpp's defaults: SentencePiece's <s>, </s>, <unk>; PLaMo's <|plamo:bos|>, <|plamo:eos|>, <|plamo:unk|> */
    v->bos = key_id(f, tm, "tokenizer.ggml.bos_token_id", spm || plamo ? 1 : -1, v->n);
    v->eos = key_id(f, tm, "tokenizer.ggml.eos_token_id", spm || plamo ? 2 : -1, v->n);
    v->unk = key_id(f, tm, "tokenizer.ggml.unknown_token_id", spm || plamo ? 0 : -1, v->n);
    v->eot = key_id(f, tm, "tokenizer.ggml.eot_token_id", -1, v->n);
    v->eom = key_id(f, tm, "tokenizer.ggml.eom_token_id", -1, v->n);
    gguf_str pre = { "default", 7 };
    if (gguf_get_str(f, "tokenizer.ggml.pre", &pre, NULL) != GGUF_OK)
        pre = (gguf_str){ "default", 7 };
    else
        v->pre_offset = gguf_find_kv(f, "tokenizer.ggml.pre")->offset;
    if (!spm && !gguf_is_identifier(pre.ptr, pre.len)) {
        s = tok_fail(err, TOK_E_MALFORMED, v->pre_offset, "tokenizer.ggml.pre",
                        "tokenizer.ggml.pre '%.*s' is not a pre-tokenizer's name", (int)(pre.len < 64 ? pre.len : 64),
                        pre.ptr);
        goto fail;
    }
    snprintf(v->pre, sizeof v->pre, "%.*s", (int)(pre.len < 31 ? pre.len : 31), pre.ptr);
    if (!strcmp(v->model, "gemma4")) /* llama.cpp's loader: the gemma4 tokenizer's pre-tokenizer, whatever the key */
        snprintf(v->pre, sizeof v->pre, "gemma4");
    v->ignore_merges = !spm && pretok_ignores_merges(v->pre);
    v->spm_style = !spm && pretok_spm_style(v->pre);
    v->add_bos = key_bool(f, "tokenizer.ggml.add_bos_token", spm || pretok_adds_bos(v->pre));
    v->add_bos |= v->spm_style; /* llama.cpp's loader turns it on for Gemma 4 whatever the key says */
    v->add_eos = key_bool(f, "tokenizer.ggml.add_eos_token", false);
    v->add_space_prefix = key_bool(f, "tokenizer.ggml.add_space_prefix", spm);
    if ((v->add_bos && v->bos < 0) || plamo) /* llama.cpp's plamo2 tokenizing adds no BOS, whatever the key says */
        v->add_bos = false;

    vocab_apply_llama_rules(v, f);
    v->n_real = 0;
    for (int32_t i = 0; i < v->n; i++) {
        if (v->type[i] != TOK_TYPE_UNUSED)
            v->n_real = i + 1;
    }
    for (int b = 0; b < 256; b++) {
        char hex[8];
        snprintf(hex, sizeof hex, "<0x%02X>", b);
        v->byte_token[b] = strmap_get(&v->by_text, hex, 6);
    }
    if (!special_tokens_index(v)) {
        s = tok_fail(err, TOK_E_NOMEM, 0, "", "out of memory");
        goto fail;
    }
    if (plamo && (s = plamo2_index(v, gguf_find_kv(f, "tokenizer.ggml.tokens")->offset, err)))
        goto fail;
    if (v->kind == VOCAB_BPE) {
        bpe_byte_tables(v->byte_cp, v->cp_byte);
        if ((s = pretok_create(v, err)))
            goto fail;
    }
    *out = v;
    return TOK_OK;
fail:
    tok_vocab_free(v);
    return s;
}

int32_t tok_vocab_size(const tok_vocab *v) { return v->n; }
int32_t tok_vocab_id_of(const tok_vocab *v, const char *text, size_t len) { return strmap_get(&v->by_text, text, len); }
const char *tok_vocab_model(const tok_vocab *v) { return v->model; }
const char *tok_vocab_pre(const tok_vocab *v) { return v->kind == VOCAB_SPM ? "spm" : v->pre; }
int32_t tok_vocab_bos(const tok_vocab *v) { return v->bos; }
int32_t tok_vocab_eos(const tok_vocab *v) { return v->eos; }
bool tok_vocab_add_bos(const tok_vocab *v) { return v->add_bos; }
bool tok_vocab_adds_space_prefix(const tok_vocab *v) { return v->kind == VOCAB_SPM && v->add_space_prefix; }
int32_t tok_vocab_n_real(const tok_vocab *v) { return v->n_real; }

bool tok_vocab_is_eog(const tok_vocab *v, int32_t id)
{
    return id >= 0 && id < v->n && v->eog[id];
}

tok_type tok_vocab_type(const tok_vocab *v, int32_t id)
{
    return id >= 0 && id < v->n ? (tok_type)v->type[id] : TOK_TYPE_UNUSED;
}

gguf_str tok_vocab_text(const tok_vocab *v, int32_t id)
{
    return id >= 0 && id < v->n ? v->text[id] : (gguf_str){ NULL, 0 };
}

bool tok_out_push(tok_out *o, int32_t id)
{
    if (!gguf_reserve((void **)&o->ids, &o->cap, o->n + 1, sizeof *o->ids))
        return false;
    o->ids[o->n++] = id;
    return true;
}

tok_status tok_tokenize(const tok_vocab *v, const char *text, size_t len, bool add_special, bool parse_special,
                              int32_t **out, size_t *n_out, tok_error *err)
{
    tok_out o = { 0 };
    text_frag *frags = NULL;
    size_t n_frags = 0;
    bool ok = special_partition(v, text, len, parse_special, &frags, &n_frags);
    if (ok && add_special && v->add_bos)
        ok = tok_out_push(&o, v->bos);
    bool prev_special = true; /* SentencePiece: a space before the first piece and after each special token */
    for (size_t i = 0; ok && i < n_frags; i++) {
        const text_frag *f = &frags[i];
        if (f->id >= 0) {
            ok = tok_out_push(&o, f->id);
            prev_special = true;
            continue;
        }
        ok = v->kind == VOCAB_SPM      ? spm_tokenize(v, text + f->off, f->len, v->add_space_prefix && prev_special, &o)
             : v->kind == VOCAB_PLAMO2 ? plamo2_tokenize(v, text + f->off, f->len, &o)
                                       : bpe_tokenize(v, text + f->off, f->len, &o);
        prev_special = false;
    }
    if (ok && add_special && v->add_eos && v->eos >= 0)
        ok = tok_out_push(&o, v->eos);
    free(frags);
    if (!ok) {
        free(o.ids);
        return tok_fail(err, TOK_E_NOMEM, 0, "", "out of memory while tokenizing");
    }
    *out = o.ids ? o.ids : malloc(sizeof(int32_t));
    *n_out = o.n;
    return TOK_OK;
}
