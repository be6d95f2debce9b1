/* --tensor-type overrides (overrides.h), their expressions compiled by PCRE2 (ECMAScript's syntax for the patterns
 * people write: blk\.12\.attn_v\.weight, ffn_down, attn_(q|k)). */
#include "overrides.h"
#include "quant.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <ctype.h>
#include <pcre2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct quantize_overrides {
    bool requantize;
    size_t n;
    struct {
        pcre2_code *re;
        uint32_t type;
    } *v;
};

bool quantize_overrides_add(quantize_overrides **ov, const char *spec, char *why, size_t why_len)
{
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || !eq[1]) {
        snprintf(why, why_len, "--tensor-type takes NAME=TYPE (a regular expression for tensor names, a type), got "
                 "'%s'", spec);
        return false;
    }
    const int type = gguf_type_from_name(eq + 1);
    if (type < 0 || !quant_can_quantize((uint32_t)type)) {
        snprintf(why, why_len, "--tensor-type %s: '%s' is not a type this quantizer writes (F32, F16, BF16, Q8_0, "
                 "Q5_0, Q5_1, Q4_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, MXFP4)", spec, eq + 1);
        return false;
    }
    /* llama-quantize lowercases the expression */
    size_t n = (size_t)(eq - spec);
    char *pattern = malloc(n + 1);
    if (!pattern) {
        snprintf(why, why_len, "out of memory");
        return false;
    }
    for (size_t i = 0; i < n; i++)
        pattern[i] = (char)tolower((unsigned char)spec[i]);
    pattern[n] = '\0';
    int code;
    PCRE2_SIZE at;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pattern, n, 0, &code, &at, NULL);
    free(pattern);
    if (!re) {
        PCRE2_UCHAR msg[160];
        pcre2_get_error_message(code, msg, sizeof msg);
        snprintf(why, why_len, "--tensor-type %s: the expression does not compile at character %zu: %s", spec,
                 (size_t)at, (const char *)msg);
        return false;
    }
    quantize_overrides *o = *ov ? *ov : calloc(1, sizeof *o);
    void *grown = o ? realloc(o->v, (o->n + 1) * sizeof *o->v) : NULL;
    if (!grown) {
        pcre2_code_free(re);
        if (o && !*ov)
            free(o);
        snprintf(why, why_len, "out of memory");
        return false;
    }
    o->v = grown;
    o->v[o->n].re = re;
    o->v[o->n++].type = (uint32_t)type;
    *ov = o;
    return true;
}

uint32_t quantize_overrides_type(const quantize_overrides *ov, const char *name)
{
    for (size_t i = 0; ov && i < ov->n; i++) {
        pcre2_match_data *md = pcre2_match_data_create_from_pattern(ov->v[i].re, NULL);
        const int rc = md ? pcre2_match(ov->v[i].re, (PCRE2_SPTR)name, strlen(name), 0, 0, md, NULL) : -1;
        pcre2_match_data_free(md);
        if (rc >= 0)
            return ov->v[i].type;
    }
    return GGUF_TENSOR_COUNT;
}

bool quantize_overrides_allow_requantize(quantize_overrides **ov)
{
    if (!*ov)
        *ov = calloc(1, sizeof **ov);
    if (*ov)
        (*ov)->requantize = true;
    return *ov != NULL;
}

bool quantize_overrides_requantize(const quantize_overrides *ov)
{
    return ov && ov->requantize;
}

void quantize_overrides_free(quantize_overrides *ov)
{
    for (size_t i = 0; ov && i < ov->n; i++)
        pcre2_code_free(ov->v[i].re);
    if (ov)
        free(ov->v);
    free(ov);
}
