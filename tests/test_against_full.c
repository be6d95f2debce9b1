/*
 * Diffing engines whole: gguf-run --against DUMP (an .npz, .safetensors or folder of .npy: llama.cpp's cb_eval
 * names per op, transformers' hidden_states) and --trace-full, held to our own dumps, to the numpy reference with
 * ten bugs edited in (each named at its layer, op and position) and in transformers' convention on the dense four,
 * and scripts/hf-trace.py's writing half.
 */
#include "suite_helpers.h"
#include "testutil.h"

#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char tmp_dir[64];
static void setup(void) { cr_assert(tmp_dir_make(tmp_dir, "against-full")); }
static void teardown(void) { cr_assert(tmp_dir_remove(tmp_dir)); }
TestSuite(against_full, .init = setup, .fini = teardown, .timeout = 480); /* generous: a loaded 2-core CI machine */

/* Whole tensors: our --trace-full as numpy reads it (names, shapes, the values of --trace's statistics), held
 * against ourselves as .npz and .safetensors; the numpy reference's hidden_states as transformers stacks them
 * (float32, then float16 with its rounding allowed) agree. */
Test(against_full, whole_tensors_round_trip_and_agree)
{
    char *m = need_model("stories260K.gguf");
    char npz[128], st_path[128], args[4096];
    int st;
    snprintf(npz, sizeof npz, "%s/ours.npz", tmp_dir);
    snprintf(st_path, sizeof st_path, "%s/ours.safetensors", tmp_dir);
    for (int i = 0; i < 2; i++) {
        const char *f = i ? st_path : npz;
        snprintf(args, sizeof args, "'%s' -p 'Once upon a time' -n 0 --trace-full='%s' -q 2>&1", m, f);
        char *out = run_tool("gguf-run", args, &st);
        cr_assert_eq(st, 0, "%s", out);
        free(out);
        snprintf(args, sizeof args, "'%s' -p 'Once upon a time' --against '%s' -q 2>/dev/null", m, f);
        out = run_tool("gguf-run", args, &st);
        cr_expect_eq(st, 0, "%s", out);
        cr_expect(strstr(out, "6 arrays of 5 x 64") && strstr(out, "verdict    AGREE: every layer, value by value"),
                  "%s", out);
        free(out);
    }
    /* numpy reads ours: l_out-0..4 and result_norm, 5 x 64 float32 */
    snprintf(args, sizeof args, "'%s' -c \"import numpy as np; d = np.load('%s'); print(sorted(d.keys()), "
             "d['l_out-2'].shape, d['l_out-2'].dtype)\" 2>&1", venv_python(), npz);
    char *out = run_capture(args, &st);
    cr_expect_str_eq(out, "['l_out-0', 'l_out-1', 'l_out-2', 'l_out-3', 'l_out-4', 'result_norm'] (5, 64) float32\n");
    free(out);
    need_reference();
    char full[128], json[128];
    snprintf(full, sizeof full, "%s/hf.npz", tmp_dir);
    snprintf(json, sizeof json, "%s/hf.json", tmp_dir);
    snprintf(args, sizeof args, "'%s' tests/py/reference_trace.py '%s' '%s' 1 403 407 261 378 --full '%s' 2>&1 && "
             "'%s' -c \"import numpy as np; d = np.load('%s'); np.savez_compressed('%s', "
             "hidden_states=d['hidden_states'].astype(np.float16))\" 2>&1", venv_python(), m, json, full,
             venv_python(), full, npz);
    out = run_capture(args, &st);
    cr_assert_eq(st, 0, "%s", out);
    free(out);
    for (int i = 0; i < 2; i++) {
        snprintf(args, sizeof args, "'%s' -p 'Once upon a time' --against '%s' -q 2>/dev/null", m, i ? npz : full);
        out = run_tool("gguf-run", args, &st);
        cr_expect_eq(st, 0, "%s", out);
        cr_expect(strstr(out, "numbered as transformers' hidden_states") && strstr(out, "verdict    AGREE"), "%s",
                  out);
        if (i)
            cr_expect(strstr(out, "stored as float16 or bfloat16"), "%s", out);
        free(out);
    }
    free(m);
}

/* Ten bugs edited into the numpy reference (tests/py/reference_trace.py BUGS), dumped whole two ways: as
 * transformers' hidden_states, each named at the layer (or the embeddings, entry 0) and prompt position where it
 * first shows; and per op under llama.cpp's cb_eval names, each named at its layer, op and position. transformers'
 * stack has no entry for the last layer's output (its last entry is after the final norm), so a bug there shows at
 * the final norm; per op it is named in its layer. Two of them are what the statistics cannot place: channels
 * swapped after layer 2 (the statistics blame layer 3; per op: layer 2's ops agree, its output does not) and one
 * bad block of layer 3's ffn_down. The op shows a bug where it is made: q scaled departs at position 0, its
 * attention only from position 1 (one key at position 0). */
Test(against_full, whole_tensors_name_each_bug_where_it_first_shows)
{
    char *m = need_model("stories260K.gguf");
    need_reference();
    static const struct {
        const char *bug, *layer, *op;
        int layer_pos, op_pos;
    } bugs[] = {
        { "channel-swap", "layer 2", "layer 2, op l_out", 0, 0 },
        { "bad-block", "layer 3", "layer 3, op ffn_out", 0, 0 },
        { "no-causal-mask", "layer 0", "layer 0, op attn", 0, 0 },
        { "embedding-row", "the token embeddings", "the token embeddings", 1, 1 },
        { "q-scale", "layer 2", "layer 2, op q", 1, 0 },
        { "gate-up-swapped", "layer 1", "layer 1, op ffn_out", 0, 0 },
        { "norm-scaled", "the final norm", "layer 4, op attn_norm", 0, 0 },
        { "v-scaled", "layer 2", "layer 2, op v", 0, 0 },
        { "output-norm", "the final norm", "the final norm", 0, 0 },
        { "eps", "layer 0", "layer 0, op attn_norm", 0, 0 },
    };
    char full[128], ops[128], json[128], args[4096], want[96];
    snprintf(full, sizeof full, "%s/bug.npz", tmp_dir);
    snprintf(ops, sizeof ops, "%s/bug-ops.npz", tmp_dir);
    snprintf(json, sizeof json, "%s/bug.json", tmp_dir);
    for (size_t i = 0; i < sizeof bugs / sizeof bugs[0]; i++) {
        int st;
        snprintf(args, sizeof args, "'%s' tests/py/reference_trace.py '%s' '%s' 1 403 407 261 378 --full '%s' "
                 "--ops '%s' --bug %s 2>&1", venv_python(), m, json, full, ops, bugs[i].bug);
        char *out = run_capture(args, &st);
        cr_assert_eq(st, 0, "%s: %s", bugs[i].bug, out);
        free(out);
        for (int per_op = 0; per_op < 2; per_op++) {
            snprintf(args, sizeof args, "'%s' -p 'Once upon a time' --against '%s' -q 2>/dev/null", m,
                     per_op ? ops : full);
            out = run_tool("gguf-run", args, &st);
            snprintf(want, sizeof want, "verdict    DEPART: theirs departs first at %s, prompt position %d,",
                     per_op ? bugs[i].op : bugs[i].layer, per_op ? bugs[i].op_pos : bugs[i].layer_pos);
            cr_expect_eq(st, 1, "%s: %s", bugs[i].bug, out);
            cr_expect(strstr(out, want), "%s: want '%s' in\n%s", bugs[i].bug, want, out);
            free(out);
        }
    }
    free(m);
}

/* scripts/hf-trace.py's writing half (write_outputs: numpy only), fed the numpy reference's hidden states as
 * transformers orders them and llama.cpp's prompt logits: its JSON, .npz and logits read by --against as they are,
 * the numbering said, one AGREE over all three. */
Test(against_full, the_transformers_script_writes_what_against_reads)
{
    char *m = need_model("stories260K.gguf"), *npy = generate_golden("stories260K.p0.prompt_logits.npy");
    need_reference();
    char cmd[8192], full[128], json[128], npz[128], hjson[128], logits[128];
    snprintf(full, sizeof full, "%s/ref.npz", tmp_dir);
    snprintf(json, sizeof json, "%s/ref.json", tmp_dir);
    snprintf(npz, sizeof npz, "%s/hf.npz", tmp_dir);
    snprintf(hjson, sizeof hjson, "%s/hf.json", tmp_dir);
    snprintf(logits, sizeof logits, "%s/hf-logits.npy", tmp_dir);
    snprintf(cmd, sizeof cmd,
             "'%s' tests/py/reference_trace.py '%s' '%s' 1 403 407 261 378 --full '%s' 2>&1 && '%s' -c \"import "
             "importlib.util as u, numpy as np; s = u.spec_from_file_location('h', 'scripts/hf-trace.py'); h = "
             "u.module_from_spec(s); s.loader.exec_module(h); hs = np.load('%s')['hidden_states']; "
             "h.write_outputs(list(hs), [1, 403, 407, 261, 378], 'Once upon a time', '%s', '%s', np.load('%s'), '%s')\" "
             "2>&1", venv_python(), m, json, full, venv_python(), full, npz, hjson, npy, logits);
    int st;
    char *out = run_capture(cmd, &st);
    cr_assert_eq(st, 0, "%s", out);
    free(out);
    for (int i = 0; i < 2; i++) { /* the statistics, then the tensors whole */
        snprintf(cmd, sizeof cmd, "'%s' -p 'Once upon a time' --against '%s' --against-logits '%s' -n 0 -q 2>/dev/null",
                 m, i ? npz : hjson, logits);
        out = run_tool("gguf-run", cmd, &st);
        cr_expect_eq(st, 0, "%s", out);
        cr_expect(strstr(out, i ? "numbered as transformers' hidden_states" : "transformers' hidden_states as they come"),
                  "%s", out);
        cr_expect(strstr(out, "verdict    AGREE") && strstr(out, "the logits agree"), "%s", out);
        free(out);
    }
    free(m), free(npy);
}

/* A clean engine in transformers' convention agrees with the default options on each of the dense four: the numpy
 * reference (float64) dumped as transformers' hidden_states (statistics and whole, the embeddings included) and per
 * op under llama.cpp's names (inp_embd before gemma's scale), for the shared llama, qwen2 and qwen3 files and a
 * gemma3 written here by gguf-mkfixture. */
Test(against_full, the_numpy_reference_in_transformers_convention_agrees_on_every_architecture)
{
    need_reference();
    char g3[128], mk[1024];
    snprintf(g3, sizeof g3, "%s/gemma3.gguf", tmp_dir);
    snprintf(mk, sizeof mk, "'%s' --arch gemma3 --layers 4 --embd 128 --ff 256 --vocab 300", g3);
    int st;
    free(run_tool("gguf-mkfixture", mk, &st));
    cr_assert_eq(st, 0);
    char *models[4] = { need_model("tiny-llama-f32.gguf"), need_model("tiny-qwen2-f32.gguf"),
                        need_model("tiny-qwen3-f32.gguf"), strdup(g3) };
    for (int i = 0; i < 4; i++) {
        char args[4096], json[128], npz[128], ops[128];
        snprintf(json, sizeof json, "%s/hf.json", tmp_dir);
        snprintf(npz, sizeof npz, "%s/hf.npz", tmp_dir);
        snprintf(ops, sizeof ops, "%s/ops.npz", tmp_dir);
        /* their tokens are ours (the tokenizer is not what is compared here) */
        snprintf(args, sizeof args, "'%s' -p 'Hello world the cat' --tokenize", models[i]);
        char *ids = run_tool("gguf-run", args, &st);
        cJSON *doc = cJSON_Parse(ids);
        const cJSON *tokens = cJSON_IsArray(doc) ? doc : cJSON_GetObjectItem(doc, "tokens");
        cr_assert(cJSON_IsArray(tokens), "%s", ids);
        char list[1024] = "";
        const cJSON *t;
        cJSON_ArrayForEach(t, tokens)
            snprintf(list + strlen(list), sizeof list - strlen(list), " %d", t->valueint);
        cJSON_Delete(doc);
        free(ids);
        snprintf(args, sizeof args, "'%s' tests/py/reference_trace.py '%s' '%s'%s --convention hf --full '%s' "
                 "--ops '%s' 2>&1", venv_python(), models[i], json, list, npz, ops);
        char *out = run_capture(args, &st);
        cr_assert_eq(st, 0, "%s: %s", models[i], out);
        free(out);
        for (int k = 0; k < 3; k++) {
            snprintf(args, sizeof args, "'%s' -p 'Hello world the cat' --against '%s' -n 0 -q 2>/dev/null", models[i],
                     k == 2 ? ops : k ? npz : json);
            out = run_tool("gguf-run", args, &st);
            cr_expect_eq(st, 0, "%s: %s", models[i], out);
            cr_expect(strstr(out, "verdict    AGREE"), "%s: %s", models[i], out);
            free(out);
        }
        free(models[i]);
    }
}

/* Per op: a dump with llama.cpp's op names (ours, --trace-full-ops, here with a bug-zoo fault in it) names the
 * first op that differs inside the first layer that does, and the position where it first shows. */
Test(against_full, whole_tensors_per_op_name_the_first_differing_op)
{
    char *m = need_model("stories260K.gguf");
    static const struct {
        const char *fault, *says;
    } cases[] = {
        { "norm-skip", "layer 0, op attn_norm, prompt position 0," },
        { "rope-mode", "layer 0, op q, prompt position 1," },
        { "attn-scale", "layer 0, op attn, prompt position 1," },
        { "gqa-map", "layer 0, op attn, prompt position 0," },
        { "residual-twice", "layer 0, op ffn_norm, prompt position 0," },
    };
    char npz[128], args[4096];
    snprintf(npz, sizeof npz, "%s/ops.npz", tmp_dir);
    int st;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(args, sizeof args, "'%s' -p 'Once upon a time' -n 0 --debug-fault %s --trace-full='%s' "
                 "--trace-full-ops -q >/dev/null 2>&1", m, cases[i].fault, npz);
        free(run_tool("gguf-run", args, &st));
        cr_assert_eq(st, 0, "%s", cases[i].fault);
        snprintf(args, sizeof args, "'%s' -p 'Once upon a time' -n 0 --against '%s' -q 2>/dev/null", m, npz);
        char *out = run_tool("gguf-run", args, &st);
        cr_expect_eq(st, 1, "%s: %s", cases[i].fault, out);
        cr_expect(strstr(out, cases[i].says), "%s: want '%s' in\n%s", cases[i].fault, cases[i].says, out);
        free(out);
    }
    /* without a fault: every op agrees, 47 arrays (the embeddings, 9 per layer and the final norm) */
    snprintf(args, sizeof args, "'%s' -p 'Once upon a time' -n 0 --trace-full='%s' --trace-full-ops -q >/dev/null 2>&1",
             m, npz);
    free(run_tool("gguf-run", args, &st));
    snprintf(args, sizeof args, "'%s' -p 'Once upon a time' -n 0 --against '%s' -q 2>/dev/null", m, npz);
    char *out = run_tool("gguf-run", args, &st);
    cr_expect_eq(st, 0, "%s", out);
    cr_expect(strstr(out, "47 arrays") && strstr(out, "verdict    AGREE"), "%s", out);
    free(out);
    free(m);
}
