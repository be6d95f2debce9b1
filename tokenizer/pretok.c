/*
 * Pre-tokenizers of byte-level BPE vocabularies: the regular expressions
 * llama.cpp applies for each tokenizer.ggml.pre value (src/llama-vocab.cpp,
 * llm_tokenizer_bpe's constructor), run with PCRE2 for the Unicode classes.
 * Each expression splits every fragment the previous one left; matches and
 * the gaps between them are both kept (llama.cpp's unicode_regex_split).
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "internal.h"
#include "vocab.h"

#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#define CONTRACTIONS_CI "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])"
#define GPT2_RE "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"

/* A family of tokenizer.ggml.pre names that llama.cpp splits with the same expressions (its llm_tokenizer_bpe
 * constructor), and the defaults its loader gives those names: merges ignored where a word is itself a token (the
 * llama3 names, tekken, GLM 4.5's glm4), and BOS added unless tokenizer.ggml.add_bos_token says otherwise (the
 * llama3 names, tekken). */
enum { PRE_KIND_NAMES = 20 };

typedef struct pre_kind {
    const char *names[PRE_KIND_NAMES];
    const char *regex[6];
    bool ignore_merges, add_bos;
    /* SentencePiece-style BPE (llama.cpp's LLAMA_VOCAB_PRE_TYPE_GEMMA4): spaces become U+2581 before the split, the
     * symbols are the text's own UTF-8 (no byte-level code points), a word of line breaks alone is one token where the
     * vocabulary has it, a symbol without a token falls back to its bytes' <0xXX> tokens, and BOS is always added */
    bool spm_style;
} pre_kind;

#define LLAMA3_RE                                                                                                   \
    CONTRACTIONS_CI "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"          \
                    "\\s+(?!\\S)|\\s+"

#define QWEN2_RE                                                                                                    \
    CONTRACTIONS_CI "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"

#define KIMI_HAN                                                                                                    \
    "[\\x{4E00}-\\x{9FFF}\\x{3400}-\\x{4DBF}\\x{20000}-\\x{2A6DF}\\x{2A700}-\\x{2EBEF}\\x{F900}-\\x{FAFF}"              \
    "\\x{2F800}-\\x{2FA1F}]"

/* DeepSeek LLM's letters: the cased letters tokenizer.json's expression lists by range, as llama.cpp's
 * LLAMA_VOCAB_PRE_TYPE_DEEPSEEK_LLM carries them (src/llama-vocab.cpp), each range here as code points */
#define DEEPSEEK_LLM_LETTERS                                                                                        \
    "A-Za-z\\x{B5}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{1BA}\\x{1BC}-\\x{1BF}\\x{1C4}-\\x{293}"                 \
    "\\x{295}-\\x{2AF}\\x{370}-\\x{373}\\x{376}\\x{377}\\x{37B}-\\x{37D}\\x{37F}\\x{386}"                           \
    "\\x{388}-\\x{38A}\\x{38C}\\x{38E}-\\x{3A1}\\x{3A3}-\\x{3F5}\\x{3F7}-\\x{481}\\x{48A}-\\x{52F}"                 \
    "\\x{531}-\\x{556}\\x{10A0}-\\x{10C5}\\x{13A0}-\\x{13F5}\\x{13F8}-\\x{13FD}\\x{1C90}-\\x{1CBA}"                 \
    "\\x{1CBD}-\\x{1CBF}\\x{1D00}-\\x{1D2B}\\x{1D6B}-\\x{1D77}\\x{1D79}-\\x{1D9A}\\x{1E00}-\\x{1F15}"               \
    "\\x{1F18}-\\x{1F1D}\\x{1F20}-\\x{1F45}\\x{1F48}-\\x{1F4D}\\x{1F50}-\\x{1F57}\\x{1F59}\\x{1F5B}"                \
    "\\x{1F5D}\\x{1F5F}-\\x{1F7D}\\x{1F80}-\\x{1FB4}\\x{1FB6}-\\x{1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}"                \
    "\\x{1FC6}-\\x{1FCC}\\x{1FD0}-\\x{1FD3}\\x{1FD6}-\\x{1FDB}\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}"               \
    "\\x{1FF6}-\\x{1FFC}\\x{2102}\\x{2107}\\x{210A}-\\x{2113}\\x{2115}\\x{2119}-\\x{211D}\\x{2124}"                 \
    "\\x{2126}\\x{2128}\\x{212A}-\\x{212D}\\x{212F}-\\x{2134}\\x{2139}\\x{213C}-\\x{213F}"                          \
    "\\x{2145}-\\x{2149}\\x{214E}\\x{2183}\\x{2184}\\x{2C00}-\\x{2C7B}\\x{2C7E}-\\x{2CE4}"                          \
    "\\x{2CEB}-\\x{2CEE}\\x{2CF2}\\x{2CF3}\\x{A640}-\\x{A66D}\\x{A680}-\\x{A69B}\\x{A722}-\\x{A76F}"                \
    "\\x{A771}-\\x{A787}\\x{A78B}-\\x{A78E}\\x{AB70}-\\x{ABBF}\\x{FB00}-\\x{FB06}\\x{FB13}-\\x{FB17}"               \
    "\\x{FF21}-\\x{FF3A}\\x{FF41}-\\x{FF5A}\\x{10400}-\\x{1044F}\\x{104B0}-\\x{104D3}"                              \
    "\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}\\x{10CC0}-\\x{10CF2}\\x{118A0}-\\x{118DF}"                          \
    "\\x{1E900}-\\x{1E943}"

static const pre_kind kinds[] = {
    { { "default" },
      { "[\\p{P}\\$\\+<=>\\^~\\|]+", GPT2_RE, "\\p{N}+", "[0-9][0-9][0-9]" }, false, false, false },
    { { "gpt2", "gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "a.x-4.0", "mellum",
        "modern-bert", "exaone4", "mpt", "olmo", "jais", "trillion", "granite-docling" },
      { GPT2_RE }, false, false, false },
    { { "llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano" },
      { LLAMA3_RE }, true, true, false },
    /* llama3's expression without its defaults (cl100k's tokenizers: DBRX, Smaug; ChatGLM's) */
    { { "dbrx", "smaug-bpe", "chatglm-bpe" }, { LLAMA3_RE }, false, false, false },
    /* GLM 4.5 / 4.6 / 5 (glm4moe): llama3's expression with merges ignored, and no BOS by default */
    { { "glm4", "glm5" }, { LLAMA3_RE }, true, false, false },
    { { "qwen2", "deepseek-r1-qwen", "kormo", "f2llmv2", "stablelm2", "hunyuan", "solar-open", "megrez" },
      { QWEN2_RE }, false, false, false },
    /* Laguna's: each line apart from the runs of line breaks, then qwen2's expression over each */
    { { "laguna" }, { "[^\\n]+|[\\n]+", QWEN2_RE }, false, false, false },
    /* Qwen3.5's: qwen2's with the combining marks (\p{M}) counted as letters */
    { { "qwen35" },
      { CONTRACTIONS_CI "|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|"
        "\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" }, false, false, false },
    /* Jais 2's: llama3's words and digits by threes, and a run of spaces not followed by text cut from its start
     * into pieces of 512, 256, ... 4, then 2 or 1 (its tokenizer.json's cascade) */
    { { "jais-2" },
      { CONTRACTIONS_CI "|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
        "\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)|\\s{16}(?!\\S)|"
        "\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}" }, false, false, false },
    /* Falcon's (7B, 40B, 180B): punctuation runs apart first, then GPT-2's, then digits by threes */
    { { "falcon" }, { "[\\p{P}\\$\\+<=>\\^~\\|`]+", GPT2_RE, "[0-9][0-9][0-9]" }, false, false, false },
    /* StarCoder's: digits one by one, then GPT-2's (Granite 3's refact, Command R, SmolLM) */
    { { "smollm", "starcoder", "refact", "command-r", "codeshell", "exaone", "minerva-7b", "mellum2" },
      { "\\p{N}", GPT2_RE }, false, false, false },
    /* o200k (gpt-oss, Llama 4): a word is an optional non-letter, then "upper" letters and "lower" ones (or the
     * reverse), each class a letter that is not ASCII a-z (resp. A-Z), as llama.cpp rewrites tokenizer.json's
     * \p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M} classes for its regex engine; digits by threes; "/" ends punctuation runs */
    { { "gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2" },
      { "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+" CONTRACTIONS_CI "?|"
        "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*" CONTRACTIONS_CI "?|"
        "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" }, false, false, false },
    /* Mistral's tekken (Nemo, Pixtral's text): o200k's words without contractions, digits one by one */
    { { "tekken" },
      { "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))*((?=[\\p{L}])([^A-Z]))+|"
        "[^\\r\\n\\p{L}\\p{N}]?((?=[\\p{L}])([^a-z]))+((?=[\\p{L}])([^A-Z]))*|"
        "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" }, true, true, false },
    /* BLOOM's: every run of characters other than whitespace and . , ! ? and their CJK and Indic kin, with one
     * leading space (Poro, GPT-3 Finnish); Viking's splits the digits off one by one too */
    { { "poro-chat", "bloom", "gpt3-finnish" }, { " ?[^(\\s|.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c)]+" },
      false, false, false },
    { { "viking" }, { " ?[^(\\s|.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c)]+", "\\p{N}" }, false, false, false },
    /* Ling / Ring 2.0 (bailingmoe2), LLaDA-MoE: qwen2's expression with contractions of either case, one line break
     * at a time after spaces, as llama.cpp rewrites tokenizer.json's possessive quantifiers */
    { { "bailingmoe", "bailingmoe2", "llada-moe" },
      { "'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|"
        "\\s*[\\r\\n]|\\s+(?!\\S)|\\s+" }, false, false, false },
    /* DeepSeek-V3 / R1 (and Hunyuan's dense models, JoyAI, HY v4): digits by threes, runs of CJK ideographs, hiragana
     * and katakana (U+4E00-U+9FA5, U+3040-U+30FF), then words: a punctuation mark or symbol with the ASCII letters
     * after it, letters with their combining marks after an optional other character, punctuation and symbol runs */
    { { "deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4" },
      { "\\p{N}{1,3}", "[\\x{4E00}-\\x{9FA5}\\x{3040}-\\x{309F}\\x{30A0}-\\x{30FF}]+",
        "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+|"
        " ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" }, false, false, false },
    /* Kimi K2 (tiktoken's expression with Han runs apart, as llama.cpp's hand-written splitter runs it: a word is an
     * optional non-letter and letters that are not Han, marks not among them, then a contraction of either case;
     * Han as llama.cpp's unicode_cpt_is_han ranges it: the unified ideographs, extensions A-F, compatibility ones) */
    { { "kimi-k2" },
      { "(?:" KIMI_HAN ")+|[^\\r\\n\\p{L}\\p{N}]?(?:(?!" KIMI_HAN ")\\p{L})+(?:'[sStTmMdD]|'[rR][eE]|'[vV][eE]|'[lL][lL])?|"
        "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" }, false, false, false },
    /* DeepSeek Coder: line breaks alone, letters and punctuation each with one leading space, CJK and Hangul runs
     * (U+4E00-U+9FA5, U+0800-U+4E00, U+AC00-U+D7FF), digits one by one */
    /* Gemma 4 (tokenizer.ggml.model "gemma4", which makes its pre-tokenizer this whatever the file says), and
     * Granite's multilingual embedding models: runs of line breaks apart from the rest, BPE over the whole of each */
    { { "gemma4", "granite-embed-multi-311m" }, { "[^\\n]+|[\\n]+" }, false, true, true },
    /* DeepSeek LLM (7B, 67B) and DeepSeek-MoE: line breaks alone, then runs of those letters and of ASCII, fullwidth
     * and quotation-mark punctuation, each with one leading space, whitespace at the end, CJK and Hangul runs (as
     * DeepSeek Coder's), digit runs */
    { { "deepseek-llm" },
      { "[\\r\\n]", "\\s?[" DEEPSEEK_LLM_LETTERS "]+",
        "\\s?[!-/:-~\\x{FF01}-\\x{FF0F}\\x{FF1A}-\\x{FF5E}\\x{2018}-\\x{201F}\\x{3000}-\\x{3002}]+", "\\s+$",
        "[\\x{4E00}-\\x{9FA5}\\x{0800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+", "\\p{N}+" }, false, false, false },
    { { "deepseek-coder" },
      { "[\\r\\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", "[\\x{4E00}-\\x{9FA5}\\x{0800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+",
        "\\p{N}" }, false, false, false },
};

/* Every tokenizer.ggml.pre value llama.cpp accepts (src/llama-vocab.cpp, llama_vocab::impl::load, as vendored
 * by llama-cpp-python 0.3.36); it refuses any other ("unknown pre-tokenizer type"), so such a file is malformed,
 * while one of these we do not run is merely not supported here. */
static const char *const llama_cpp_names[] = {
    "a.x-4.0", "afmoe", "bailingmoe", "bailingmoe2", "bloom", "chameleon", "chatglm-bpe", "codeshell",
    "cohere2moe", "command-r", "dbrx", "deepseek-coder", "deepseek-llm", "deepseek-r1-qwen", "deepseek-v3",
    "default", "exaone", "exaone-moe", "exaone4", "f2llmv2", "falcon", "falcon-h1", "falcon3", "gemma4",
    "gigachat", "glm4", "glm5", "gpt-2", "gpt-4o", "gpt3-finnish", "granite-docling", "granite-embed-multi-311m",
    "granite-embed-multi-97m", "grok-2", "hunyuan", "hunyuan-dense", "hy_v4", "jais", "jais-2", "jina-de",
    "jina-es", "jina-v1-en", "jina-v2-code", "jina-v2-de", "jina-v2-es", "jina-v5-nano", "joyai-llm", "kanana2",
    "kimi-k2", "kormo", "laguna", "lfm2", "llada-moe", "llama-bpe", "llama-v3", "llama3", "llama4", "megrez",
    "mellum", "mellum2", "midm-2.0", "minerva-7b", "minicpm5", "minimax-m2", "modern-bert", "mpt", "olmo", "phi-2",
    "pixtral", "poro-chat", "qwen2", "qwen35", "refact", "roberta-bpe", "sarvam-moe", "seed-coder", "smaug-bpe",
    "smollm", "solar-open", "spark2_5", "stablelm2", "starcoder", "superbpe", "talkie", "tekken", "tiny_aya",
    "trillion", "ufakzeka", "viking", "whitespace", "youtu",
};

static bool llama_cpp_knows(const char *name)
{
    for (size_t i = 0; i < sizeof llama_cpp_names / sizeof *llama_cpp_names; i++)
        if (!strcmp(llama_cpp_names[i], name))
            return true;
    return false;
}

const char *tok_pretok_name(size_t i)
{
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (int j = 0; j < PRE_KIND_NAMES && kinds[k].names[j] && !kinds[k].spm_style; j++)
            if (llama_cpp_knows(kinds[k].names[j]) && i-- == 0)
                return kinds[k].names[j];
    return NULL;
}

typedef struct pretok {
    pcre2_code *re[6];
    int n;
} pretok;

void pretok_free(void *p)
{
    pretok *t = p;
    if (!t)
        return;
    for (int i = 0; i < t->n; i++)
        pcre2_code_free(t->re[i]);
    free(t);
}

static const pre_kind *kind_named(const char *name)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        for (int j = 0; j < PRE_KIND_NAMES && kinds[i].names[j]; j++)
            if (!strcmp(kinds[i].names[j], name))
                return &kinds[i];
    return NULL;
}

bool pretok_ignores_merges(const char *name)
{
    const pre_kind *k = kind_named(name);
    return k && k->ignore_merges;
}

bool pretok_adds_bos(const char *name)
{
    const pre_kind *k = kind_named(name);
    return k && k->add_bos;
}

bool pretok_spm_style(const char *name)
{
    const pre_kind *k = kind_named(name);
    return k && k->spm_style;
}

tok_status pretok_create(tok_vocab *v, tok_error *err)
{
    const pre_kind *k = kind_named(v->pre);
    if (!k && !llama_cpp_knows(v->pre))
        return tok_fail(err, TOK_E_MALFORMED, v->pre_offset, "tokenizer.ggml.pre",
                        "tokenizer.ggml.pre is '%s', a pre-tokenizer llama.cpp does not know: it refuses the file "
                        "(\"unknown pre-tokenizer type\"). Set the one the model was trained with: "
                        "gguf-new-metadata IN.gguf OUT.gguf --pre-tokenizer NAME (gguf-py; llama.cpp's "
                        "convert_hf_to_gguf.py names it from the tokenizer)", v->pre);
    if (!k)
        return tok_fail(err, TOK_E_UNSUPPORTED, v->pre_offset, "tokenizer.ggml.pre",
                        "pre-tokenizer '%s' is not supported here, though llama.cpp knows it (default, gpt-2, "
                        "llama3/llama-bpe, dbrx, qwen2, smollm/starcoder/refact, gpt-4o/llama4, tekken, bloom, "
                        "viking, deepseek-llm, deepseek-coder, deepseek-v3, kimi-k2 and the names llama.cpp splits as "
                        "they do are)",
                        v->pre);
    pretok *t = calloc(1, sizeof *t);
    if (!t)
        return tok_fail(err, TOK_E_NOMEM, 0, "", "out of memory");
    for (int i = 0; i < 6 && k->regex[i]; i++) {
        int code;
        PCRE2_SIZE at;
        t->re[i] = pcre2_compile((PCRE2_SPTR)k->regex[i], PCRE2_ZERO_TERMINATED,
                                 PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &code, &at, NULL);
        if (!t->re[i]) {
            char msg[256];
            pcre2_get_error_message(code, (PCRE2_UCHAR *)msg, sizeof msg);
            pretok_free(t);
            return tok_fail(err, TOK_E_MALFORMED, 0, "tokenizer.ggml.pre",
                               "pre-tokenizer regex %d of '%s' does not compile at %zu: %s", i, v->pre, (size_t)at,
                               msg);
        }
        t->n = i + 1;
    }
    v->pretok = t;
    return TOK_OK;
}

typedef struct span {
    size_t start, len;
} span;

typedef struct spans {
    span *s;
    size_t n, cap;
} spans;

static bool spans_push(spans *a, size_t start, size_t len)
{
    if (!len)
        return true;
    if (!gguf_reserve((void **)&a->s, &a->cap, a->n + 1, sizeof *a->s))
        return false;
    a->s[a->n++] = (span){ start, len };
    return true;
}

/* Splits one fragment with one expression into out. */
static bool split_one(const pcre2_code *re, pcre2_match_data *md, const char *text, span f, spans *out)
{
    const PCRE2_SPTR subj = (PCRE2_SPTR)(text + f.start);
    size_t at = 0, done = 0;
    while (at < f.len) {
        int rc = pcre2_match(re, subj, f.len, at, 0, md, NULL);
        if (rc == PCRE2_ERROR_NOMATCH)
            break;
        if (rc < 0)
            return false;
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        size_t s = ov[0], e = ov[1];
        if (e == s) {  /* an empty match: step over one character */
            at = s + 1;
            while (at < f.len && (text[f.start + at] & 0xc0) == 0x80)
                at++;
            continue;
        }
        if (!spans_push(out, f.start + done, s - done) || !spans_push(out, f.start + s, e - s))
            return false;
        done = at = e;
    }
    return spans_push(out, f.start + done, f.len - done);
}

bool pretok_split(const void *p, const char *text, size_t len, bool (*word)(void *user, size_t start, size_t len),
                  void *user)
{
    const pretok *t = p;
    spans cur = { 0 }, next = { 0 };
    pcre2_match_data *md = pcre2_match_data_create(1, NULL);
    bool ok = md && spans_push(&cur, 0, len);
    for (int i = 0; ok && i < t->n; i++) {
        next.n = 0;
        for (size_t k = 0; ok && k < cur.n; k++)
            ok = split_one(t->re[i], md, text, cur.s[k], &next);
        spans tmp = cur;
        cur = next;
        next = tmp;
    }
    for (size_t k = 0; ok && k < cur.n; k++)
        ok = word(user, cur.s[k].start, cur.s[k].len);
    pcre2_match_data_free(md);
    free(cur.s);
    free(next.s);
    return ok;
}
