/*
 * Mixtures of experts as gguf-verify audits them: each expert against its layer's other experts, a zeroed expert
 * named with its index, the healthy shared files clean. (The forward pass against llama.cpp's goldens is
 * test_engine's mixtures_of_experts_match_llama_cpp.)
 */
#include "suite_helpers.h"
#include "testutil.h"
#include "verify_doc.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmp_path[64];
static void setup(void)
{
    strcpy(tmp_path, "/tmp/ggufscope-experts-XXXXXX");
    int fd = mkstemp(tmp_path);
    close(fd);
}
static void teardown(void) { unlink(tmp_path); }
TestSuite(experts, .init = setup, .fini = teardown, .timeout = 120);

#define QWEN3MOE "moe/tiny-qwen3moe-q4_k_m.gguf"
enum { Q4_K_BYTES = 144 }; /* f16 d, f16 dmin, 12 bytes of scales, 128 of quants per 256 values */

/* Expert 5 of the tensor zeroed: every byte of its slice (d = dmin = 0: every value 0). */
static void zero_expert_5(uint8_t *d, const gguf_tensor *t)
{
    const size_t per = t->size / t->ne[2];
    memset(d + 5 * per, 0, per);
}

/* Expert 3 of a Q4_K tensor 16 times larger: 4 added to the f16 exponent of each block's d and dmin. */
static void expert_3_times_16(uint8_t *d, const gguf_tensor *t)
{
    const size_t per = t->size / t->ne[2];
    for (size_t b = 3 * per; b < 4 * per; b += Q4_K_BYTES)
        for (int k = 0; k < 2; k++) {
            uint16_t h = (uint16_t)(d[b + 2 * k] | d[b + 2 * k + 1] << 8);
            h = (uint16_t)(h + (4u << 10));
            d[b + 2 * k] = (uint8_t)h, d[b + 2 * k + 1] = (uint8_t)(h >> 8);
        }
}

static const cJSON *expect_error(const cJSON *doc, int st, const char *code, const char *tensor, const char *says)
{
    char *txt = findings_text(doc);
    cr_expect_eq(st, 1, "exit %d; findings:\n%s", st, txt);
    const cJSON *f = find_finding(doc, code, tensor);
    cr_expect(f, "no '%s' on %s; findings:\n%s", code, tensor, txt);
    if (f) {
        cr_expect_str_eq(cJSON_GetObjectItem(f, "severity")->valuestring, "error");
        const char *m = cJSON_GetObjectItem(f, "measured")->valuestring;
        cr_expect(strstr(m, says), "'%s' does not say '%s'", m, says);
    }
    free(txt);
    return f;
}

/* The qwen3moe file with tensor patched: gguf-verify names the error `code` on it, saying `says`. */
static void expect_patched_error(const char *tensor, patch_fn patch, const char *code, const char *says)
{
    write_patched(QWEN3MOE, tensor, patch, tmp_path);
    int st;
    cJSON *doc = verify_json(tmp_path, NULL, &st);
    expect_error(doc, st, code, tensor, says);
    cJSON_Delete(doc);
}

Test(experts, a_zeroed_expert_is_named_with_its_index)
{
    expect_patched_error("blk.1.ffn_up_exps.weight", zero_expert_5, "zero-expert", "expert 5 of layer 1");
}

/* The whole tensor's statistics move by a fraction (one expert of 8) and its siblings in other layers hide it;
 * against the layer's other experts it stands 16 times out. */
Test(experts, a_rescaled_expert_stands_out_from_its_layer)
{
    expect_patched_error("blk.2.ffn_gate_exps.weight", expert_3_times_16, "sibling-outlier", "expert 3 of layer 2");
}

Test(experts, healthy_mixtures_of_experts_are_clean)
{
    const char *const names[] = { "moe/tiny-qwen3moe-q4_k_m.gguf", "moe/tiny-qwen2moe-q4_k_m.gguf",
                                  "moe/tiny-mixtral-q4_k_m.gguf", "moe/tiny-gptoss-mxfp4.gguf" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *p = need_model(names[i]);
        int st;
        cJSON *doc = verify_json(p, NULL, &st);
        char *txt = findings_text(doc);
        cr_expect_eq(st, 0, "%s: exit %d\n%s", names[i], st, txt);
        cr_expect_eq(count_findings(doc, "error") + count_findings(doc, "warning"), 0, "%s:\n%s", names[i], txt);
        free(txt);
        cJSON_Delete(doc);
        free(p);
    }
}
