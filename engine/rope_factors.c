/*
 * The rotation's frequency divisors a model carries: rope_freqs (Llama 3.1), LongRoPE's long and short pairs (phi3's
 * 128k files), and the divisors a multi-axis rotation (Qwen2-VL's M-RoPE) gives text positions; which of them a
 * context of a given size uses.
 */
#include "internal.h"
#include "quant.h"

#include <math.h>
#include <stdlib.h>

/* A 1-D tensor of n_rot / 2 frequency divisors (role r) into *out as f32, when the file has it and the architecture
 * reads it (Step-3.5's: the sliding layers' wider n_rot / 2, of which the full layers' rotation reads the start). */
static engine_status load_factors(engine_model *m, model_role r, float **out, engine_error *err)
{
    const char *name = model_role_info_of(r)->name;
    const gguf_tensor *ff = gguf_tensor_by_name(m->f, name);
    if (!ff || m->hp.desc->need[r] == MODEL_NEED_ABSENT)
        return ENGINE_OK;
    const int64_t half = model_hparams_dim(&m->hp.g, MODEL_DIM_ROT_HALF);
    *out = malloc((size_t)(half > 0 ? half : 1) * sizeof(float));
    if (ff->n_elements != (uint64_t)half || !*out || !ff->data ||
        quant_dequantize_row(ff->type, ff->data, *out, half) != QUANT_OK)
        return engine_fail(err, ENGINE_E_MODEL, ff->info_offset, name, "%s has %llu values, rotary needs %lld factors",
                           name, (unsigned long long)ff->n_elements, (long long)half);
    return ENGINE_OK;
}

/* A multi-axis rotation (model_mrope) as text meets it: llama.cpp gives a text token its position on the time, height
 * and width axes and 0 on the extra one (llm_graph_input_pos::set_input), and ggml's mrope cache picks each pair's
 * axis by its sector (ggml_mrope_cache_init: sections in turn, or interleaved t, h, w for Qwen3-VL, the pairs left over
 * on the extra axis). Three equal positions rotate as NEOX does; a pair on the extra axis keeps angle 0, which a
 * frequency divisor of +inf gives (theta / inf = 0, as ggml divides by its factors), so the table joins the file's
 * own divisors where it has them. */
static engine_status mrope_text_factors(engine_model *m, engine_error *err)
{
    const model_hparams *g = &m->hp.g;
    const int half = m->hp.rope.n_rot / 2;
    const int64_t *s = g->rope_sections, dims = s[0] + s[1] + s[2] + s[3];
    if (!g->mrope || dims <= 0)
        return ENGINE_OK;
    if (!m->freq_factors) {
        m->freq_factors = malloc((size_t)(half > 0 ? half : 1) * sizeof(float));
        if (!m->freq_factors)
            return engine_fail(err, ENGINE_E_NOMEM, 0, "", "out of memory");
        for (int i = 0; i < half; i++)
            m->freq_factors[i] = 1.0f;
    }
    for (int i = 0; i < half; i++) {
        const int64_t sector = i % dims;
        const bool extra = g->mrope == MODEL_MROPE_INTERLEAVED
                               ? !((sector % 3 == 1 && sector < 3 * s[1]) || (sector % 3 == 2 && sector < 3 * s[2]) ||
                                   (sector % 3 == 0 && sector < 3 * s[0]))
                               : sector >= s[0] + s[1] + s[2];
        if (extra)
            m->freq_factors[i] = INFINITY;
    }
    return ENGINE_OK;
}

const float *engine_rope_factors_for(const engine_model *m, int n_ctx, const char **what)
{
    const char *w = NULL;
    const float *f = m->freq_factors;
    if (f)
        w = m->hp.g.mrope ? "M-RoPE sections, text positions (the extra axis's pairs at position 0)" : "rope_freqs factors";
    else if (m->rope_long || m->rope_short) {
        /* as llama_model::get_rope_factors: the long divisors when the context, padded to 256 as llama.cpp's is,
         * is past the original one */
        const bool longer = (int64_t)(n_ctx + 255) / 256 * 256 > m->hp.g.n_ctx_orig_yarn;
        f = longer && m->rope_long ? m->rope_long : m->rope_short ? m->rope_short : m->rope_long;
        w = f == m->rope_long ? "LongRoPE long factors (the context is past the original)"
                              : "LongRoPE short factors (the context is within the original)";
    }
    if (what)
        *what = w;
    return f;
}

/* Rotary frequency divisors: Llama 3.1's rope_freqs for every context, or LongRoPE's pair, of which engine_ctx_create
 * picks one by the context's size (engine_rope_factors_for); a multi-axis rotation's table for text. */
engine_status engine_load_rope_factors(engine_model *m, engine_error *err)
{
    static const model_role factor_roles[3] = { MODEL_ROLE_ROPE_FREQS, MODEL_ROLE_ROPE_FACTORS_LONG,
                                                MODEL_ROLE_ROPE_FACTORS_SHORT };
    float **factors[3] = { &m->freq_factors, &m->rope_long, &m->rope_short };
    engine_status s;
    for (int k = 0; k < 3; k++)
        if ((s = load_factors(m, factor_roles[k], factors[k], err)))
            return s;
    return mrope_text_factors(m, err);
}
