/*
 * Chat prompts the way llama.cpp's built-in templates make them (src/llama-chat.cpp):
 * no Jinja engine, but a family recognised from tokenizer.chat_template by the
 * same substrings llama_chat_detect_template looks for, in the same order, and
 * one user message formatted as that family writes it, the assistant's turn
 * opened. Families llama.cpp knows and we do not format are still recognised,
 * so that such a template is named rather than mistaken for a later rule's.
 */
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How one family writes a single user message and opens the reply, and what ends a turn. */
typedef struct chat_family {
    const char *name;           /* llama.cpp's name for it (--chat-template NAME) */
    const char *before, *after; /* around the message; NULL: recognised but not formatted here */
    bool trim;                  /* the message is trimmed of surrounding whitespace first */
    const char *end_of_turn;    /* the text after a reply (llama-chat.cpp's formats); NULL: not known here */
} chat_family;

static const chat_family families[] = {
    { "chatml", "<|im_start|>user\n", "<|im_end|>\n<|im_start|>assistant\n", false, "<|im_end|>" },
    { "llama3", "<|start_header_id|>user<|end_header_id|>\n\n",
      "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n", true, "<|eot_id|>" },
    { "gemma", "<start_of_turn>user\n", "<end_of_turn>\n<start_of_turn>model\n", true, "<end_of_turn>" },
    { "llama2", "[INST] ", " [/INST]", false, "</s>" },
    { "llama2-sys", "[INST] ", " [/INST]", false, "</s>" },
    { "llama2-sys-bos", "[INST] ", " [/INST]", false, "</s>" },
    { "llama2-sys-strip", "[INST] ", " [/INST]", true, "</s>" },
    { "mistral-v1", " [INST] ", " [/INST]", false, "</s>" },
    { "mistral-v3", "[INST] ", "[/INST]", false, "</s>" },
    { "mistral-v3-tekken", "[INST]", "[/INST]", false, "</s>" },
    { "mistral-v7", "[INST] ", "[/INST]", false, "</s>" },
    { "mistral-v7-tekken", "[INST]", "[/INST]", false, "</s>" },
    { "phi3", "<|user|>\n", "<|end|>\n<|assistant|>\n", false, "<|end|>" },
    { "zephyr", "<|user|>\n", "<|endoftext|>\n<|assistant|>\n", false, "<|endoftext|>" },
    /* IBM Granite: the three templates write one user message alike */
    { "granite", "<|start_of_role|>user<|end_of_role|>", "<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>",
      false, "<|end_of_text|>" },
    { "granite-4.0", "<|start_of_role|>user<|end_of_role|>",
      "<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>", false, "<|end_of_text|>" },
    { "granite-4.1", "<|start_of_role|>user<|end_of_role|>",
      "<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>", false, "<|end_of_text|>" },
    /* gpt-oss (harmony): the reply opens its analysis channel itself, closes it with <|end|>, ends with <|return|> */
    { "gpt-oss", "<|start|>user<|message|>", "<|end|><|start|>assistant", false, "<|return|>" },
    { "phi4", "<|im_start|>user<|im_sep|>", "<|im_end|><|im_start|>assistant<|im_sep|>", false, "<|im_end|>" },
    { "smolvlm", "<|im_start|>User: ", "<end_of_utterance>\nAssistant:", false, "<end_of_utterance>" },
    { "falcon3", "<|user|>\n", "\n<|assistant|>\n", false, NULL },
    { "glmedge", "<|user|>\n", "<|assistant|>", false, NULL },
    /* GLM-4 and GLM-4.5 (glm4moe): the prefix llama.cpp writes before the messages, the assistant's turn opened with
     * a line break */
    { "chatglm4", "[gMASK]<sop><|user|>\n", "<|assistant|>\n", false, NULL },
    /* AlphaMonarch: the first message without its <s> */
    { "monarch", "user\n", "</s>\n<s>assistant\n", false, "</s>" },
    /* Orion: the assistant's turn is opened by the user's message itself */
    { "orion", "Human: ", "\n\nAssistant: </s>", false, "</s>" },
    { "openchat", "GPT4 Correct User: ", "<|end_of_turn|>GPT4 Correct Assistant:", false, "<|end_of_turn|>" },
    { "vicuna", "USER: ", "\nASSISTANT:", false, "</s>" },
    { "vicuna-orca", "USER: ", "\nASSISTANT:", false, "</s>" },
    /* DeepSeek Coder's instructions */
    { "deepseek", "### Instruction:\n", "\n### Response:\n", false, "<|EOT|>" },
    /* DeepSeek-V2 and V2.5; DeepSeek-V3 and R1 (full-width bars, U+2581 for the spaces of end of sentence) */
    { "deepseek2", "User: ", "\n\nAssistant:", false, "<\uff5cend\u2581of\u2581sentence\uff5c>" },
    { "deepseek3", "<\uff5cUser\uff5c>", "<\uff5cAssistant\uff5c>", false, "<\uff5cend\u2581of\u2581sentence\uff5c>" },
    /* Kimi K2 */
    { "kimi-k2", "<|im_user|>user<|im_middle|>", "<|im_end|><|im_assistant|>assistant<|im_middle|>", false,
      "<|im_end|>" },
    /* recognised, not formatted */
    { "exaone-moe", NULL, NULL, false, NULL }, { "command-r", NULL, NULL, false, NULL },
    { "chatglm3", NULL, NULL, false, NULL }, { "minicpm", NULL, NULL, false, NULL },
    { "deepseek-ocr", NULL, NULL, false, NULL }, { "exaone3", NULL, NULL, false, NULL },
    { "exaone4", NULL, NULL, false, NULL }, { "rwkv-world", NULL, NULL, false, NULL },
    { "gigachat", NULL, NULL, false, NULL }, { "megrez", NULL, NULL, false, NULL },
    { "yandex", NULL, NULL, false, NULL }, { "bailing", NULL, NULL, false, NULL },
    { "bailing-think", NULL, NULL, false, NULL }, { "bailing2", NULL, NULL, false, NULL },
    { "llama4", NULL, NULL, false, NULL }, { "dots1", NULL, NULL, false, NULL },
    { "hunyuan-moe", NULL, NULL, false, NULL }, { "hunyuan-dense", NULL, NULL, false, NULL },
    { "hunyuan-vl", NULL, NULL, false, NULL }, { "seed_oss", NULL, NULL, false, NULL },
    { "grok-2", NULL, NULL, false, NULL }, { "pangu-embedded", NULL, NULL, false, NULL },
    { "solar-open", NULL, NULL, false, NULL },
};

/* Families only a detection rule finds: llama.cpp takes no template of that name. */
static const char *const unnamed_families[] = { "dots1" };

static bool llama_takes_name(const char *name)
{
    for (size_t i = 0; i < sizeof unnamed_families / sizeof *unnamed_families; i++)
        if (strcmp(unnamed_families[i], name) == 0)
            return false;
    return true;
}

static const chat_family *family_named(const char *name)
{
    for (size_t i = 0; name && i < sizeof families / sizeof families[0]; i++)
        if (strcmp(families[i].name, name) == 0)
            return &families[i];
    return NULL;
}

const char *tok_chat_end_of_turn(const char *family)
{
    const chat_family *c = family_named(family);
    return c ? c->end_of_turn : NULL;
}

static char family_names[512];

static void list_family_names(void)
{
    size_t at = 0;
    for (size_t i = 0; i < sizeof families / sizeof families[0] && at < sizeof family_names; i++)
        if (families[i].before)
            at += (size_t)snprintf(family_names + at, sizeof family_names - at, "%s%s", at ? ", " : "",
                                   families[i].name);
}

const char *tok_chat_families(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, list_family_names);
    return family_names;
}

/* A detection rule: every `all` substring present (up to 4) and no `none` substring. Rules are tried in order;
 * the first that holds names the family. The order and the substrings are llama_chat_detect_template's (its
 * nested branches flattened: a rule for each way into a family). */
typedef struct chat_rule {
    const char *family;
    const char *all[4];
    const char *none[3];
} chat_rule;

static const chat_rule rules[] = {
    { "phi4", { "<|im_start|>", "<|im_sep|>" }, { 0 } },
    { "smolvlm", { "<|im_start|>", "<end_of_utterance>" }, { 0 } },
    { "chatml", { "<|im_start|>" }, { 0 } },
    /* "[INST]" (or a template starting "mistral", handled in detect) */
    { "mistral-v7", { "[INST]", "[SYSTEM_PROMPT]" }, { 0 } },
    { "mistral-v1", { "[INST]", "' [INST] ' + system_message", " [INST]" }, { 0 } },
    { "mistral-v1", { "[INST]", "[AVAILABLE_TOOLS]", " [INST]" }, { 0 } },
    { "mistral-v3-tekken", { "[INST]", "' [INST] ' + system_message", "\"[INST]\"" }, { 0 } },
    { "mistral-v3-tekken", { "[INST]", "[AVAILABLE_TOOLS]", "\"[INST]\"" }, { 0 } },
    { "mistral-v3", { "[INST]", "' [INST] ' + system_message" }, { 0 } },
    { "mistral-v3", { "[INST]", "[AVAILABLE_TOOLS]" }, { 0 } },
    { "llama2-sys-strip", { "[INST]", "content.strip()" }, { 0 } },
    { "llama2-sys-bos", { "[INST]", "bos_token + '[INST]" }, { 0 } },
    { "llama2-sys", { "[INST]", "<<SYS>>" }, { 0 } },
    { "llama2", { "[INST]" }, { 0 } },
    { "phi3", { "<|assistant|>", "<|end|>" }, { 0 } },
    { "chatglm4", { "[gMASK]<sop>" }, { 0 } },
    { "exaone-moe", { "<|assistant|>", "<|user|>", "<|tool_declare|>" }, { 0 } },
    { "falcon3", { "<|assistant|>", "<|user|>", "</s>" }, { 0 } },
    { "glmedge", { "<|assistant|>", "<|user|>" }, { 0 } },
    { "glmedge", { "<|{{ item['role'] }}|>", "<|begin_of_image|>" }, { 0 } },
    { "zephyr", { "<|user|>", "<|endoftext|>" }, { 0 } },
    { "monarch", { "bos_token + message['role']" }, { 0 } },
    { "gemma", { "<start_of_turn>" }, { 0 } },
    { "orion", { "'\\n\\nAssistant: ' + eos_token" }, { 0 } },
    { "openchat", { "GPT4 Correct " }, { 0 } },
    { "vicuna-orca", { "USER: ", "ASSISTANT: ", "SYSTEM: " }, { 0 } },
    { "vicuna", { "USER: ", "ASSISTANT: " }, { 0 } },
    { "deepseek", { "### Instruction:", "<|EOT|>" }, { 0 } },
    { "command-r", { "<|START_OF_TURN_TOKEN|>", "<|USER_TOKEN|>" }, { 0 } },
    { "llama3", { "<|start_header_id|>", "<|end_header_id|>" }, { 0 } },
    { "chatglm3", { "[gMASK]sop" }, { 0 } },
    { "minicpm", { "<\u7528\u6237>" }, { 0 } },
    { "deepseek2", { "'Assistant: ' + message['content'] + eos_token" }, { 0 } },
    { "deepseek3", { "<\uff5cAssistant\uff5c>", "<\uff5cUser\uff5c>", "<\uff5cend\u2581of\u2581sentence\uff5c>" },
      { 0 } },
    { "exaone4", { "[|system|]", "[|assistant|]", "[|endofturn|]", "[|tool|]" }, { 0 } },
    { "exaone3", { "[|system|]", "[|assistant|]", "[|endofturn|]" }, { 0 } },
    { "rwkv-world", { "rwkv-world" }, { 0 } },
    { "rwkv-world", { "{{- 'User: ' + message['content']|trim + '\\n\\n' -}}" }, { 0 } },
    { "granite-4.0", { "<|start_of_role|>", "<tool_call>", "g4_default_system_message" }, { 0 } },
    { "granite-4.0", { "<|start_of_role|>", "<tools>", "g4_default_system_message" }, { 0 } },
    { "granite-4.1", { "<|start_of_role|>", "<tool_call>" }, { 0 } },
    { "granite-4.1", { "<|start_of_role|>", "<tools>" }, { 0 } },
    { "granite", { "<|start_of_role|>" }, { 0 } },
    { "gigachat",
      { "message['role'] + additional_special_tokens[0] + message['content'] + additional_special_tokens[1]" },
      { 0 } },
    { "megrez", { "<|role_start|>" }, { 0 } },
    { "yandex", { " \u0410\u0441\u0441\u0438\u0441\u0442\u0435\u043d\u0442:" }, { 0 } },
    { "bailing", { "<role>ASSISTANT</role>", "'HUMAN'" }, { 0 } },
    { "bailing-think", { "<role>ASSISTANT</role>", "\"HUMAN\"", "<think>" }, { 0 } },
    { "bailing2", { "<role>ASSISTANT</role>", "<role>HUMAN</role>", "<|role_end|>" }, { 0 } },
    { "llama4", { "<|header_start|>", "<|header_end|>" }, { 0 } },
    { "dots1", { "<|endofuserprompt|>" }, { 0 } },
    { "hunyuan-moe", { "<|extra_0|>", "<|extra_4|>" }, { 0 } },
    { "gpt-oss", { "<|start|>", "<|channel|>" }, { 0 } },
    { "hunyuan-vl", { "<\uff5chy_Assistant\uff5c>", "<\uff5chy_begin\u2581of\u2581sentence\uff5c>" }, { 0 } },
    { "hunyuan-dense", { "<\uff5chy_Assistant\uff5c>", "<\uff5chy_place\u2581holder\u2581no\u25813\uff5c>" }, { 0 } },
    { "kimi-k2", { "<|im_assistant|>assistant<|im_middle|>" }, { 0 } },
    { "seed_oss", { "<seed:bos>" }, { 0 } },
    { "grok-2", { "'Assistant: '  + message['content'] + '<|separator|>" }, { 0 } },
    { "pangu-embedded", { "[unused9]\u7cfb\u7edf\uff1a[unused10]" }, { 0 } },
    { "solar-open", { "<|begin|>", "<|end|>", "<|content|>" }, { 0 } },
};

static bool contains(const char *t, size_t len, const char *s)
{
    return memmem(t, len, s, strlen(s)) != NULL;
}

const char *tok_chat_detect(const char *tmpl, size_t len)
{
    /* llama.cpp first takes a template that is itself a family's name */
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (strlen(families[i].name) == len && memcmp(families[i].name, tmpl, len) == 0 &&
            llama_takes_name(families[i].name))
            return families[i].name;
    /* a template starting "mistral" goes down the [INST] branch even without "[INST]" */
    const bool mistral_prefix = len >= 7 && memcmp(tmpl, "mistral", 7) == 0;
    for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++) {
        const chat_rule *ru = &rules[r];
        bool ok = true;
        for (int k = 0; ok && k < 4 && ru->all[k]; k++)
            ok = contains(tmpl, len, ru->all[k]) || (k == 0 && mistral_prefix && strcmp(ru->all[k], "[INST]") == 0);
        for (int k = 0; ok && k < 3 && ru->none[k]; k++)
            ok = !contains(tmpl, len, ru->none[k]);
        if (ok)
            return ru->family;
    }
    return NULL;
}

bool tok_chat_formats(const char *family)
{
    const chat_family *f = family_named(family);
    return f && f->before;
}

static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t' || **s == '\n' || **s == '\r' || **s == '\f' || **s == '\v'))
        (*s)++, (*n)--;
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\n' || (*s)[*n - 1] == '\r' ||
                  (*s)[*n - 1] == '\f' || (*s)[*n - 1] == '\v'))
        (*n)--;
}

tok_status tok_chat_format(const char *family, const char *message, size_t len, char **out, tok_error *err)
{
    *out = NULL;
    const chat_family *f = family_named(family);
    if (!f)
        return tok_fail(err, TOK_E_INPUT, 0, "", "chat template '%s' is not one gguf-run knows (%s)", family,
                           tok_chat_families());
    if (!f->before)
        return tok_fail(err, TOK_E_INPUT, 0, "",
                           "the chat template is llama.cpp's '%s', which gguf-run does not format: choose one with "
                           "--chat-template NAME (%s)", family, tok_chat_families());
    if (f->trim)
        trim(&message, &len);
    const size_t a = strlen(f->before), b = strlen(f->after);
    char *s = malloc(a + len + b + 1);
    if (!s)
        return tok_fail(err, TOK_E_NOMEM, 0, "", "out of memory");
    memcpy(s, f->before, a);
    memcpy(s + a, message, len);
    memcpy(s + a + len, f->after, b);
    s[a + len + b] = '\0';
    *out = s;
    return TOK_OK;
}
