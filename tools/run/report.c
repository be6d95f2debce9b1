/* gguf-run's outputs: start-up report, summary, trace tables (the JSON documents: report_json.c). */
#include "color.h"
#include "format.h"
#include "quant.h"
#include "run.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void run_token_label(const tok_vocab *v, int32_t id, char *buf, size_t cap)
{
    char piece[64];
    size_t n = tok_piece(v, id, piece, sizeof piece - 1);
    if (tok_vocab_type(v, id) == TOK_TYPE_CONTROL || n == 0) {
        const gguf_str t = tok_vocab_text(v, id);
        snprintf(buf, cap, "%.*s", t.ptr ? (int)(t.len < 24 ? t.len : 24) : 1, t.ptr ? t.ptr : "?");
        return;
    }
    if (n > sizeof piece - 1)
        n = sizeof piece - 1;
    size_t at = 0;
    buf[at++] = '\'';
    for (size_t i = 0; i < n && at + 5 < cap && i < 16; i++) {
        unsigned char ch = (unsigned char)piece[i];
        if (ch == '\n' || ch == '\t' || ch == '\r') {
            buf[at++] = '\\';
            buf[at++] = ch == '\n' ? 'n' : ch == '\t' ? 't' : 'r';
        } else if (ch < 0x20) {
            at += (size_t)snprintf(buf + at, cap - at, "\\x%02x", ch);
        } else {
            buf[at++] = (char)ch;
        }
    }
    if (at + 2 <= cap) {
        buf[at++] = '\'';
        buf[at] = 0;
    } else {
        buf[cap - 1] = 0;
    }
}

/* The shapes of a model whose layers differ (Gemma 4: a sliding-window layer's heads, rotation and key/value heads of
 * its own; counts or widths listed per layer): the first layer of each kind, as model_hparams_layer reads it. */
static void print_layer_shapes(FILE *out, const engine_hparams *hp)
{
    fprintf(out, "layers    ");
    for (int swa = 1; swa >= 0; swa--) {
        int il = 0;
        while (il < hp->n_layer && model_hparams_layer_is_swa(&hp->g, il) != (swa != 0))
            il++;
        if (il == hp->n_layer)
            continue;
        model_hparams l;
        model_hparams_layer(&hp->g, il, &l);
        const bool factors = hp->freq_factors && (!swa || !hp->desc->rope_freqs_full_only);
        char widths[64]; /* a head's key length, and its value length where that differs (MiMo-V2's) */
        if (l.head_dim_v == l.head_dim_k || hp->mla)
            snprintf(widths, sizeof widths, "%lld values", (long long)l.head_dim_k);
        else
            snprintf(widths, sizeof widths, "%lld key and %lld value dims", (long long)l.head_dim_k,
                     (long long)l.head_dim_v);
        fprintf(out, " %s (from layer %d): %lld kv heads of %s, %lld rotating%s, n_ff %lld;", swa ? "sliding" : "full",
                il, (long long)l.n_head_kv, widths, (long long)l.n_rot, factors ? " (rope_freqs)" : "",
                (long long)l.n_ff);
    }
    if (hp->g.n_kv_shared > 0) /* Gemma 4 E2B / E4B */
        fprintf(out, " the last %lld read the caches of layers %lld (sliding) and %lld (full);",
                (long long)hp->g.n_kv_shared, (long long)hp->g.n_layer_kv - 2, (long long)hp->g.n_layer_kv - 1);
    if (hp->n_ple)
        fprintf(out, " per-layer inputs of %d (a second embedding table and a projection of the embeddings, gated into "
                "each layer's output);", hp->n_ple);
    fprintf(out, "%s%s\n", hp->desc->v_from_k ? " values the keys' projection where a layer has no attn_v;" : "",
            hp->desc->v_norm ? " v RMS-normed without gains" : "");
}

/* OpenELM's layers, each with its own counts: heads, key/value heads and feed-forward widths in layer order. */
static void print_layer_lists(FILE *out, const engine_hparams *hp)
{
    static const char *const what[3] = { "heads", "kv heads", "n_ff" };
    fprintf(out, "layers    ");
    for (int k = 0; k < 3; k++) {
        fprintf(out, " %s", what[k]);
        for (int il = 0; il < hp->n_layer; il++) {
            model_hparams l;
            model_hparams_layer(&hp->g, il, &l);
            fprintf(out, "%s%lld", il ? ", " : " ", (long long)(k == 0 ? l.n_head : k == 1 ? l.n_head_kv : l.n_ff));
        }
        fprintf(out, "%s", k < 2 ? ";" : "\n");
    }
}

/* DeciLM's layers, each pruned as its counts say: how many of each kind, the key/value heads and widths they have. */
static void print_pruned_layers(FILE *out, const engine_hparams *hp)
{
    int attend = 0, linear = 0, ffn_only = 0, neither = 0;
    int64_t kv_lo = INT64_MAX, kv_hi = 0, ff_lo = INT64_MAX, ff_hi = 0;
    for (int il = 0; il < hp->n_layer; il++) {
        model_hparams l;
        model_hparams_layer(&hp->g, il, &l);
        const bool attn = model_hparams_layer_has_attention(&hp->g, il), ffn = model_hparams_layer_has_ffn(&hp->g, il);
        attend += attn && l.n_head_kv > 0;
        linear += attn && l.n_head_kv == 0;
        ffn_only += !attn && ffn;
        neither += !attn && !ffn;
        if (attn && l.n_head_kv > 0) {
            kv_lo = l.n_head_kv < kv_lo ? l.n_head_kv : kv_lo;
            kv_hi = l.n_head_kv > kv_hi ? l.n_head_kv : kv_hi;
        }
        if (ffn) {
            ff_lo = l.n_ff < ff_lo ? l.n_ff : ff_lo;
            ff_hi = l.n_ff > ff_hi ? l.n_ff : ff_hi;
        }
    }
    fprintf(out, "layers     pruned per layer: %d attend (%lld to %lld kv heads), %d a linear attention (attn_output "
            "of the normed input), %d a feed-forward block alone, %d neither; feed-forward widths %lld to %lld\n",
            attend, (long long)(attend ? kv_lo : 0), (long long)kv_hi, linear, ffn_only, neither,
            (long long)(ff_hi ? ff_lo : 0), (long long)ff_hi);
}

void run_print_setup(FILE *out, const gguf_file *f, const engine_model *m, const tok_vocab *v,
                     const run_opts *o, int n_ctx)
{
    const engine_hparams *hp = engine_model_hparams(m);
    char size[32], name[128];
    gguf_format_size(gguf_file_size(f), size, sizeof size);
    const char *mname = meta_string(f, "general.name", name, sizeof name);
    fprintf(out, "model      %s (%s%s%s)\n", o->model, mname ? mname : "", mname ? ", " : "", size);
    if (hp->desc->attention_free) /* Mamba: its layers' line says what they are */
        fprintf(out, "arch       %s: %d layers, n_embd %d, no attention, no feed-forward block\n", hp->arch,
                hp->n_layer, hp->n_embd);
    else if (hp->g.heads_layers && hp->desc->heads_by_layer) /* OpenELM: the layers' line lists them */
        fprintf(out, "arch       %s: %d layers, n_embd %d, head counts and widths by layer (up to %d heads, n_ff %d), "
                "head dim %d\n", hp->arch, hp->n_layer, hp->n_embd, hp->n_head, hp->n_ff, hp->head_dim);
    else
        fprintf(out, "arch       %s: %d layers, n_embd %d, n_ff %d, %d heads / %d kv heads (GQA %d:1), head dim %d%s\n",
                hp->arch, hp->n_layer, hp->n_embd, hp->n_ff, hp->n_head, hp->n_kv_head, hp->n_head / hp->n_kv_head,
                hp->head_dim, hp->head_dim_from_key_length ? " (attention.key_length)" : " (n_embd / heads)");
    if (hp->n_layer != hp->n_block) /* Nanbeige's loops */
        fprintf(out, "loops      the %d blocks run %d times over (%d layers, each with its own cache; weights read once "
                "a pass), %s\n", hp->n_block, hp->n_layer / hp->n_block, hp->n_layer,
                hp->g.skip_loop_final_norm ? "no norm between passes (skip_loop_final_norm)"
                                           : "the final norm (output_norm) between passes");
    char scaling[160] = "";
    if (hp->g.rope_scaling == MODEL_ROPE_SCALING_YARN && hp->rope.ext_factor == 0.0f) /* Grok's ext_factor 0 */
        snprintf(scaling, sizeof scaling, ", YaRN x%g from %lld positions (ext_factor 0: interpolated alone, magnitude "
                 "%.4g)", 1.0 / hp->rope.freq_scale, (long long)hp->g.n_ctx_orig_yarn, hp->rope.attn_factor);
    else if (hp->g.rope_scaling == MODEL_ROPE_SCALING_YARN)
        snprintf(scaling, sizeof scaling, ", YaRN x%g from %lld positions (ramp over pairs %g-%g, magnitude %.4g)",
                 1.0 / hp->rope.freq_scale, (long long)hp->g.n_ctx_orig_yarn, hp->rope.corr_lo, hp->rope.corr_hi,
                 hp->rope.attn_factor * (1.0 + 0.1 * log(1.0 / hp->rope.freq_scale)));
    else if (hp->rope.freq_scale != 1.0f)
        snprintf(scaling, sizeof scaling, ", linear scaling x%g", 1.0 / hp->rope.freq_scale);
    const char *factors = NULL;
    engine_rope_factors_for(m, n_ctx, &factors);
    char nope[224] = "", temp[200] = "";
    const uint32_t period = hp->desc->no_rope_period;
    if (hp->desc->rope_swa_only && hp->swa_window > 0)
        snprintf(nope, sizeof nope, "; on the sliding-window layers only (the others: NoPE)");
    else if ((period == 1 || hp->g.rope_off) && hp->g.alibi_max_bias > 0.0f) /* BLOOM, Baichuan 13B */
        snprintf(nope, sizeof nope, "; none: ALiBi (max_bias %g): head h's scores gain slope(h) x (key position - "
                 "query position), slopes %.4g .. %.4g", hp->g.alibi_max_bias,
                 kern_alibi_slope(hp->g.alibi_max_bias, hp->n_head, 0),
                 kern_alibi_slope(hp->g.alibi_max_bias, hp->n_head, hp->n_head - 1));
    else if (hp->g.rope_off && hp->desc->rope_n_layer) /* Baichuan's loader types the model by its depth */
        snprintf(nope, sizeof nope, "; none: llama.cpp rotates a %s model of %u layers only (this one's %d attend "
                 "without positions)", hp->desc->name, hp->desc->rope_n_layer, hp->n_layer);
    else if (hp->g.rope_off) /* Granite 4.0-H */
        snprintf(nope, sizeof nope, "; none: rope.scaling.finetuned is false (the attention layers attend without "
                 "positions)");
    else if (period == 1 && gguf_tensor_by_name(f, model_role_info_of(MODEL_ROLE_POS_EMBD)->name)) /* GPT-2 */
        snprintf(nope, sizeof nope, "; none: learned positions (position_embd.weight, %d of them) are added to the "
                 "embeddings", hp->n_ctx_train);
    else if (period == 1) /* Nemotron-H */
        snprintf(nope, sizeof nope, "; none: the attention layers attend without positions");
    else if (period && hp->desc->no_rope_window_only && hp->swa_window <= 0) /* SmallThinker without a window */
        snprintf(nope, sizeof nope, "; every layer (no sliding window: no NoPE layers)");
    else if (hp->g.rope_layers) { /* Granite's attention.rope_pattern */
        int still = 0;
        for (int il = 0; il < hp->n_layer; il++)
            still += !model_hparams_layer_rotates(&hp->g, il);
        snprintf(nope, sizeof nope, "; none on %d of %d layers (attention.rope_pattern: NoPE)", still, hp->n_layer);
    } else if (period) /* the first or the last of each period */
        snprintf(nope, sizeof nope, "; none on every %uth layer (NoPE: layers %u, %u, ...)", period,
                 hp->desc->no_rope_first ? 0 : period - 1, hp->desc->no_rope_first ? period : 2 * period - 1);
    if (hp->g.attn_temp_scale != 0.0f) {
        char at[32] = "p";
        if (hp->g.attn_temp_offset != 0.0f)
            snprintf(at, sizeof at, "(p + %g)", hp->g.attn_temp_offset);
        snprintf(temp, sizeof temp, "; q scaled at position p by log(floor(%s / %g) + 1) x %g + 1 (attention "
                 "temperature%s)", at, hp->g.attn_temp_floor, hp->g.attn_temp_scale,
                 hp->g.attn_temp_nope_only ? ", on the layers without positions" : "");
    }
    if (!hp->desc->attention_free)
        fprintf(out, "rope       %s (by architecture), base %g%s, %d of %d dims rotate%s%s%s%s%s%s\n",
                hp->rope.neox ? "NEOX" : "NORM", hp->rope.base, hp->base_defaulted ? " (default: no rope.freq_base)" : "",
                hp->rope.n_rot, hp->mla ? hp->k_mla : hp->head_dim, hp->mla ? " (each head's last, and the shared key)" : "",
                scaling, factors ? ", " : "", factors ? factors : "", nope, temp);
    if (hp->g.clamp_kqv > 0.0f) /* MPT's, OLMo's clip_qkv */
        fprintf(out, "attention  q, k and v clamped to [-%g, %g] after their products (attention.clamp_kqv)\n",
                hp->g.clamp_kqv, hp->g.clamp_kqv);
    if (hp->desc->attn_gate_per_head) /* Step-3.5's */
        fprintf(out, "attention  each head's output times sigmoid(x . attn_gate) where a layer has attn_gate\n");
    if (hp->desc->attn_gate_either) { /* Laguna's: the layers' gates counted by their width */
        int heads = 0;
        for (int il = 0; il < hp->n_layer; il++) {
            model_hparams l;
            model_hparams_layer(&hp->g, il, &l);
            heads += l.attn_gate_heads;
        }
        fprintf(out, "attention  output times %s(x . attn_gate): a gate per head in %d layers, per value in %d\n",
                hp->desc->attn_gate_softplus ? "softplus" : "sigmoid", heads, hp->n_layer - heads);
    }
    if (hp->g.attn_value_scale != 0.0f) /* MiMo-V2's */
        fprintf(out, "attention  output times %g after its product (attention.value_scale)\n", hp->g.attn_value_scale);
    if (hp->mla) { /* latent attention: what the cache holds and how a head's key and value come out of it */
        char q[64] = "straight from the input";
        if (hp->n_lora_q)
            snprintf(q, sizeof q, "through a compression of %d", hp->n_lora_q);
        fprintf(out, "attention  latent (MLA): q %s; keys and values from a compressed row of %d and a rotary key of %d "
                "all heads share, %s; a head's key %d, value %d; scores scaled by %g\n", q, hp->n_lora_kv,
                hp->rope.n_rot,
                hp->mla_split ? "decompressed per head (attn_k_b absorbed into q, attn_v_b after the attention): the "
                                "cache holds the compressed row"
                              : "decompressed whole (attn_kv_b): the cache holds every head's key and value",
                hp->k_mla, hp->v_mla, hp->attn_scale);
    }
    if (hp->delta_net) { /* Qwen3.5: the recurrent layers and the gated attention between them */
        fprintf(out, "layers     %d of %d a gated delta net (a causal convolution of %d taps and SiLU; %d key heads to %d "
                "value heads of %d; a %d x %d state per value head, decayed by exp(softplus(alpha + dt) a), written with "
                "sigmoid(beta); out RMS-normed x SiLU(z)), the others attention with each head's output x sigmoid(its "
                "gate)\n", hp->n_recurrent, hp->n_layer, hp->dn_conv, hp->dn_hk, hp->dn_hv, hp->dn_d, hp->dn_d, hp->dn_d);
    }
    if (hp->shortconv) /* LFM2 */
        fprintf(out, "layers     %d of %d a short convolution (B, C, x from one projection; y = C x conv(B x) over %d "
                "taps, the last %d inputs kept), the others attention\n", hp->n_recurrent, hp->n_layer, hp->dn_conv,
                hp->dn_conv - 1);
    if (hp->mamba2) { /* Nemotron-H (one block a layer), Granite 4.0-H */
        int ffn = 0;
        for (int il = 0; il < hp->n_layer; il++)
            ffn += model_hparams_layer_is_ffn_only(&hp->g, il);
        char rest[160], attn[96] = "";
        char norm_name[96];
        snprintf(norm_name, sizeof norm_name, "blk.0.%s", model_role_name(hp->desc, MODEL_ROLE_SSM_NORM));
        const gguf_tensor *norm = gguf_tensor_by_name(f, norm_name);
        if (hp->desc->mixer_beside) /* Falcon-H1 */
            snprintf(rest, sizeof rest, "each beside the layer's attention on the same attn_norm, the two added; a "
                     "feed-forward block after each");
        else if (hp->desc->attention_free) /* Mamba-2 alone */
            snprintf(rest, sizeof rest, "nothing else");
        else if (hp->desc->single_block)
            snprintf(rest, sizeof rest, "%d feed-forward (%s), %d attention", ffn,
                     hp->n_expert ? "experts" : "relu(x Wup)^2 Wdown, no gate", hp->n_layer - hp->n_recurrent - ffn);
        else
            snprintf(rest, sizeof rest, "the others attention; a feed-forward block after each");
        if (!hp->desc->attention_free)
            snprintf(attn, sizeof attn, " (%d kv heads of %d values%s)", hp->n_kv_head, hp->head_dim,
                     hp->desc->no_rope_period == 1 || hp->g.rope_off ? ", no positions" : "");
        fprintf(out, "layers     %s%d of %d a Mamba-2 mixer (z, x, B, C, dt from one projection; x, B, C through a causal "
                "convolution of %d taps with its bias and SiLU; %d heads of %d in %d group%s of B and C, a state of %d per "
                "row, decayed by exp(softplus(dt + dt_bias) A); + D x; x SiLU(z)%s), %s%s\n",
                hp->desc->single_block ? "one block each: " : "", hp->n_recurrent, hp->n_layer, hp->dn_conv, hp->dn_hv,
                hp->m2_inner / hp->dn_hv, hp->dn_hk, hp->dn_hk == 1 ? "" : "s", hp->dn_d,
                norm ? ", RMS-normed per group" : "", rest, attn);
    } else if (hp->mamba1) { /* Mamba, Falcon-Mamba; Jamba between attention layers */
        char rest[160] = "nothing else";
        if (!hp->desc->attention_free)
            snprintf(rest, sizeof rest, "the others attention (%d kv heads of %d values, no positions); a feed-forward "
                     "block after each", hp->n_kv_head, hp->head_dim);
        fprintf(out, "layers     %s%d of %d a Mamba-1 mixer (x, z from one projection; x through a causal convolution "
                "of %d taps with its bias and SiLU; dt of rank %d, B and C from x%s; dt widened to the %d channels; a "
                "state of %d per channel, each value decayed by exp(softplus(dt + dt_bias) A) at its own rate; + D x; x "
                "SiLU(z)), %s\n", hp->desc->single_block ? "one block each: " : "", hp->n_recurrent, hp->n_layer,
                hp->dn_conv, hp->m1_dt_rank,
                hp->m1_dt_b_c_rms                  ? ", each RMS-normed without gains (ssm.dt_b_c_rms)"
                : hp->desc->need_recurrent[MODEL_ROLE_SSM_DT_NORM] ? ", each RMS-normed with its gains"
                                                                   : "",
                hp->m2_inner, hp->dn_d, rest);
    } else if (hp->desc->blocks_by_width) {
        print_pruned_layers(out, hp);
    } else if (hp->g.heads_layers && hp->desc->heads_by_layer) {
        print_layer_lists(out, hp);
    } else if (hp->g.kv_heads_layers || hp->g.ff_layers || hp->g.head_dim_k_swa || hp->g.n_rot_swa ||
               hp->desc->v_norm) {
        print_layer_shapes(out, hp);
    }
    const bool sinks = model_role_need(&hp->g, MODEL_ROLE_ATTN_SINKS) != MODEL_NEED_ABSENT;
    if (hp->swa_window > 0 || hp->g.attn_softcap > 0.0f || sinks) {
        int n_swa = 0;
        for (int il = 0; il < hp->n_layer; il++)
            n_swa += model_hparams_layer_is_swa(&hp->g, il);
        fprintf(out, "attention  ");
        char rot[48] = ""; /* (Laguna's, Step-3.5's: the sliding layers rotate a part of their own) */
        if (hp->rope_swa.n_rot != hp->rope.n_rot)
            snprintf(rot, sizeof rot, ", %d dims rotating", hp->rope_swa.n_rot);
        if (hp->swa_window > 0)
            fprintf(out, "%s of %d positions on %d of %d layers (rope base %g there%s%s); ",
                    hp->g.swa_chunked ? "chunks" : "sliding window", hp->swa_window, n_swa, hp->n_layer, hp->rope_swa.base,
                    hp->rope_swa.freq_scale == hp->rope.freq_scale && hp->rope_swa.ext_factor == hp->rope.ext_factor
                        ? ""
                        : ", unscaled",
                    rot);
        if (hp->g.attn_softcap_in > 0.0f) /* Grok's: the output scale inside the tanh */
            fprintf(out, "scores %g tanh(q.k * %g / %g) (the scale inside the soft-cap)", hp->g.attn_softcap,
                    hp->g.attn_softcap_in * hp->g.attn_softcap, hp->g.attn_softcap);
        else
            fprintf(out, "scores scaled by %g", hp->attn_scale);
        if (hp->g.attn_softcap > 0.0f && hp->g.attn_softcap_in <= 0.0f)
            fprintf(out, ", soft-capped at %g", hp->g.attn_softcap);
        if (sinks)
            fprintf(out, "; a sink logit per head in each softmax");
        fprintf(out, "\n");
    }
    if (hp->desc->attention_free) /* Mamba: the norm before each mixer and the final one */
        fprintf(out, "norm       RMSNorm eps %g%s\n", hp->eps, hp->eps_defaulted ? " (default)" : "");
    else
        fprintf(out, "norm       %s eps %g%s; q/k/v biases: %s; q/k norms: %s; post-norms: %s%s\n",
            !hp->norm_layer && hp->desc->norms_without_gains ? "RMSNorm without gains"
            : !hp->norm_layer                                ? "RMSNorm"
            : hp->desc->norms_without_gains ? "LayerNorm without gains or bias"
            : gguf_tensor_by_name(f, "blk.0.attn_norm.bias") ? "LayerNorm with bias"
                                                         : "LayerNorm (no bias)",
            hp->eps, hp->eps_defaulted ? " (default)" : "", hp->qkv_bias ? "yes" : "no",
            hp->g.qk_l2_norm ? "per head without gains, after the rotation (rotating layers)"
            : hp->desc->q_norm_head_gain ? "per head after the rotation, q times one gain a head, k without gains"
            : !hp->qk_norm   ? "no"
            : hp->qk_norm_full ? "yes, over whole rows"
                               : "yes, per head",
            hp->post_norms ? "yes" : "no",
            !hp->g.parallel                     ? ""
            : hp->desc->parallel_blocks_summed ? "; attention and feed-forward side by side on one norm ((attention + "
                                                 "ffn) + x)"
                                               : "; attention and feed-forward side by side on one norm (x + ffn + "
                                                 "attention)");
    static const char *const act_names[] = {
        [KERN_ACT_SILU] = "SwiGLU (SiLU gate)",
        [KERN_ACT_GELU_TANH] = "GeGLU (tanh-GELU gate, through llama.cpp's f16 table)",
        [KERN_ACT_SWIGLU_OAI] = "gpt-oss's clamped SwiGLU (gate <= 7, up in [-7, 7], x sigmoid(1.702 x) (up + 1))",
        [KERN_ACT_SIGMOID] = "sigmoid gate", [KERN_ACT_NONE] = "a product of two rows",
        [KERN_ACT_RELU] = "relu(x Wup)^2, no gate", [KERN_ACT_SOFTPLUS] = "softplus gate",
    };
    /* a block without a gate that is not relu^2 (StarCoder2's): the activation of up's row alone */
    const bool act_alone = hp->act == KERN_ACT_GELU_TANH && !hp->n_expert && !hp->act_squared &&
                           !hp->desc->need[MODEL_ROLE_FFN_GATE] && !hp->desc->gate_up_fused;
    char bias_name[64]; /* the first layer's up bias: the file's biases, where the entry allows them */
    snprintf(bias_name, sizeof bias_name, "blk.0.%s", model_role_info_of(MODEL_ROLE_FFN_UP_BIAS)->name);
    const char *b = gguf_tensor_by_name(f, bias_name) ? " + b" : "";
    char alone[224];
    if (act_alone)
        snprintf(alone, sizeof alone, "GELU(x Wup%s) Wdown%s, no gate (tanh-GELU through llama.cpp's f16 table)", b, b);
    else if (hp->act == KERN_ACT_RELU && !hp->n_expert && *b) /* Nemotron's squared ReLU with biases */
        snprintf(alone, sizeof alone, "relu(x Wup + b)^2 Wdown + b, no gate");
    else if (hp->act_xielu) /* Apertus's: the file's parameters (layer 0's where it lists one per layer) */
        snprintf(alone, sizeof alone, "xIELU(x Wup) Wdown, no gate (alpha_n %.4g, alpha_p %.4g, beta %.4g, eps %.4g%s)",
                 hp->g.xielu[0], hp->g.xielu[1], hp->g.xielu[2], hp->g.xielu[3],
                 hp->g.xielu_layers[0] || hp->g.xielu_layers[1] || hp->g.xielu_layers[2] || hp->g.xielu_layers[3]
                     ? " in layer 0; each layer its own"
                     : "");
    else
        snprintf(alone, sizeof alone, "%s",
                 hp->act == KERN_ACT_RELU && !hp->act_squared ? "ReGLU (ReLU gate)" : act_names[hp->act]);
    fprintf(out, "ffn        %s", hp->desc->attention_free ? "none" : alone);
    if (hp->n_expert > 0) {
        char bytes[32];
        gguf_format_size(engine_model_bytes_per_token(m), bytes, sizeof bytes);
        static const char *const gatings[] = { [MODEL_MOE_SOFTMAX] = "softmax",
                                               [MODEL_MOE_SOFTMAX_WEIGHT] = "the top logits, then their softmax",
                                               [MODEL_MOE_SIGMOID] = "sigmoid" };
        const engine_layer_kinds kinds = engine_model_layer_kinds(m);
        char scale[48] = "", shared[160] = "", dense[96] = "", groups[64] = "";
        if (hp->g.n_expert_groups > 1)
            snprintf(groups, sizeof groups, ", within the best %lld of %lld groups", (long long)hp->g.n_group_used,
                     (long long)hp->g.n_expert_groups);
        if (hp->moe_scale != 1.0f)
            snprintf(scale, sizeof scale, ", scaled by %g", hp->moe_scale);
        if (kinds.shared_experts)
            snprintf(shared, sizeof shared, " + a shared expert%s (%d wide)", kinds.shared_gate ? " with its gate" : "",
                     hp->n_ff_shexp);
        else if (hp->desc->moe_dense_beside) /* Gemma 4 26B-A4B */
            snprintf(shared, sizeof shared, ", beside the dense block (each normed apart, then added), routed on the "
                     "input normed and scaled by the router's gains, each expert's output scaled");
        else if (hp->desc->moe_dense_residual) /* Arctic */
            snprintf(shared, sizeof shared, " on the layer's input, beside the dense block (%d wide) on the "
                     "attention's output", hp->n_ff);
        else if (kinds.dense_beside) /* Grok-2 */
            snprintf(shared, sizeof shared, " + the dense block beside them (%d wide), the sum times sqrt(2)/2",
                     hp->n_ff);
        if (kinds.dense_layers && hp->desc->moe_step_layers && hp->g.n_moe_layer_step > 1)
            snprintf(dense, sizeof dense, "; experts on one layer in %lld (%d dense between)",
                     (long long)hp->g.n_moe_layer_step, kinds.dense_layers);
        else if (kinds.dense_layers && hp->desc->moe_where_router) /* Jamba */
            snprintf(dense, sizeof dense, "; dense on the %d layer%s without a router", kinds.dense_layers,
                     kinds.dense_layers == 1 ? "" : "s");
        else if (kinds.dense_layers)
            snprintf(dense, sizeof dense, "; %d dense layer%s first", kinds.dense_layers,
                     kinds.dense_layers == 1 ? "" : "s");
        fprintf(out, "; experts %d, %d used per token (%s%s%s%s%s), each %d wide%s%s%s; %s of weights read per token",
                hp->n_expert, hp->n_expert_used, gatings[hp->moe_gating], kinds.selection_bias ? ", a selection bias" : "",
                groups,
                hp->moe_gating == MODEL_MOE_SOFTMAX_WEIGHT ? ""
                : hp->moe_renormalise                       ? ", renormalised"
                : hp->desc->moe_weight_before ? ", chosen by the logits, the weight scaling the expert's input"
                                              : ", not renormalised",
                scale, hp->n_ff_exp, shared, kinds.expert_biases ? ", with biases" : "", dense, bytes);
        /* the SwiGLU limits (Maple's experts, Step-3.5's experts and shared expert) and their form */
        const char *form = hp->desc->swiglu_clamp_silu_first ? "SiLU(gate) at most it, up within +-it"
                                                             : "gate at most it, up within +-it";
        if (hp->g.swiglu_clamp_exp_layers)
            fprintf(out, "; the experts' SwiGLU limited by layer (swiglu_clamp_exp: %s)", form);
        else if (hp->g.swiglu_clamp_exp > 1e-6f)
            fprintf(out, "; the experts' SwiGLU limited to %g (swiglu_clamp_exp: %s)", hp->g.swiglu_clamp_exp, form);
        if (hp->g.swiglu_clamp_shexp_layers || hp->g.swiglu_clamp_shexp > 1e-6f)
            fprintf(out, "; the shared expert's and dense blocks' limited too (swiglu_clamp_shexp)");
        if (hp->g.n_layer_nextn)
            fprintf(out, "; %lld multi-token prediction block%s after them not run", (long long)hp->g.n_layer_nextn,
                    hp->g.n_layer_nextn == 1 ? "" : "s");
    }
    if (hp->embd_scale != 1.0f)
        fprintf(out, "; embeddings scaled by %g", hp->embd_scale);
    if (hp->desc->embd_skip)
        fprintf(out, "; embeddings RMS-normed, each layer's output plus them times its layer_output_scale");
    fprintf(out, "\n");
    fprintf(out, "output     %s", hp->tied_output ? "tied: logits use token_embd.weight (no output.weight)"
                                                   : "output.weight");
    if (model_role_need(&hp->g, MODEL_ROLE_OUTPUT_BIAS) != MODEL_NEED_ABSENT &&
        gguf_tensor_by_name(f, model_role_info_of(MODEL_ROLE_OUTPUT_BIAS)->name))
        fprintf(out, " plus output.bias");
    if (hp->logit_scale != 1.0f)
        fprintf(out, hp->g.logit_scale_first ? "; its input times %g" : "; logits times %g", hp->logit_scale);
    if (hp->final_softcap > 0.0f)
        fprintf(out, "; logits soft-capped at %g", hp->final_softcap);
    const engine_scale_summary sc = engine_model_scales(m);
    if (sc.output_scale != 0.0f) /* (NVFP4's second scale of the output) */
        fprintf(out, "; its product times output.scale %g", (double)sc.output_scale);
    fprintf(out, "\n");
    if (sc.applied || sc.unread) {
        fprintf(out, "scales     per-tensor: %d applied", sc.applied);
        if (sc.applied_on[0])
            fprintf(out, " (%s)", sc.applied_on);
        if (sc.unread)
            fprintf(out, "; %d left unread as llama.cpp's %s graph leaves them", sc.unread, hp->arch);
        if (sc.unread_on[0])
            fprintf(out, " (%s%s)", sc.unread_on, sc.inputs ? ", and input scales" : "");
        else if (sc.inputs)
            fprintf(out, " (input scales)");
        fprintf(out, "\n");
    }
    int32_t nt = tok_vocab_size(v), nr = tok_vocab_n_real(v);
    fprintf(out, "vocab      %s (%s), %d tokens", tok_vocab_model(v), tok_vocab_pre(v), nt);
    if (hp->n_vocab != nt || nr != nt)
        fprintf(out, ", embedding rows %d, real tokens %d (padding %d)", hp->n_vocab, nr, hp->n_vocab - nr);
    fprintf(out, "; BOS %s\n", tok_vocab_add_bos(v) ? "added" : "not added");
    const kern_backend *be = engine_model_backend(m);
    if (be->device)
        fprintf(out, "run        %s backend on %s, context %d, %s\n", o->backend, be->device, n_ctx,
                o->sampler.temp > 0.0f ? "sampling" : "greedy");
    else
        fprintf(out, "run        %s backend, %d threads, SIMD %s, context %d, %s\n", o->backend, o->n_threads,
                quant_simd_level(), n_ctx, o->sampler.temp > 0.0f ? "sampling" : "greedy");
    if (o->fault)
        fprintf(out, "DEBUG      fault '%s' injected on purpose: results are wrong by design\n", o->fault);
    if (o->spot_rows > 0)
        fprintf(out, "check      lm_head spot check: %d rows recomputed on the CPU after every forward pass\n",
                o->spot_rows);
}

/* Prompt and generation tokens/s. The first generated token comes from the
 * prompt's pass, so generation counts the tokens fed back. */
void run_rates(const run_result *r, double *pps, double *gps)
{
    const engine_gen_result *g = &r->gen;
    size_t n_steps = g->n_tokens > 1 ? g->n_tokens - 1 : 0;
    *pps = g->prompt_seconds > 0 ? r->n_prompt / g->prompt_seconds : 0;
    *gps = g->gen_seconds > 0 && n_steps ? n_steps / g->gen_seconds : 0;
}

/* The smoke verdict's line as the exit status reads it: without --smoke its failures are warnings, and the line
 * says so instead of "FAIL" beside exit 0. */
const char *run_verdict_line(const run_result *r, char *buf, size_t len)
{
    const engine_verdict *v = &r->verdict;
    if (v->ok || r->o->smoke || strncmp(v->summary, "FAIL:", 5) != 0)
        return v->summary;
    snprintf(buf, len, "WARNING (not failed without --smoke):%s", v->summary + 5);
    return buf;
}

void run_print_summary(FILE *out, const run_result *r)
{
    const engine_gen_result *g = &r->gen;
    double pps, gps;
    run_rates(r, &pps, &gps);
    fprintf(out, "\nprompt     %zu tokens in %.3f s: %.1f tokens/s\n", r->n_prompt, g->prompt_seconds, pps);
    fprintf(out, "generation %zu tokens in %.3f s: %.2f tokens/s, %.2f GB/s of weights%s\n", g->n_tokens,
            g->gen_seconds, gps, gps * r->bytes_per_token / 1e9, g->stopped_at_eog ? " (stopped at end of text)" : "");
    fprintf(out, "memory     %.1f MiB private (estimated %.1f MiB for the %d positions used, %.1f MiB with all %d; "
            "KV cache and activations %.1f MiB allocated); weights stay in the mapping\n", r->private_bytes / 1048576.0,
            r->expected_bytes / 1048576.0, r->positions, r->expected_full_bytes / 1048576.0, r->n_ctx,
            r->ctx_bytes / 1048576.0);
    const engine_spot *sp = &g->spot;
    if (sp->checks && !sp->mismatches)
        fprintf(out, "spot check %d lm_head rows over %d forward passes match the CPU (largest difference %.2g of max |logit|)\n",
                sp->rows, sp->checks, sp->max_rel);
    else if (sp->mismatches) {
        fprintf(out, "spot check FAILED: %d of %d lm_head rows differ from the CPU's recomputation; rows", sp->mismatches,
                sp->rows);
        for (int i = 0; i < sp->n_bad; i++)
            fprintf(out, "%s %d", i ? "," : "", sp->bad_rows[i]);
        fprintf(out, "%s\n           first at position %d, row %d: backend %.6g, CPU %.6g\n",
                sp->n_bad == (int)(sizeof sp->bad_rows / sizeof sp->bad_rows[0]) ? ", ..." : "", sp->first_pos,
                sp->first_row, sp->first_backend, sp->first_reference);
    }
    fputs("verdict    ", out);
    char line[sizeof r->verdict.summary + 48];
    color_on(out, r->verdict.ok ? COLOR_GOOD : r->o->smoke ? COLOR_BAD : COLOR_UNSURE);
    fputs(run_verdict_line(r, line, sizeof line), out);
    color_off(out);
    fputc('\n', out);
    for (int i = 0; i < r->verdict.n_findings; i++)
        fprintf(out, "  %-13s %s\n", engine_symptom_name(r->verdict.findings[i].symptom),
                r->verdict.findings[i].message);
    for (int i = 0; i < r->verdict.n_notes; i++)
        fprintf(out, "  note          %s\n", r->verdict.notes[i].message);
}

static void layer_label(const run_result *r, int il, char *buf, size_t n)
{
    if (il == engine_trace_layers(r->trace) - 1)
        snprintf(buf, n, "norm");
    else
        snprintf(buf, n, "%d", il);
}

static int32_t token_at(const run_result *r, int pos)
{
    if (pos < (int)r->n_prompt)
        return r->prompt[pos];
    size_t g = (size_t)pos - r->n_prompt;
    return g < r->gen.n_tokens ? r->gen.tokens[g] : -1;
}

void run_print_trace(FILE *out, const run_result *r)
{
    const engine_trace *t = r->trace;
    fprintf(out, "\ntrace: residual stream after each layer (llama.cpp's l_out) and the final norm output\n");
    fprintf(out, "%5s %5s  %-18s %11s %11s %11s %11s %11s\n", "layer", "pos", "token", "rms", "mean", "min", "max",
            "max|x|");
    for (int il = 0; il < engine_trace_layers(t); il++)
        for (int p = 0; p < engine_trace_positions(t); p++) {
            const kern_row_stats *s = engine_trace_at(t, il, p);
            char ln[16], tok[64];
            layer_label(r, il, ln, sizeof ln);
            run_token_label(r->vocab, token_at(r, p), tok, sizeof tok);
            fprintf(out, "%5s %5d  %-18s %11.5g %11.4g %11.5g %11.5g %11.5g%s\n", ln, p, tok, s->rms, s->mean, s->min,
                    s->max, s->max_abs, s->n_nan || s->n_inf ? "  NaN/Inf!" : "");
        }
    fprintf(out, "\nsteps: each generated token, the top-5 candidates (logit), top-1/top-2 margin, entropy (nats)\n");
    fprintf(out, "%4s %5s  %-60s %8s %8s\n", "step", "pos", "top-5", "margin", "entropy");
    for (size_t i = 0; i < engine_trace_n_steps(t); i++) {
        const engine_step *s = engine_trace_step_at(t, i);
        char line[512];
        size_t at = 0;
        for (int k = 0; k < 5 && s->top_id[k] >= 0 && at < sizeof line; k++) {
            char tok[64];
            run_token_label(r->vocab, s->top_id[k], tok, sizeof tok);
            at += (size_t)snprintf(line + at, sizeof line - at, "%s%s %.3f", k ? " | " : "", tok, s->top_logit[k]);
        }
        fprintf(out, "%4zu %5d  %-60s %8.3f %8.3f\n", i, s->pos, line, s->margin, s->entropy);
    }
}
