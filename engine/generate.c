/* The generation loop: prompt, then one token at a time, timed. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void engine_gen_result_free(engine_gen_result *r)
{
    free(r->tokens);
    r->tokens = NULL;
    r->n_tokens = 0;
}

engine_status engine_generate(engine_ctx *c, const tok_vocab *v, const int32_t *prompt, size_t n_prompt,
                              const engine_gen_params *p, engine_trace *trace, engine_token_fn on_token, void *user,
                              engine_gen_result *out, engine_error *err)
{
    *out = (engine_gen_result){ 0 };
    const engine_hparams *hp = engine_model_hparams(c->m);
    const int32_t nv = hp->n_vocab;
    if (n_prompt == 0)
        return engine_fail(err, ENGINE_E_INPUT, 0, "", "the prompt has no tokens");
    engine_probe probe_value = trace ? engine_trace_probe(trace) : (engine_probe){ 0 };
    const engine_probe *probe = trace ? &probe_value : NULL;
    engine_sampler *smp = engine_sampler_create(&p->sampler, nv);
    float *logits = malloc((size_t)nv * sizeof(float));
    out->tokens = malloc(((size_t)(p->n_predict > 0 ? p->n_predict : 0) + 1) * sizeof(int32_t));
    engine_status s = ENGINE_OK;
    if (!smp || !logits || !out->tokens) {
        s = engine_fail(err, ENGINE_E_NOMEM, 0, "", "out of memory");
        goto done;
    }
    /* With nothing to record, the logits stay where they are computed: greedy
     * brings back one id, top-k sampling the k candidates it can choose from. */
    const bool quiet = !trace && !p->prompt_logits && p->spot_rows <= 0;
    const int top = !quiet ? 0 : p->sampler.temp <= 0.0f ? 1
                    : p->sampler.top_k > 0 && p->sampler.top_k <= KERN_TOP_K_MAX ? p->sampler.top_k : 0;
    const uint64_t spot_seed = p->sampler.seed ^ 0x5bd1e995u;
    int32_t top_ids[KERN_TOP_K_MAX];
    float top_vals[KERN_TOP_K_MAX];
    double t0 = now();
    if (top) {
        s = engine_forward_top_k(c, prompt, (int)n_prompt, top, top_ids, top_vals, probe, err);
    } else if (p->prompt_logits) {
        s = engine_forward(c, prompt, (int)n_prompt, true, p->prompt_logits, probe, err);
        if (!s)
            memcpy(logits, p->prompt_logits + (n_prompt - 1) * (size_t)nv, (size_t)nv * sizeof(float));
    } else {
        s = engine_forward(c, prompt, (int)n_prompt, false, logits, probe, err);
    }
    if (!s && p->spot_rows > 0)
        s = engine_spot_check(c, logits, p->spot_rows, spot_seed, ENGINE_SPOT_TOL, &out->spot, err);
    out->prompt_seconds = now() - t0;
    if (s)
        goto done;
    t0 = now();
    for (int i = 0; i < p->n_predict; i++) {
        int32_t tok = top ? engine_sample_top(smp, top_ids, top_vals, top) : engine_sample(smp, logits);
        if (trace && !engine_trace_step(trace, c->pos - 1, tok, logits)) {
            s = engine_fail(err, ENGINE_E_NOMEM, 0, "", "out of memory recording the trace");
            break;
        }
        out->tokens[out->n_tokens++] = tok;
        if (on_token)
            on_token(user, tok);
        if (tok_vocab_is_eog(v, tok)) {
            out->stopped_at_eog = true;
            break;
        }
        if (i + 1 == p->n_predict)
            break;
        if (c->pos >= c->n_ctx)
            break;  /* context full: stop, as a fixed-size cache must */
        s = top ? engine_forward_top_k(c, &tok, 1, top, top_ids, top_vals, probe, err)
                : engine_forward(c, &tok, 1, false, logits, probe, err);
        if (!s && p->spot_rows > 0)
            s = engine_spot_check(c, logits, p->spot_rows, spot_seed, ENGINE_SPOT_TOL, &out->spot, err);
        if (s)
            break;
    }
    out->gen_seconds = now() - t0;
done:
    engine_sampler_free(smp);
    free(logits);
    if (s)
        engine_gen_result_free(out);
    return s;
}
