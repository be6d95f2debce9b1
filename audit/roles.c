/* What a tensor is, from its name (llama.cpp's naming: "blk.N.<role>"). */
#include "audit.h"

#include <stdlib.h>
#include <string.h>

int audit_layer_of(const char *name, const char **role)
{
    *role = name;
    if (strncmp(name, "blk.", 4) != 0)
        return -1;
    char *end;
    long n = strtol(name + 4, &end, 10);
    if (end == name + 4 || *end != '.' || n < 0 || n > 1000000)
        return -1;
    *role = end + 1;
    return (int)n;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

audit_class audit_class_of(const gguf_tensor *t)
{
    const char *role;
    audit_layer_of(t->name, &role);
    if (strcmp(role, "token_embd.weight") == 0)
        return AUDIT_CLASS_EMBEDDING;
    if (strcmp(role, "output.weight") == 0)
        return AUDIT_CLASS_OUTPUT;
    if (ends_with(role, ".bias"))
        return AUDIT_CLASS_BIAS;
    if (strstr(role, "norm") && ends_with(role, ".weight") && t->n_dims == 1)
        return AUDIT_CLASS_NORM;
    if (t->n_dims >= 2 && ends_with(role, ".weight"))
        return AUDIT_CLASS_MATRIX;
    return AUDIT_CLASS_OTHER;
}

static const struct { const char *role, *what; } descriptions[] = {
    { "token_embd.weight", "token embedding" },
    { "output.weight", "output projection (logits)" },
    { "output_norm.weight", "final norm" },
    { "attn_norm.weight", "attention norm" },
    { "attn_q.weight", "attention query projection" },
    { "attn_k.weight", "attention key projection" },
    { "attn_v.weight", "attention value projection" },
    { "attn_qkv.weight", "fused query/key/value projection" },
    { "attn_output.weight", "attention output projection" },
    { "attn_q.bias", "attention query bias" },
    { "attn_k.bias", "attention key bias" },
    { "attn_v.bias", "attention value bias" },
    { "attn_q_norm.weight", "query norm" },
    { "attn_k_norm.weight", "key norm" },
    { "ffn_norm.weight", "feed-forward norm" },
    { "ffn_gate.weight", "feed-forward gate projection" },
    { "ffn_up.weight", "feed-forward up projection" },
    { "ffn_down.weight", "feed-forward down projection" },
    { "rope_freqs.weight", "rotary frequency factors" },
};

const char *audit_role_description(const char *role)
{
    for (size_t i = 0; i < sizeof descriptions / sizeof descriptions[0]; i++)
        if (strcmp(descriptions[i].role, role) == 0)
            return descriptions[i].what;
    return NULL;
}
