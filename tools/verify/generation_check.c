/* The metadata that makes a good model print gibberish or never stop, read the way llama.cpp's vocabulary
 * loader reads it (src/llama-vocab.cpp, llama_vocab::impl::load): a byte-level BPE file without its
 * pre-tokenizer, special-token ids past the vocabulary (llama.cpp silently uses a default instead), an end of
 * generation that is an ordinary word, a chat template whose end-of-turn text is not a token or not one the
 * metadata names, or that llama.cpp's built-in detection does not know, BOS from both the template and the
 * flag, a family trained with BOS told not to add it, an instruct model without its template. Each
 * finding says what llama.cpp does with the file and the gguf-py command that fixes it. What llama.cpp's loader
 * refuses outright is engine_check.c's (the tokenizer refuses it the same way). */
#include "tokenizer.h"
#include "verify.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define FSET AUDIT_FSET

/* Architectures trained with BOS at the start of every sequence, whose output degrades into repetition without
 * it (llama.cpp's gemma conversions write add_bos_token true; Gemma's model cards say the same). */
static const char *const needs_bos[] = { "gemma", "gemma2", "gemma3", "gemma3n", "gemma-embedding" };

/* The special-token keys llama.cpp reads, with their gguf-new-metadata --special-token names. */
static const struct {
    const char *key, *name;
    bool ends_generation;
} special_keys[] = {
    { "tokenizer.ggml.bos_token_id", "bos", false },     { "tokenizer.ggml.eos_token_id", "eos", true },
    { "tokenizer.ggml.unknown_token_id", "unk", false }, { "tokenizer.ggml.eot_token_id", "eot", true },
    { "tokenizer.ggml.eom_token_id", "eom", true },      { "tokenizer.ggml.seperator_token_id", "sep", false },
    { "tokenizer.ggml.padding_token_id", "pad", false },
};

/* A token's text for a message: printable ASCII, quoted, cut short. */
static void token_text(const tok_vocab *v, int32_t id, char *out, size_t cap)
{
    if (id < 0) {
        snprintf(out, cap, "none");
        return;
    }
    const gguf_str t = tok_vocab_text(v, id);
    size_t o = 0;
    out[o++] = '\'';
    for (uint64_t i = 0; i < t.len && o + 5 < cap && i < 40; i++) {
        const unsigned char c = (unsigned char)t.ptr[i];
        o += (size_t)snprintf(out + o, cap - o, c >= 0x20 && c < 0x7f ? "%c" : "\\x%02x", c);
    }
    snprintf(out + o, cap - o, "'");
}

static bool string_key(const gguf_file *f, const char *key, gguf_str *out)
{
    return gguf_get_str(f, key, out, NULL) == GGUF_OK;
}

static void missing_pre_tokenizer(verify_result *r, const tok_vocab *v)
{
    gguf_str s;
    if (strcmp(tok_vocab_model(v), "gpt2") != 0 || string_key(r->f, "tokenizer.ggml.pre", &s))
        return;
    audit_finding *x = audit_findings_add(&r->integrity, AUDIT_WARNING, "pre-tokenizer-missing", "tokenizer.ggml.pre");
    if (!x)
        return;
    FSET(x->measured, "a byte-level BPE vocabulary without tokenizer.ggml.pre");
    FSET(x->expected, "the pre-tokenizer the model was trained with (convert_hf_to_gguf.py writes it)");
    FSET(x->meaning, "llama.cpp and gguf-run fall back to 'default' (\"GENERATION QUALITY WILL BE DEGRADED\"): text "
                     "is split unlike in training. Fix: gguf-new-metadata IN.gguf OUT.gguf --pre-tokenizer NAME "
                     "(llama-bpe, qwen2, smollm, ...: the name llama.cpp's converter gives this tokenizer)");
}

static void special_ids(verify_result *r, const tok_vocab *v)
{
    const int32_t n = tok_vocab_size(v);
    for (size_t k = 0; k < sizeof special_keys / sizeof *special_keys; k++) {
        const gguf_kv *kv = gguf_find_kv(r->f, special_keys[k].key);
        int64_t id;
        if (!kv || gguf_get_int(r->f, special_keys[k].key, INT64_MIN, INT64_MAX, &id, NULL) != GGUF_OK)
            continue;
        char text[64];
        audit_finding *x;
        if (id >= n) {
            /* llama.cpp's default in its place: another token (an error: the file says one thing, the engine
             * does another), or none (only a warning, and nothing for 0xFFFFFFFF, converters' "none") */
            const int32_t used = tok_special_default(tok_vocab_model(v), special_keys[k].key, n);
            if (used < 0 && id == UINT32_MAX)
                continue;
            token_text(v, used, text, sizeof text);
            if (!(x = audit_findings_add(&r->integrity, used >= 0 ? AUDIT_ERROR : AUDIT_WARNING,
                                         "special-token-out-of-range", special_keys[k].key)))
                return;
            FSET(x->measured, "%s = %lld, past the vocabulary of %d tokens (byte %llu)", special_keys[k].key,
                 (long long)id, n, (unsigned long long)kv->offset);
            FSET(x->expected, "an id below %d", n);
            if (used >= 0)
                FSET(x->meaning, "llama.cpp logs \"bad special token\" and silently uses id %d (%s) instead%s. Fix: "
                                 "gguf-new-metadata IN.gguf OUT.gguf --special-token %s \"<the token's text>\"", used,
                     text, special_keys[k].ends_generation ? ": generation stops on that token, or never" : "",
                     special_keys[k].name);
            else
                FSET(x->meaning, "llama.cpp logs \"bad special token\" and uses none%s. Fix: gguf-new-metadata "
                                 "IN.gguf OUT.gguf --special-token %s \"<the token's text>\"",
                     special_keys[k].ends_generation ? ": generation does not stop there" : "", special_keys[k].name);
            continue;
        }
        /* an end of generation that is an ordinary word: every time the model writes it, the reply ends */
        if (id < 0 || !special_keys[k].ends_generation || tok_vocab_type(v, (int32_t)id) != TOK_TYPE_NORMAL)
            continue;
        const gguf_str t = tok_vocab_text(v, (int32_t)id);
        if (tok_is_eog_text(t.ptr, (size_t)t.len)) /* llama.cpp makes those control tokens whatever their type */
            continue;
        token_text(v, (int32_t)id, text, sizeof text);
        if (!(x = audit_findings_add(&r->integrity, AUDIT_WARNING, "special-token-ordinary", special_keys[k].key)))
            return;
        FSET(x->measured, "%s = %lld is %s, an ordinary token (type normal)", special_keys[k].key, (long long)id, text);
        FSET(x->expected, "a control token (</s>, <|im_end|>, <end_of_turn>, ...)");
        FSET(x->meaning, "generation ends wherever the model writes %s, and never at the real end of a reply. Fix: "
                         "gguf-new-metadata IN.gguf OUT.gguf --special-token %s \"<the real end token>\"", text,
             special_keys[k].name);
    }
}

/* The chat template's end-of-turn text against the vocabulary and the keys that end generation. */
static void end_of_turn(verify_result *r, const tok_vocab *v)
{
    gguf_str tmpl;
    if (!string_key(r->f, "tokenizer.chat_template", &tmpl))
        return;
    const char *family = tok_chat_detect(tmpl.ptr, (size_t)tmpl.len), *eot = family ? tok_chat_end_of_turn(family) : NULL;
    audit_finding *x;
    if (!family && (x = audit_findings_add(&r->integrity, AUDIT_INFO, "template-unrecognised", "tokenizer.chat_template"))) {
        FSET(x->measured, "none of the families llama.cpp's built-in detection knows (llama_chat_detect_template)");
        FSET(x->expected, "a template llama_chat_apply_template can format");
        FSET(x->meaning, "llama-cli and llama-server render it with their Jinja runtime; llama_chat_apply_template "
                         "(the C API, simple chat programs, bindings) cannot, and gguf-run --chat needs "
                         "--chat-template NAME");
    }
    if (!eot)
        return;
    const int32_t id = tok_vocab_id_of(v, eot, strlen(eot));
    if (id < 0) {
        if (!(x = audit_findings_add(&r->integrity, AUDIT_WARNING, "end-of-turn-missing", "tokenizer.chat_template")))
            return;
        FSET(x->measured, "the template (%s) ends each reply with '%s', which is not a token of this vocabulary",
             family, eot);
        FSET(x->expected, "the end-of-turn text as one token that ends generation");
        FSET(x->meaning, "a model that writes it as several pieces is not stopped at the end of its turn: it writes "
                         "the next turn itself. The template or the vocabulary is another model's");
        return;
    }
    int64_t named;
    for (size_t k = 0; k < sizeof special_keys / sizeof *special_keys; k++)
        if (special_keys[k].ends_generation &&
            gguf_get_int(r->f, special_keys[k].key, 0, INT32_MAX, &named, NULL) == GGUF_OK && named == id)
            return;
    char eos[64];
    token_text(v, tok_vocab_eos(v), eos, sizeof eos);
    if (!(x = audit_findings_add(&r->integrity, AUDIT_INFO, "end-of-turn-by-text", "tokenizer.chat_template")))
        return;
    FSET(x->measured, "the template (%s) ends each reply with '%s' (id %d); no eos, eot or eom key names it (eos is "
                      "%s)", family, eot, id, eos);
    FSET(x->expected, "eos_token_id or eot_token_id naming the end-of-turn token");
    FSET(x->meaning, "llama.cpp and gguf-run stop there by recognising its text; an engine that stops only at the "
                     "EOS id writes past every reply. To name it: gguf-new-metadata IN.gguf OUT.gguf "
                     "--special-token eot \"%s\"", eot);
}

/* A template that writes BOS itself, in a file that asks for BOS too. */
static void bos_twice(verify_result *r, const tok_vocab *v)
{
    gguf_str t;
    if (!tok_vocab_add_bos(v) || !string_key(r->f, "tokenizer.chat_template", &t))
        return;
    size_t i = 0;
    while (i < t.len && (isspace((unsigned char)t.ptr[i]) || t.ptr[i] == '{' || t.ptr[i] == '-' || t.ptr[i] == '%'))
        i++;
    static const char lead[] = "bos_token";
    if (t.len - i < sizeof lead - 1 || memcmp(t.ptr + i, lead, sizeof lead - 1) != 0)
        return;
    audit_finding *x = audit_findings_add(&r->integrity, AUDIT_INFO, "bos-twice", "tokenizer.chat_template");
    if (!x)
        return;
    FSET(x->measured, "the template starts with bos_token and tokenizer.ggml.add_bos_token asks for BOS too");
    FSET(x->expected, "one BOS at the start of a chat prompt");
    FSET(x->meaning, "llama.cpp strips the rendered BOS before it tokenizes (common/chat.cpp); an engine that "
                     "renders the template and tokenizes with special tokens on starts with two BOS, which some "
                     "models answer worse");
}

static void bos_off(verify_result *r, const tok_vocab *v)
{
    gguf_str arch;
    if (!string_key(r->f, "general.architecture", &arch) || tok_vocab_add_bos(v))
        return;
    bool needs = false;
    for (size_t i = 0; i < sizeof needs_bos / sizeof *needs_bos && !needs; i++)
        needs = arch.len == strlen(needs_bos[i]) && memcmp(arch.ptr, needs_bos[i], arch.len) == 0;
    if (!needs)
        return;
    audit_finding *x = audit_findings_add(&r->integrity, AUDIT_ERROR, "bos-off", "tokenizer.ggml.add_bos_token");
    if (!x)
        return;
    FSET(x->measured, "%s", tok_vocab_bos(v) < 0 ? "no BOS token" : "tokenizer.ggml.add_bos_token is false");
    FSET(x->expected, "BOS added: %.*s models are trained with it at the start of every sequence", (int)arch.len,
         arch.ptr);
    FSET(x->meaning, "llama.cpp and gguf-run add none, and the model repeats itself or writes gibberish. Fix: "
                     "gguf-set-metadata FILE.gguf tokenizer.ggml.add_bos_token 1 (gguf-py; edits in place)");
}

/* Whether s (len bytes) names an instruction-tuned model, as general.name and general.finetune usually do. */
static bool names_instruct(const char *s, size_t len)
{
    static const char *const marks[] = { "instruct", "chat", "-it" };
    char low[256];
    size_t n = len < sizeof low - 1 ? len : sizeof low - 1;
    for (size_t i = 0; i < n; i++)
        low[i] = (char)tolower((unsigned char)s[i]);
    low[n] = 0;
    for (size_t i = 0; i < sizeof marks / sizeof *marks; i++) {
        const char *m = strstr(low, marks[i]);
        const size_t ml = strlen(marks[i]);
        if (m && (m[ml] == 0 || !isalnum((unsigned char)m[ml]))) /* "-it" not "-itself"; "chat" not "chatter" */
            return true;
    }
    return false;
}

static void instruct_without_template(verify_result *r)
{
    gguf_str s;
    if (string_key(r->f, "tokenizer.chat_template", &s))
        return;
    static const char *const keys[] = { "general.finetune", "general.name" };
    for (size_t i = 0; i < 2; i++) {
        if (!string_key(r->f, keys[i], &s) || !names_instruct(s.ptr, (size_t)s.len))
            continue;
        audit_finding *x = audit_findings_add(&r->integrity, AUDIT_WARNING, "no-chat-template", keys[i]);
        if (!x)
            return;
        FSET(x->measured, "%s '%.*s' names an instruction-tuned model; tokenizer.chat_template is absent", keys[i],
             (int)(s.len < 80 ? s.len : 80), s.ptr);
        FSET(x->expected, "the chat template the model was tuned with");
        FSET(x->meaning, "chat front ends fall back to a default format (llama.cpp: chatml) the model was not "
                         "trained on, and replies wander or never end. Fix: gguf-new-metadata IN.gguf OUT.gguf "
                         "--chat-template-config tokenizer_config.json (from the model's repository)");
        return;
    }
}

/* The chat template read for what it could do to an engine that renders it (tokenizer/template_scan.c). */
static void template_safety(verify_result *r)
{
    gguf_str t;
    if (!string_key(r->f, "tokenizer.chat_template", &t))
        return;
    enum { SHOWN = 12 };
    tok_template_issue found[SHOWN];
    const size_t n = tok_template_scan(t.ptr, (size_t)t.len, found, SHOWN);
    static const audit_severity sev[] = { [TOK_TEMPLATE_NOTE] = AUDIT_INFO, [TOK_TEMPLATE_INJECTED] = AUDIT_WARNING,
                                          [TOK_TEMPLATE_CODE] = AUDIT_ERROR };
    for (size_t i = 0; i < n && i < SHOWN; i++) {
        const tok_template_issue *x = &found[i];
        audit_finding *f = audit_findings_add(&r->integrity, sev[x->severity], x->code, "tokenizer.chat_template");
        if (!f)
            return;
        FSET(f->measured, "line %d: %s%s", x->line, x->excerpt,
             i + 1 == SHOWN && n > SHOWN ? " (and more: the first ones are listed)" : "");
        switch (x->severity) {
        case TOK_TEMPLATE_CODE:
            FSET(f->expected, "a template of messages, roles and markers only");
            FSET(f->meaning, "an engine that renders this template with Jinja runs code through it (server-side "
                             "template injection: Python internals, gadget objects, unbounded work); do not render "
                             "it: replace it (gguf-new-metadata IN.gguf OUT.gguf --chat-template-config "
                             "tokenizer_config.json from a source you trust)");
            break;
        case TOK_TEMPLATE_INJECTED:
            FSET(f->expected, "text the messages supply, and markers");
            FSET(f->meaning, "%s", strcmp(x->code, "template-branches-on-content") == 0
                                       ? "the template decides what to render from the words of a message: it can "
                                         "change the conversation when the user writes them"
                                       : "words no message supplied are put in every conversation: the model "
                                         "follows instructions the user never wrote (compare the model's published "
                                         "template)");
            break;
        default:
            FSET(f->expected, "text the messages supply, and markers");
            FSET(f->meaning, "a default system prompt or tool instructions, added only when the conversation has "
                             "none: what trained templates do");
        }
    }
}

void verify_generation_check(verify_result *r)
{
    if (!r->f)
        return;
    template_safety(r);
    tok_vocab *v = NULL;
    tok_error te;
    if (tok_vocab_load(r->f, &v, &te) != TOK_OK) /* no vocabulary to judge: engine_check.c says why */
        return;
    missing_pre_tokenizer(r, v);
    special_ids(r, v);
    end_of_turn(r, v);
    bos_off(r, v);
    bos_twice(r, v);
    instruct_without_template(r);
    tok_vocab_free(v);
}
